"""Monner's (2011) peephole LSTM: `settings.py` holds its architecture and learning rules, `nets.py` the
network and LSTM-g's local learning rule, `model.py` the registered `lstm-g` and `lstm-bptt` transducers.
"""

"""Monner's (2011) peephole LSTM: `nets.py` holds the network and LSTM-g's local learning rule,
`model.py` the registered `lstm-g` and `lstm-bptt` transducers.
"""

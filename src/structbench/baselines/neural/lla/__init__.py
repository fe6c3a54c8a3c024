"""Thrush's LLA-LSTM: `settings.py` holds its settings, `nets.py` its network (Lexicon and
Lexicon-Adversary units), `model.py` the registered `lla-lstm`, `lla-lstm-noadv` and `lstm-thrush`.
"""

"""Thrush's LLA-LSTM: `nets.py` holds its settings and network (Lexicon and Lexicon-Adversary units),
`model.py` the registered `lla-lstm`, `lla-lstm-noadv` and `lstm-thrush`.
"""

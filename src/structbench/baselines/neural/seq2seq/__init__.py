"""Recurrent encoder-decoders (SRN, GRU, LSTM; with or without attention) and Attentive Guidance.

`nets.py` holds the settings and the torch network, `model.py` the registered models (`seq2seq`, its
per-paper presets, `attentive-guidance` and its oracle).
"""

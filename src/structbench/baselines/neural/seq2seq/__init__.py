"""Recurrent encoder-decoders (SRN, GRU, LSTM; with or without attention) and Attentive Guidance.

`settings.py` holds the settings, `nets.py` the torch network, `model.py` the registered models
(`seq2seq`, its per-paper presets, `attentive-guidance` and its oracle).
"""

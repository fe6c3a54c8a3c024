"""Tran's (2018, ch. 5) classifiers, number prediction and natural-logic inference.

`batching.py` turns labelled inputs into padded batches, `nets.py` holds the settings and the
LSTM, FAN and bag-of-words networks, `model.py` the harness side (`NeuralClassifier`) and the
registered `lstm-number`, `fan-number`, `lstm-logic`, `fan-logic` and `bow-logic`.
"""

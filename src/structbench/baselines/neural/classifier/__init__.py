"""Tran's (2018, ch. 5) classifiers, number prediction and natural-logic inference.

`batching.py` turns labelled inputs into padded batches, `settings.py` holds the settings, `nets.py`
the LSTM, FAN and bag-of-words networks, `training.py` the training loop and the dev evaluation,
`model.py` the harness side (`NeuralClassifier`) and the registered `lstm-number`, `fan-number`,
`lstm-logic`, `fan-logic` and `bow-logic`.
"""

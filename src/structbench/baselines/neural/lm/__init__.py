"""Word-level neural language models: `settings.py` holds the LSTM and FAN architectures, `nets.py`
their networks, `scoring.py` the batched log-probabilities, `model.py` the harness side every neural LM
shares (`NeuralLanguageModel`: training, sentence scoring) and the registered `lstm-lm` and `fan-lm`.
"""

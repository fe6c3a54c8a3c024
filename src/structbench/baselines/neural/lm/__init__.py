"""Word-level neural language models: `nets.py` holds the LSTM and FAN networks, `model.py` the
harness side every neural LM shares (`NeuralLanguageModel`: training, sentence scoring) and the
registered `lstm-lm` and `fan-lm`.
"""

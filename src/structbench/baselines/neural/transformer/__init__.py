"""The encoder-decoder Transformer: `settings.py` holds its settings, `nets.py` its network (and the
sinusoidal positions other families reuse), `model.py` the registered `transformer`.
"""

"""The encoder-decoder Transformer: `nets.py` holds its settings and network (and the sinusoidal
positions other families reuse), `model.py` the registered `transformer`.
"""

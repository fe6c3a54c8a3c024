"""Korrel's Seq2Attn: `nets.py` holds its settings and network, `model.py` the registered `seq2attn`."""

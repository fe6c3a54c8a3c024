"""Korrel's Seq2Attn: `settings.py` holds its settings, `nets.py` its network, `model.py` the registered `seq2attn`."""

"""Tran's Recurrent Memory Network: `nets.py` holds its architecture and network, `model.py` the
registered `rmn`, trained and scored as every neural LM (`structbench.baselines.neural.lm`).
"""

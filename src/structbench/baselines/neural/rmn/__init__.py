"""Tran's Recurrent Memory Network: `settings.py` holds its architecture, `nets.py` its network,
`model.py` the registered `rmn`, trained and scored as every neural LM (`structbench.baselines.neural.lm`).
"""

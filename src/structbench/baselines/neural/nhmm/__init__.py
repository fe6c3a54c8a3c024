"""Tran's neural HMM for unsupervised tag induction: `settings.py` holds its architecture, `nets.py`
the emission and transition networks and exact inference, `model.py` the registered `nhmm`.
"""

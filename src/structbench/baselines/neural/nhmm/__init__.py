"""Tran's neural HMM for unsupervised tag induction: `nets.py` holds the emission and transition
networks and exact inference, `model.py` the registered `nhmm`.
"""

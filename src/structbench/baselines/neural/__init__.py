"""Neural reference baselines (torch): transducers, classifiers, language models and a neural HMM.

Every model here is built from a recipe (`recipes/MODEL/TASK.yaml`: the paper's hyper-parameters
under `paper`, a laptop budget under `cpu-small`) and trained on CPU or CUDA. The shared parts sit
at this level: settings and recipes (`settings.py`), the harness side every model shares (`run.py`:
identity, threads, checkpoint save and reload; `adapter.py`: the transducers'), the one training
loop and its `History` (`fit.py`), the transducers' loss and decoding (`trainer.py`, `net.py`),
batching, vocabularies, checkpoints and devices. Each family has a folder with `nets.py` (its
settings and torch modules) and `model.py` (the registered model classes): `seq2seq`,
`transformer`, `seq2attn`, `lla`, `classifier`, `lm`, `rmn`, `lstm_g` and `nhmm`.
"""

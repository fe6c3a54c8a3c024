"""Neural reference baselines (torch): transducers, classifiers, language models and a neural HMM.

Every model here is built from a recipe (`recipes/MODEL/TASK.yaml`: the paper's hyper-parameters
under `paper`, a laptop budget under `cpu-small`) and trained on CPU or CUDA. The shared parts sit
at this level: settings and recipes (`settings.py`); the base class of every model, `NeuralModel`
(`model.py`: identity, threads, checkpoint save and reload, compute); the base of the transducers,
`NeuralTransducer` (`transducer.py`: recipe to trained weights to decoded outputs); the one training
loop and its `History` (`fit.py`); the transducers' loss and decoding (`trainer.py`, `net.py`);
batching, vocabularies and checkpoints. Devices and seeding are the engine's (`structbench.devices`,
`structbench.seeding`), shared with the Hugging Face adapters and the runner. Each family has a
folder with `nets.py` (its settings and torch modules) and `model.py` (the registered model classes):
`seq2seq`, `transformer`, `seq2attn`, `lla`, `classifier`, `lm`, `rmn`, `lstm_g` and `nhmm`.
"""

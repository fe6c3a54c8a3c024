"""Neural reference baselines (torch): seq2seq RNNs, Transformer, Attentive Guidance, Seq2Attn, LLA-LSTM.

Every model here is a `harness` transducer built from a recipe (`recipes/MODEL/TASK.yaml`:
the paper's hyper-parameters under `paper`, a laptop budget under `cpu-small`), trained by
one shared trainer (`trainer.py`) on padded, masked batches, on CPU or CUDA.
"""

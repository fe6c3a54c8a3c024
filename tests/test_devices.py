"""`structbench.devices`: one `device` rule for the neural baselines and the Hugging Face adapters."""

from __future__ import annotations

import pytest
import torch
from pydantic import ValidationError

from structbench.baselines.neural.nhmm.model import NhmmSettings
from structbench.baselines.neural.settings import NeuralSettings
from structbench.devices import device_problem, resolve_device
from structbench.errors import UserError
from structbench.runs.settings import check_settings
from structbench.specs import ModelSpec

REFUSED = ["gpu", "mps", "CPU", "cuda:", "cuda:-1", "cuda:0:1", "cuda 0", " cpu", "", "meta"]


def test_cpu_and_auto_resolve_on_any_machine() -> None:
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto") == torch.device("cuda" if torch.cuda.is_available() else "cpu")


@pytest.mark.parametrize("name", REFUSED)
def test_anything_else_is_one_sentence_naming_what_is_accepted(name: str) -> None:
    sentence = f"device={name!r} is not one of cpu, auto, cuda, cuda:N (N a GPU's index); use e.g. --set device=cpu."
    assert device_problem(name) == sentence
    with pytest.raises(UserError) as raised:
        resolve_device(name)
    assert str(raised.value) == sentence


def test_a_gpu_torch_does_not_see_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    for name in ("cuda", "cuda:0"):
        with pytest.raises(UserError, match=f"device={name} was asked for but torch sees no CUDA GPU"):
            resolve_device(name)
    assert resolve_device("auto") == torch.device("cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert resolve_device("cuda") == torch.device("cuda")
    assert resolve_device("cuda:1") == torch.device("cuda", 1)
    assert resolve_device("auto") == torch.device("cuda")
    with pytest.raises(UserError, match=r"torch sees 2 CUDA GPUs \(cuda:0 to cuda:1\)"):
        resolve_device("cuda:2")


def test_every_model_with_a_device_setting_accepts_the_same_names_before_any_data_is_built() -> None:
    for name in ("cpu", "auto", "cuda", "cuda:3"):
        assert NeuralSettings(device=name).device == name
        assert NhmmSettings(device=name).device == name
        check_settings(ModelSpec(name="hf", params={"pretrained": "gpt2", "device": name}))
    for settings in (NeuralSettings, NhmmSettings):
        with pytest.raises(ValidationError, match="device='mps' is not one of cpu, auto, cuda, cuda:N"):
            settings(device="mps")
    with pytest.raises(UserError, match="device='mps' is not one of cpu, auto, cuda, cuda:N"):
        check_settings(ModelSpec(name="hf-seq2seq", params={"pretrained": "t5", "device": "mps"}))

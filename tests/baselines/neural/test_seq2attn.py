"""Seq2Attn (Korrel 2018 ch. 6): each component's switch, hard attention, masking and the paper's ordering."""

from __future__ import annotations

import itertools

import pytest
import torch

from structbench.baselines.neural.batching import make_batch
from structbench.baselines.neural.seq2attn.model import Seq2Attn
from structbench.baselines.neural.seq2attn.nets import Seq2AttnNet
from structbench.baselines.neural.seq2attn.settings import Seq2AttnSettings
from structbench.baselines.neural.vocab import Vocabulary
from structbench.errors import UserError
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec

SWITCHES = ("transcoder", "full_context", "embedding_values", "gumbel")
SOURCE = Vocabulary(["a", "b", "c", "."])
TARGET = Vocabulary(["X", "Y"])


def net(**switches: bool | str | float) -> Seq2AttnNet:
    settings = Seq2AttnSettings(embedding=16, hidden=16, dropout=0.0, **switches)  # type: ignore[arg-type]
    torch.manual_seed(0)
    return Seq2AttnNet(settings, len(SOURCE), len(TARGET))


def every_combination() -> list[dict[str, bool]]:
    return [dict(zip(SWITCHES, values, strict=True)) for values in itertools.product((False, True), repeat=4)]


@pytest.mark.parametrize(
    "switches", every_combination(), ids=lambda s: "".join(k[0].upper() for k in s if s[k]) or "base"
)
def test_padding_changes_nothing_and_gets_no_attention(switches: dict[str, bool]) -> None:
    model = net(**switches).eval()
    short, long = ["a", "b", "."], ["c", "c", "a", "b", "a", "."]
    alone = make_batch([short], SOURCE, [["X", "Y"]], TARGET)
    padded = make_batch([short, long], SOURCE, [["X", "Y"], ["Y", "Y", "X", "X"]], TARGET)
    with torch.no_grad():
        out_alone, out_padded = model(alone, True), model(padded, True)
        assert torch.allclose(out_alone.logits[0], out_padded.logits[0, :3], atol=1e-5)
        assert out_padded.attention is not None
        assert float(out_padded.attention[0, :, len(short) :].abs().sum()) == 0.0
        decoded = model.decode(alone, 10)[0]
        assert torch.equal(decoded, model.decode(padded, 10)[0, : decoded.shape[0]])


def test_gumbel_attention_is_one_hot_forward_yet_trains_the_scorer() -> None:
    model = net(gumbel=True).train()
    batch = make_batch([["a", "b", "."], ["c", "."]], SOURCE, [["X", "Y"], ["Y"]], TARGET)
    output = model(batch, True)
    assert output.attention is not None
    attended = output.attention[batch.source_mask.unsqueeze(1).expand_as(output.attention)]
    assert set(attended.detach().round(decimals=5).tolist()) <= {0.0, 1.0}
    assert torch.allclose(output.attention.sum(-1), torch.ones(2, 3))
    output.logits.sum().backward()
    assert model.vector.weight.grad is not None and float(model.vector.weight.grad.abs().sum()) > 0.0


def test_embedding_values_make_the_context_an_input_embedding() -> None:
    """With E and hard attention the decoder receives exactly the embedding of one input symbol."""
    model = net(embedding_values=True, gumbel=True).eval()
    batch = make_batch([["a", "b", "c", "."]], SOURCE, [["X"]], TARGET)
    keys, values, _ = model.encode(batch)
    context, weights = model.attend(keys, values, torch.randn(1, 16), batch.source_mask)
    chosen = int(weights[0].argmax())
    assert torch.equal(context[0], model.source_embedding.weight[batch.source[0, chosen]])


def test_switching_a_component_off_removes_its_parameters() -> None:
    full = dict(net().named_parameters())
    assert "transcoder.weight_ih_l0" in full and "initial" in full
    plain = dict(net(transcoder=False).named_parameters())
    assert not any(name.startswith(("transcoder", "initial")) for name in plain)
    assert "latent" in dict(net(temperature_mode="latent").named_parameters())
    assert "inverse_temperature.weight" in dict(net(temperature_mode="conditioned").named_parameters())


def test_temperature_modes_start_and_stay_where_the_settings_say() -> None:
    latent = net(temperature_mode="latent", temperature=5.0)
    assert float(latent._temperature(torch.zeros(1, 16)).detach()) == pytest.approx(5.0)
    conditioned = net(temperature_mode="conditioned", temperature=2.0)
    with torch.no_grad():
        temperatures = conditioned._temperature(torch.randn(64, 16) * 10)
    assert isinstance(temperatures, torch.Tensor)
    assert float(temperatures.max()) <= 2.0 and float(temperatures.min()) > 0.0
    assert net(temperature=0.5)._temperature(torch.zeros(1, 16)) == 0.5


def test_full_context_needs_the_context_and_the_state_of_one_size() -> None:
    with pytest.raises(UserError, match="set embedding equal to hidden"):
        Seq2AttnNet(Seq2AttnSettings(embedding=8, hidden=16), len(SOURCE), len(TARGET))
    Seq2AttnNet(Seq2AttnSettings(embedding=8, hidden=16, full_context=False), len(SOURCE), len(TARGET))
    Seq2AttnNet(Seq2AttnSettings(embedding=8, hidden=16, embedding_values=False), len(SOURCE), len(TARGET))


def test_a_misspelt_component_is_named() -> None:
    with pytest.raises(UserError, match="no setting 'transcodr'"):
        Seq2Attn(transcodr=False)


@pytest.mark.long_running
def test_embedding_values_lift_heldout_tables_above_the_baseline(runner: Runner) -> None:
    """Table 6.2's Baseline+E above Baseline on unseen tables (31.08 vs 8.51), at a small budget."""
    small = {"embedding": 64, "hidden": 64, "batch_size": 16, "epochs": 30, "max_length": 12}
    baseline = {"transcoder": False, "full_context": False, "embedding_values": False, "gumbel": False}
    scores = {}
    for label, params in (("E", baseline | {"embedding_values": True}), ("baseline", baseline)):
        record = runner.evaluate("lookup-tables-mt", ModelSpec(name="seq2attn", params=small | params), [1])
        scores[label] = record.scores["heldout_tables"]["sequence_accuracy"].mean
    assert scores["E"] > scores["baseline"] + 0.15, scores

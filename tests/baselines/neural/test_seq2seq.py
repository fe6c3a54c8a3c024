"""The neural training infrastructure: recipes, masking, determinism, selection, checkpoints, guidance."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from structbench import registry
from structbench.baselines.neural import checkpoint
from structbench.baselines.neural.batching import IGNORE, make_batch
from structbench.baselines.neural.seq2seq.model import AttentiveGuidance, AttentiveGuidanceOracle, Seq2Seq
from structbench.baselines.neural.seq2seq.nets import Seq2SeqNet
from structbench.baselines.neural.seq2seq.settings import Seq2SeqSettings
from structbench.baselines.neural.settings import (
    BUDGETS,
    RECIPES,
    load_recipe,
    quickstart_models,
    resolve_settings,
    task_of,
)
from structbench.baselines.neural.trainer import attention_loss, sequence_matches
from structbench.baselines.neural.vocab import EOS, PAD, Vocabulary
from structbench.data import freeze
from structbench.errors import NotApplicable, UserError
from structbench.runs.key import ModelKey
from structbench.runs.request import ModelRequest, build_model
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec, Split
from tests.support.helpers import check_stored_run

TINY = {"epochs": 2, "hidden": 32, "embedding": 16, "batch_size": 16, "patience": None}
SEQ2SEQ_MODELS = (
    "seq2seq",
    "seq2seq-lstm",
    "seq2seq-gru-attn",
    "seq2seq-srn",
    "attentive-guidance",
    "attentive-guidance-oracle",
)


def split(suite_id: str, name: str, draw: int = 0) -> Split:
    suite = registry.suite(suite_id)
    return freeze.load_split(suite, freeze.ensure_built(suite), draw, name)


def recipe_files() -> list[Path]:
    return sorted(RECIPES.glob("*/*.yaml"))


@pytest.mark.parametrize("path", recipe_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_recipe_budget_is_valid_for_its_model(path: Path) -> None:
    model = build_model(ModelSpec(name=path.parent.name))  # a transducer, language model or classifier
    assert isinstance(model.settings_class, type) and callable(model.configuration)
    _, recipe = load_recipe(path.parent.name, path.stem)
    assert set(BUDGETS) <= set(recipe.budgets), f"{path} lacks a budget"
    assert recipe.citation
    suite = {
        "default": "grounded-weak",
        "lookup": "lookup-tables",
        "scan": "scan-simple",
        "semantic-parsing": "slog",
    }.get(path.stem, path.stem)
    for budget in BUDGETS:
        resolve_settings(model.settings_class, path.parent.name, suite, budget, {})
    for listed in recipe.quickstart:  # a suite of another task would silently never get this recipe
        assert task_of(listed) == path.stem, f"{path} lists {listed} for quickstart, whose task is {task_of(listed)}"


def test_quickstart_neural_runs_the_recipes_that_list_the_suite() -> None:
    assert quickstart_models("miniscan") == ("lla-lstm", "lstm-thrush")
    assert quickstart_models("lookup-tables-mt") == ("attentive-guidance", "seq2attn", "seq2seq-gru-attn")
    assert quickstart_models("scan-length") == ()


def test_suite_ids_map_to_recipe_tasks() -> None:
    assert task_of("scan-addprim-jump@1.0.0") == "scan"
    assert task_of("lookup-tables-mt") == "lookup"
    assert task_of("question-formation-noagr") == "question-formation"
    assert task_of("grounded-weak") == "default"


def test_stored_runs_are_keyed_by_the_resolved_recipe() -> None:
    def model_key(name: str, suite: str, **params: str | int) -> ModelKey:
        return ModelKey.of(suite, ModelRequest.of(ModelSpec(name=name, params=params)))

    def key(name: str, suite: str, **params: str | int) -> str:
        return model_key(name, suite, **params).model_hash

    gru = model_key("seq2seq-gru-attn", "scan-simple").facts["configuration"]
    assert gru["budget"] == "cpu-small" and "device" not in gru
    assert key("seq2seq-gru-attn", "scan-simple") == key("seq2seq-gru-attn", "scan-simple")
    assert key("seq2seq-gru-attn", "scan-simple") != key("seq2seq-gru-attn", "lookup-tables")  # another recipe
    assert key("seq2seq-gru-attn", "scan-simple") != key("seq2seq-gru-attn", "scan-simple", budget="paper")
    lla = model_key("lla-lstm-noadv", "miniscan").facts["configuration"]
    assert lla["lexicon"] is True and lla["adversary"] is False
    assert model_key("attentive-guidance-oracle", "lookup-tables").facts["comparable"] is False
    assert "comparable" not in model_key("attentive-guidance", "lookup-tables").facts


@pytest.mark.parametrize("suite", ["scan-length", "lookup-tables"])
def test_korrels_baseline_and_both_guidance_arms_train_and_select_alike(suite: str) -> None:
    """Korrel trains the baseline, learned and oracle guidance alike (§5.3; on SCAN §5.3.3 and Table 5.2:
    batch 128, teacher forcing 0.5, 30 epochs keeping the lowest training loss), so a claim that learned
    guidance beats the baseline must not compare two training schedules. Per budget, the three differ
    in the network alone (attention loss, oracle, the baseline's own sizes on the lookup tables)."""
    baseline = "seq2seq-lstm" if suite == "scan-length" else "seq2seq-gru-attn"
    schedule = "batch_size epochs lr clip teacher_forcing selection patience criterion dev_limit eval_every".split()
    for budget in BUDGETS:
        arms = [
            resolve_settings(Seq2SeqSettings, name, suite, budget, {"attention": "pre-mlp"})[0]
            for name in (baseline, "attentive-guidance", "attentive-guidance-oracle")
        ]
        assert len({tuple(getattr(arm, key) for key in schedule) for arm in arms}) == 1, budget
        assert [arm.guidance for arm in arms] == [0.0, 1.0, 1.0] and arms[2].oracle_attention


def test_korrels_scan_paper_budget_is_table_5_2() -> None:
    """Table 5.2's SCAN column and §5.3.3: batch 128, teacher forcing 0.5, embeddings and 2-layer LSTMs of
    200, dropout 0.5, Adam at its default rate; a fixed 30 epochs keeping the lowest training loss, with
    no early stopping (SCAN has no validation set), for the baseline and both guidance arms; cpu-small
    keeps the recipe's dev criterion."""
    paper = resolve_settings(Seq2SeqSettings, "attentive-guidance", "scan-length", "paper", {})[0]
    assert (paper.batch_size, paper.teacher_forcing, paper.lr, paper.epochs, paper.selection) == (
        128, 0.5, 0.001, 30, "train_loss"
    )  # fmt: skip
    assert (paper.cell, paper.layers, paper.embedding, paper.hidden, paper.dropout) == ("lstm", 2, 200, 200, 0.5)
    for name in ("seq2seq-lstm", "attentive-guidance", "attentive-guidance-oracle"):
        assert resolve_settings(Seq2SeqSettings, name, "scan-length", "paper", {})[0].criterion is None, name
        small = resolve_settings(Seq2SeqSettings, name, "scan-length", "cpu-small", {})[0].criterion
        assert small is not None and small.at_least == 0.99, name


def test_settings_errors_name_the_problem() -> None:
    with pytest.raises(UserError, match="no setting 'hiddne'"):
        Seq2Seq(hiddne=3)
    with pytest.raises(UserError, match="unknown budget 'huge'"):
        Seq2Seq(budget="huge")
    with pytest.raises(UserError, match="cell"):
        resolve_settings(Seq2SeqSettings, "seq2seq", "scan-simple", "cpu-small", {"cell": "transformer"})
    if not torch.cuda.is_available():
        model = Seq2Seq(device="cuda", **TINY)
        with pytest.raises(UserError, match="no CUDA GPU"):
            model.fit(split("lookup-tables-mt", "train"), None, seed=0)


def net_and_vocab(attention: str) -> tuple[Seq2SeqNet, Vocabulary, Vocabulary]:
    source = Vocabulary(["a", "b", "c", "."])
    target = Vocabulary(["X", "Y"])
    settings = Seq2SeqSettings(attention=attention, hidden=16, embedding=8, dropout=0.0)  # type: ignore[arg-type]
    torch.manual_seed(0)
    return Seq2SeqNet(settings, len(source), len(target), 16).eval(), source, target


@pytest.mark.parametrize("attention", ["none", "location", "content", "luong-dot", "luong-mlp", "pre-mlp"])
def test_padding_changes_nothing(attention: str) -> None:
    """A sequence decodes and scores the same alone and beside a longer one; padding gets no attention."""
    net, source, target = net_and_vocab(attention)
    short, long = ["a", "b", "."], ["c", "c", "a", "b", "a", "."]
    alone = make_batch([short], source, [["X", "Y"]], target)
    padded = make_batch([short, long], source, [["X", "Y"], ["Y", "Y", "X", "X"]], target)
    with torch.no_grad():
        out_alone, out_padded = net(alone, True), net(padded, True)
        steps = alone.target.shape[1]  # type: ignore[union-attr]
        assert torch.allclose(out_alone.logits[0], out_padded.logits[0, :steps], atol=1e-5)
        if out_padded.attention is not None:
            assert float(out_padded.attention[0, :, len(short) :].abs().sum()) == 0.0
        assert torch.equal(net.decode(alone, 10)[0], net.decode(padded, 10)[0, : net.decode(alone, 10).shape[1]])


@pytest.mark.parametrize("attention", ["none", "luong-dot", "luong-mlp"])
def test_teacher_forced_fast_path_equals_the_step_loop(attention: str) -> None:
    net, source, target = net_and_vocab(attention)
    batch = make_batch([["a", "b", "."], ["c", "."]], source, [["X", "Y", "Y"], ["Y"]], target)
    with torch.no_grad():
        fast = net(batch, True).logits
        memory, state = net.encode(batch)
        keys = net.alignment.prepare(memory) if attention != "none" else memory
        ids = torch.tensor([1, 1])
        for t in range(batch.target.shape[1]):  # type: ignore[union-attr]
            logits, state, _ = net._step(ids, state, keys, memory, batch, None)
            assert torch.allclose(logits, fast[:, t], atol=1e-5)
            ids = batch.target[:, t]  # type: ignore[index]


def test_attention_loss_is_the_mean_negative_log_of_the_target_weight() -> None:
    uniform = torch.full((2, 3, 4), 0.25)
    targets = torch.tensor([[0, 1, IGNORE], [3, IGNORE, IGNORE]])
    assert float(attention_loss(uniform, targets)) == pytest.approx(torch.log(torch.tensor(4.0)).item())
    sharp = torch.nn.functional.one_hot(torch.tensor([[0, 1, 2], [3, 0, 0]]), 4).float()
    assert float(attention_loss(sharp, targets)) == pytest.approx(0.0, abs=1e-6)


def test_sequence_match_needs_the_whole_target_and_its_eos() -> None:
    target = torch.tensor([[5, 6, EOS], [5, EOS, PAD]])
    assert sequence_matches(torch.tensor([[5, 6, EOS, 7], [5, EOS, 9, 9]]), target).tolist() == [True, True]
    assert sequence_matches(torch.tensor([[5, 6, 6, EOS], [5, 5, EOS, 9]]), target).tolist() == [False, False]
    assert sequence_matches(torch.tensor([[5, 6]]), target[:1]).tolist() == [False]


def test_same_seed_same_weights_and_a_reloaded_checkpoint(structbench_environment: Path) -> None:
    train, dev = split("lookup-tables-mt", "train"), split("lookup-tables-mt", "validation")
    first = Seq2Seq(**TINY)
    first.fit(train, dev, seed=3)
    second = Seq2Seq(**{**TINY, "lr": 0.01})
    second.fit(train, dev, seed=3)
    assert first.net is not None and second.net is not None
    differ = any(
        not torch.equal(a, b)
        for a, b in zip(first.net.state_dict().values(), second.net.state_dict().values(), strict=True)
    )
    assert differ  # another setting trains another model
    # this test's checkpoints only: the session's home also holds other tests' seed-3 runs
    files = sorted(
        (structbench_environment / "checkpoints" / "lookup-tables-mt@1.0.0").glob("draw*/seq2seq/*/seed3.pt")
    )
    assert len(files) == 2
    _, meta = checkpoint.load(files[0])
    assert meta["seed"] == 3 and meta["source"][:4] == ["<pad>", "<sos>", "<eos>", "<unk>"]
    for path in files:  # retrain from scratch: a deterministic CPU run gives the same weights
        path.rename(path.with_suffix(".old"))
    again = Seq2Seq(**TINY)
    again.fit(train, dev, seed=3)
    assert again.net is not None
    assert all(
        torch.equal(a, b) for a, b in zip(first.net.state_dict().values(), again.net.state_dict().values(), strict=True)
    )
    reloaded = Seq2Seq(**TINY)
    messages: list[str] = []
    reloaded.log = messages.append
    reloaded.fit(train, dev, seed=3)
    assert messages and "reloaded the trained weights" in messages[0]
    inputs = [e.input for e in split("lookup-tables-mt", "heldout_tables").examples]
    assert reloaded.transduce(inputs) == first.transduce(inputs)


def test_model_selection_keeps_the_best_dev_epoch() -> None:
    model = Seq2Seq(**{**TINY, "epochs": 6})
    model.fit(split("lookup-tables-mt", "train", 1), split("lookup-tables-mt", "validation", 1), seed=0)
    evaluations = model.history["evaluations"]
    best = max(evaluations, key=lambda e: (e["dev_accuracy"], -e["dev_loss"]))
    assert model.history["selected_epoch"] == best["epoch"]


def test_guidance_needs_attention_targets() -> None:
    with pytest.raises(NotApplicable, match="attention targets"):
        AttentiveGuidance(**TINY).fit(split("miniscan", "train"), None, seed=0)


def test_oracle_guidance_attends_exactly_where_the_targets_say() -> None:
    model = AttentiveGuidanceOracle(**TINY)
    model.fit(split("lookup-tables-mt", "train"), None, seed=0)
    assert model.net is not None
    example = split("lookup-tables-mt", "heldout_tables").examples[0]
    batch = make_batch([example.input], model.source, [example.target or []], model.target, [example.attention])
    weights = model.net.eval()(batch, True).attention
    assert weights is not None
    assert weights[0].argmax(dim=-1).tolist() == example.attention
    assert float(weights[0].max(dim=-1).values.min()) == 1.0


@pytest.mark.parametrize("name", [*SEQ2SEQ_MODELS, "seq2attn", "transformer"])
def test_every_model_runs_through_the_harness(runner: Runner, name: str) -> None:
    params: dict[str, int | float | str | bool | None] = {"epochs": 1, "batch_size": 16, "max_length": 12}
    if name == "transformer":
        params |= {"d_model": 16, "feedforward": 32, "heads": 2}
    else:
        params |= {"hidden": 32, "embedding": 32 if name == "seq2attn" else 16}
    guided = name.startswith("attentive-guidance")
    suite = "lookup-tables-mt" if guided else "miniscan"
    record = runner.evaluate(suite, ModelSpec(name=name, params=params), [0])
    assert record.status == {"0": "done"}
    check_stored_run(runner, suite)


@pytest.mark.long_running
def test_learned_guidance_beats_the_unguided_baseline_on_heldout_inputs(runner: Runner) -> None:
    """Hupkes et al. 2018's claim on a small budget: guidance toward the diagonal generalises better."""
    scores = {}
    for name in ("seq2seq-gru-attn", "attentive-guidance"):
        params = {"epochs": 15, "hidden": 64, "max_length": 12}
        record = runner.evaluate("lookup-tables-mt", ModelSpec(name=name, params=params), [0])
        scores[name] = record.scores["heldout_compositions"]["sequence_accuracy"].mean
    assert scores["attentive-guidance"] > scores["seq2seq-gru-attn"]

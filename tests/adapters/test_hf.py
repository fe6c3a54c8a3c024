"""The Hugging Face adapters on tiny random checkpoints written here: scores against direct forward
passes, prompts, shots, fine-tuning, offline errors, run identity, and whole runs through the CLI."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers")

import torch

from structbench import registry
from structbench.adapters.hf.causal import HfCausalLm
from structbench.adapters.hf.gelu import FusedGeluTanh
from structbench.adapters.hf.seq2seq import HfSeq2Seq
from structbench.cli import main
from structbench.data import freeze
from structbench.errors import NotApplicable, UserError
from structbench.specs import Example, Split
from structbench.store import Store
from tests.support.hf_models import suite_words, tiny_gpt2, tiny_t5

SENTENCES = [
    ["the", "teacher", "has", "smiled", "."],
    ["the", "painter", "that", "the", "cats", "helped", "is", "here", "."],
    ["the"],
    [],
    ["the", "pilot", "with", "the", "cats", "that", "the", "senators", "liked", "are", "tired", "."],
]


def split(suite_id: str, name: str) -> Split:
    suite = registry.suite(suite_id)
    manifest = freeze.ensure_built(suite)
    return freeze.load_split(suite, manifest, 0, name)


@pytest.fixture(scope="module")
def words() -> list[str]:
    return [*suite_words(["agreement-attractors", "miniscan"]), "singular", "plural"]


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory: pytest.TempPathFactory, words: list[str]) -> Path:
    return tiny_gpt2(words, tmp_path_factory.mktemp("models") / "gpt2")


@pytest.fixture(scope="module")
def t5_dir(tmp_path_factory: pytest.TempPathFactory, words: list[str]) -> Path:
    return tiny_t5(words, tmp_path_factory.mktemp("models") / "t5")


@pytest.fixture(scope="module")
def gpt2(gpt2_dir: Path) -> Iterator[HfCausalLm]:
    model = HfCausalLm(pretrained=str(gpt2_dir), threads=1, batch_size=2)
    yield model
    model.close()


@pytest.fixture(scope="module")
def t5(t5_dir: Path) -> Iterator[HfSeq2Seq]:
    model = HfSeq2Seq(pretrained=str(t5_dir), threads=1, batch_size=2)
    yield model
    model.close()


def direct_logprob(model: Any, ids: list[int], begin: int) -> float:
    """Summed log-probability of ids[begin:] given ids[:begin], from one unpadded forward pass."""
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids])).logits[0]
    logprobs = torch.log_softmax(logits.double(), dim=-1)
    return float(sum(logprobs[t - 1, ids[t]] for t in range(begin, len(ids))))


def encode(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def test_loading_a_checkpoint_draws_no_bar_of_its_own(
    gpt2_dir: Path, t5_dir: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """transformers' `Loading weights` bar (drawn on any stream, a log included) is silenced: structbench's own
    progress shows where a run is (issue 33)."""
    for model in (HfCausalLm(pretrained=str(gpt2_dir), threads=1), HfSeq2Seq(pretrained=str(t5_dir), threads=1)):
        model.close()
    err = capfd.readouterr().err
    assert "Loading weights" not in err and "%|" not in err


# causal LM: scores


def test_logprob_is_the_sum_of_subword_logprobs_after_bos(gpt2: HfCausalLm) -> None:
    assert gpt2.start_id == gpt2.tokenizer.convert_tokens_to_ids("<s>")
    expected = [direct_logprob(gpt2.model, [gpt2.start_id, *encode(gpt2.tokenizer, " ".join(s))], 1) for s in SENTENCES]
    # batches of 2 sentences of different lengths: padding must not change any score
    assert gpt2.logprob(SENTENCES) == pytest.approx(expected, abs=1e-5)
    assert expected[3] == 0.0 and expected[2] < 0.0, "the first word is scored, after the start token"


def test_gpt2s_tanh_gelu_is_fused_and_scores_as_transformers_own_modules(gpt2: HfCausalLm, gpt2_dir: Path) -> None:
    """`fuse_gelu` (the default) computes GPT-2's `gelu_new` with torch's fused kernel of the same function
    (issue 49): every score stays within 1e-5 of transformers' own modules read position by position, and
    `fuse_gelu=false` keeps those modules."""
    from transformers import AutoModelForCausalLM
    from transformers.activations import NewGELUActivation

    own = AutoModelForCausalLM.from_pretrained(str(gpt2_dir)).eval()
    assert sum(isinstance(module, NewGELUActivation) for module in own.modules()) == 2
    assert sum(isinstance(module, FusedGeluTanh) for module in gpt2.model.modules()) == 2
    assert not any(isinstance(module, NewGELUActivation) for module in gpt2.model.modules())
    expected = [direct_logprob(own, [gpt2.start_id, *encode(gpt2.tokenizer, " ".join(s))], 1) for s in SENTENCES]
    assert gpt2.logprob(SENTENCES) == pytest.approx(expected, abs=1e-5)
    kept = HfCausalLm(pretrained=str(gpt2_dir), threads=1, fuse_gelu=False)
    try:
        assert sum(isinstance(module, NewGELUActivation) for module in kept.model.modules()) == 2
    finally:
        kept.close()


def test_loglikelihood_scores_the_continuation_after_its_context(gpt2: HfCausalLm) -> None:
    context = ["the", "pilot", "with", "the", "cats"]
    requests = [(context, ["is"]), (context, ["are"]), (["the", "teacher"], ["has", "smiled", "."]), ([], ["the"])]
    expected = []
    for words, continuation in requests:
        begin = 1 + len(encode(gpt2.tokenizer, " ".join(words)))
        expected.append(
            direct_logprob(
                gpt2.model, [gpt2.start_id, *encode(gpt2.tokenizer, " ".join([*words, *continuation]))], begin
            )
        )
    assert gpt2.loglikelihood(requests) == pytest.approx(expected, abs=1e-5)
    assert gpt2.loglikelihood(requests[::-1]) == pytest.approx(expected[::-1], abs=1e-5)


def test_without_a_bos_token_sequences_start_with_eos(tmp_path: Path, words: list[str]) -> None:
    model = HfCausalLm(pretrained=str(tiny_gpt2(words, tmp_path / "no-bos", bos=False)), threads=1)
    assert model.tokenizer.bos_token_id is None
    assert model.start_id == model.tokenizer.eos_token_id
    expected = direct_logprob(model.model, [model.start_id, *encode(model.tokenizer, "the teacher has smiled .")], 1)
    assert model.logprob([SENTENCES[0]]) == pytest.approx([expected], abs=1e-5)


def test_classification_picks_the_label_with_the_most_probable_continuation(gpt2: HfCausalLm) -> None:
    inputs = [e.input for e in split("agreement-attractors", "attractors-1").examples[:6]]
    labels = ["singular", "plural"]
    expected = []
    for tokens in inputs:
        prompt = " ".join(tokens) + "\nAnswer:"
        context = [gpt2.start_id, *encode(gpt2.tokenizer, prompt)]
        scores = [
            direct_logprob(gpt2.model, [gpt2.start_id, *encode(gpt2.tokenizer, f"{prompt} {label}")], len(context))
            for label in labels
        ]
        assert scores[0] != scores[1]
        expected.append(labels[scores.index(max(scores))])
    assert gpt2.classify(inputs, labels) == expected
    assert gpt2.classify(inputs, labels[::-1]) == expected, "the answer depends on the scores, not the label order"


def test_transduction_is_greedy_decoding_after_the_prompt(gpt2_dir: Path) -> None:
    inputs = [["dax", "fep"], ["zup"], ["lug", "kiki", "wif", "blicket", "dax"]]
    batched = HfCausalLm(pretrained=str(gpt2_dir), threads=1, max_new_tokens=6, batch_size=3)
    outputs = batched.transduce(inputs)
    for tokens, output in zip(inputs, outputs, strict=True):
        ids = [batched.start_id, *encode(batched.tokenizer, f"Input: {' '.join(tokens)}\nOutput:")]
        new: list[int] = []
        with torch.no_grad():
            for _ in range(6):
                new.append(int(batched.model(input_ids=torch.tensor([ids + new])).logits[0, -1].argmax()))
        assert output == batched.tokenizer.decode(new, skip_special_tokens=True).split()
        assert all(isinstance(token, str) for token in output) and len(output) <= 6
    one_by_one = HfCausalLm(pretrained=str(gpt2_dir), threads=1, max_new_tokens=6, batch_size=1)
    assert one_by_one.transduce(inputs) == outputs, "left padding must not change the greedy continuation"


def forced_to_emit(model: HfCausalLm, token_id: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Make the tiny GPT-2 predict `token_id` at every step; returns the shapes `generate` answers with."""
    with torch.no_grad():
        unit = torch.zeros_like(model.model.transformer.wte.weight[token_id])
        unit[0] = 1.0
        model.model.transformer.wte.weight[token_id] = unit
        model.model.transformer.ln_f.weight.zero_()
        model.model.transformer.ln_f.bias.copy_(10 * unit)
    shapes: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
    generate = model.model.generate

    def spy(**kwargs: Any) -> Any:
        out = generate(**kwargs)
        shapes.append((tuple(kwargs["input_ids"].shape), tuple(out.shape)))
        return out

    model.model.generate = spy
    return shapes


def test_generation_stops_at_a_newline_and_keeps_the_words_before_it(tmp_path: Path, words: list[str]) -> None:
    folder = tiny_gpt2([*words, "RED\nBLUE"], tmp_path / "newline")
    model = HfCausalLm(pretrained=str(folder), threads=1, max_new_tokens=20)
    newline = model.tokenizer.convert_tokens_to_ids("RED\nBLUE")
    shapes = forced_to_emit(model, newline)
    assert model.transduce([["dax"], ["zup", "fep"]]) == [["RED"], ["RED"]]
    (prompt, out), *_ = shapes
    assert out[1] == prompt[1] + 1, "generation goes on after the newline"
    assert torch.nonzero(model._stop_at_newline().table).flatten().tolist() == [newline]


def test_generation_stops_at_eos(gpt2_dir: Path) -> None:
    model = HfCausalLm(pretrained=str(gpt2_dir), threads=1, max_new_tokens=20)
    assert model.eos_id is not None
    shapes = forced_to_emit(model, model.eos_id)
    assert model.transduce([["dax"], ["zup", "fep"]]) == [[], []]
    (prompt, out), *_ = shapes
    assert out[1] == prompt[1] + 1


# causal LM: shots


def recorded_prompts(model: HfCausalLm) -> list[str]:
    """The texts the model will encode from now on, in order (prompts, and prompts with labels)."""
    prompts: list[str] = []
    encode = model._encode

    def recording(texts: Sequence[str]) -> list[list[int]]:
        prompts.extend(texts)
        return encode(texts)

    model._encode = recording  # type: ignore[method-assign]
    return prompts


def test_shots_are_drawn_from_train_per_seed_and_prefix_every_prompt(gpt2_dir: Path) -> None:
    train = split("miniscan", "train")
    model = HfCausalLm(pretrained=str(gpt2_dir), threads=1, shots=3, max_new_tokens=2)
    drawn = []
    for seed in range(4):
        model.fit(train, None, seed=seed)
        assert model._shot_examples is not None and len(model._shot_examples) == 3
        assert all(e in train.examples for e in model._shot_examples)
        drawn.append([e.id for e in model._shot_examples])
    model.fit(train, None, seed=0)
    assert [e.id for e in model._shot_examples or []] == drawn[0], "the same seed draws the same shots"
    assert len({tuple(d) for d in drawn}) > 1, "different seeds draw different shots"

    prompts = recorded_prompts(model)
    model.transduce([["zup", "fep"]])
    shots = "".join(
        f"Input: {' '.join(e.input)}\nOutput: {' '.join(e.target or [])}\n\n" for e in model._shot_examples or []
    )
    assert prompts == [shots + "Input: zup fep\nOutput:"]


def test_classification_shots_show_their_labels(gpt2_dir: Path) -> None:
    labelled = [
        Example(id=f"train-{i}", input=["the", noun], label=label)
        for i, (noun, label) in enumerate([("teacher", "singular"), ("cats", "plural"), ("pilots", "plural")])
    ]
    train = Split(suite="toy@1.0.0", name="train", role="train", draw=0, examples=labelled)
    model = HfCausalLm(pretrained=str(gpt2_dir), threads=1, shots=3)
    model.fit(train, None, seed=0)
    prompts = recorded_prompts(model)
    model.classify([["the", "guard"]], ["singular", "plural"])
    shots = "".join(f"the {e.input[1]}\nAnswer: {e.label}\n\n" for e in model._shot_examples or [])
    assert sorted(shots.split("\n\n")[:-1]) == sorted(
        f"the {n}\nAnswer: {label}" for n, label in [("teacher", "singular"), ("cats", "plural"), ("pilots", "plural")]
    )
    query = shots + "the guard\nAnswer:"
    assert prompts == [query, f"{query} singular", f"{query} plural"]


def test_shots_need_a_train_split_and_are_refused_for_scoring(gpt2_dir: Path) -> None:
    model = HfCausalLm(pretrained=str(gpt2_dir), threads=1, shots=2)
    with pytest.raises(NotApplicable, match="train split"):
        model.transduce([["dax"]])
    with pytest.raises(UserError, match="minimal-pair"):
        model.logprob([["the"]])
    with pytest.raises(UserError, match="shots=20 but the train split"):
        HfCausalLm(pretrained=str(gpt2_dir), shots=20).fit(split("miniscan", "train"), None, seed=0)
    with pytest.raises(UserError, match="has 0 examples with a target or label"):
        model.fit(split("agreement-attractors", "train"), None, seed=0)


def test_prompts_must_have_a_place_for_the_input(gpt2_dir: Path) -> None:
    with pytest.raises(UserError, match=r"has no \{input\}"):
        HfCausalLm(pretrained=str(gpt2_dir), transduction_prompt="Output:")


# offline only, one sentence


def one_sentence(message: str) -> bool:
    return message.endswith(".") and ". " not in message[:-1] and "\n" not in message


def test_a_missing_folder_is_one_sentence(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"
    for factory in (HfCausalLm, HfSeq2Seq):
        with pytest.raises(UserError) as raised:
            factory(pretrained=str(missing))
        message = str(raised.value)
        assert str(missing) in message and "local folder" in message and "Hugging Face cache" in message
        assert one_sentence(message)
        with pytest.raises(UserError):
            factory.fingerprint(pretrained=str(missing))


def test_a_name_is_looked_up_in_the_local_cache_only(
    tmp_path: Path, gpt2_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import huggingface_hub.constants

    cache = tmp_path / "hub"
    snapshot = cache / "models--tiny-org--tiny-gpt2" / "snapshots" / ("0" * 40)
    shutil.copytree(gpt2_dir, snapshot)
    (snapshot.parents[1] / "refs").mkdir()
    (snapshot.parents[1] / "refs" / "main").write_text("0" * 40)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    model = HfCausalLm(pretrained="tiny-org/tiny-gpt2", threads=1)
    assert model.logprob([SENTENCES[0]]) == pytest.approx(
        HfCausalLm(pretrained=str(gpt2_dir), threads=1).logprob([SENTENCES[0]]), abs=1e-6
    )
    assert HfCausalLm.fingerprint(pretrained="tiny-org/tiny-gpt2") == HfCausalLm.fingerprint(pretrained=str(gpt2_dir))
    assert HfCausalLm.label(pretrained="tiny-org/tiny-gpt2") == "tiny-gpt2"
    with pytest.raises(UserError) as raised:
        HfCausalLm(pretrained="tiny-org/not-cached")
    assert "'tiny-org/not-cached'" in str(raised.value) and one_sentence(str(raised.value))


def test_without_transformers_the_error_says_how_to_install_it(gpt2_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "transformers", None)
    for factory in (HfCausalLm, HfSeq2Seq):
        with pytest.raises(UserError) as raised:
            factory(pretrained=str(gpt2_dir))
        assert "pip install 'structbench[hf]'" in str(raised.value) and one_sentence(str(raised.value))


def test_a_checkpoint_of_the_other_kind_names_the_right_model(gpt2_dir: Path, t5_dir: Path) -> None:
    with pytest.raises(UserError, match="use --model hf-seq2seq") as raised:
        HfCausalLm(pretrained=str(t5_dir))
    assert one_sentence(str(raised.value))
    with pytest.raises(UserError, match=r"use --model hf\.") as raised:
        HfSeq2Seq(pretrained=str(gpt2_dir))
    assert one_sentence(str(raised.value))


def without_tokenizer(checkpoint: Path, out: Path) -> Path:
    """A copy of `checkpoint` with its config and weights but none of its tokenizer files."""
    out.mkdir()
    for path in checkpoint.iterdir():
        if "token" not in path.name:
            shutil.copy(path, out / path.name)
    return out


def test_a_checkpoint_without_tokenizer_files_is_refused_not_scored_zero(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, store_path: Path, gpt2_dir: Path, t5_dir: Path
) -> None:
    # transformers builds an empty tokenizer for such a folder: GPT-2's reads every sentence as [],
    # T5's every word as <unk>; each run was stored `done` with 0.0 on every split
    for factory, checkpoint, model in ((HfCausalLm, gpt2_dir, "hf"), (HfSeq2Seq, t5_dir, "hf-seq2seq")):
        bare = without_tokenizer(checkpoint, tmp_path / f"{checkpoint.name}-bare")
        with pytest.raises(UserError) as raised:
            factory(pretrained=str(bare), threads=1)
        message = str(raised.value)
        assert str(bare) in message and "has no vocabulary" in message and "tokenizer.save_pretrained" in message
        assert one_sentence(message)
        argv = ["run", "--suite", "miniscan", "--model", model, "--set", f"pretrained={bare}", "--seeds", "0"]
        assert main([*argv, "--store", str(store_path), "--no-progress"]) == 2
        assert "has no vocabulary" in capsys.readouterr().err
    with Store(store_path) as store:
        assert store.runs().empty


# run identity


def test_fingerprint_follows_the_files_not_the_path(tmp_path: Path, gpt2_dir: Path, words: list[str]) -> None:
    first = HfCausalLm.fingerprint(pretrained=str(gpt2_dir))
    assert len(first) == 64 and HfCausalLm.fingerprint(pretrained=str(gpt2_dir)) == first
    moved = shutil.copytree(gpt2_dir, tmp_path / "elsewhere")
    assert HfCausalLm.fingerprint(pretrained=str(moved)) == first
    (moved / "README.md").write_text("notes on the model")
    assert HfCausalLm.fingerprint(pretrained=str(moved)) == first, "a README changes no number"
    retrained = tiny_gpt2(words, tmp_path / "retrained", seed=1)
    assert (retrained / "config.json").read_bytes() == (gpt2_dir / "config.json").read_bytes()
    assert HfCausalLm.fingerprint(pretrained=str(retrained)) != first, "new weights are a new run"
    tokenizer = json.loads((moved / "tokenizer_config.json").read_text())
    (moved / "tokenizer_config.json").write_text(json.dumps({**tokenizer, "unk_token": "<pad>"}))
    assert HfCausalLm.fingerprint(pretrained=str(moved)) != first, "a new tokenizer is a new run"


def test_fused_gelu_is_a_new_run_only_where_it_changes_the_rounding(tmp_path: Path, gpt2_dir: Path) -> None:
    """Runs with GPT-2's `gelu_new` fused differ in their last bits from runs made without it, so their
    key differs; a checkpoint with another activation keeps its key (its numbers do not change)."""
    fused = HfCausalLm.fingerprint(pretrained=str(gpt2_dir))
    assert fused != HfCausalLm.fingerprint(pretrained=str(gpt2_dir), fuse_gelu=False)
    assert HfCausalLm.fingerprint(pretrained=str(gpt2_dir), fuse_gelu=True) == fused
    relu = shutil.copytree(gpt2_dir, tmp_path / "relu")
    config = json.loads((relu / "config.json").read_text())
    (relu / "config.json").write_text(json.dumps({**config, "activation_function": "relu"}))
    assert HfCausalLm.fingerprint(pretrained=str(relu)) == HfCausalLm.fingerprint(pretrained=str(relu), fuse_gelu=False)


def test_label_is_the_folder_name_and_the_settings_that_change_results(gpt2_dir: Path) -> None:
    deep = str(gpt2_dir) + "/"
    assert HfCausalLm.label(pretrained=deep) == "gpt2"
    label = HfCausalLm.label(pretrained=deep, device="cpu", batch_size=4, dtype="bfloat16", threads=1, shots=2)
    assert label == "gpt2[shots=2]"
    assert HfCausalLm.label(pretrained=deep, shots=0, transduction_prompt="Q: {input}\nA:") == (
        'gpt2[transduction_prompt="Q: {input}\\nA:"]'
    )
    assert HfSeq2Seq.label(pretrained="/models/t5-small", epochs=5, lr=0.01) == "t5-small"
    assert HfSeq2Seq.label(pretrained="/models/t5-small", finetune=True, epochs=5, batch_size=8) == (
        "t5-small[batch_size=8,epochs=5,finetune=true]"
    )
    for text in (label, HfSeq2Seq.label(pretrained=str(gpt2_dir), finetune=True)):
        assert str(gpt2_dir.parent) not in text and "/" not in text


def test_compute_reports_parameters_and_device(gpt2: HfCausalLm, t5: HfSeq2Seq) -> None:
    for model in (gpt2, t5):
        assert model.compute() == {"parameters": sum(p.numel() for p in model.model.parameters()), "device": "cpu"}


# encoder-decoder


def test_seq2seq_logprob_scores_the_decoder_output_for_an_empty_input(t5: HfSeq2Seq) -> None:
    empty = list(t5.tokenizer("")["input_ids"])
    assert empty == [t5.tokenizer.eos_token_id], "T5's convention: the encoder reads just </s>"
    expected = []
    for sentence in SENTENCES:
        decoder = [t5.start_id, *encode(t5.tokenizer, " ".join(sentence))]
        with torch.no_grad():
            logits = t5.model(input_ids=torch.tensor([empty]), decoder_input_ids=torch.tensor([decoder])).logits[0]
        logprobs = torch.log_softmax(logits.double(), dim=-1)
        expected.append(float(sum(logprobs[t - 1, decoder[t]] for t in range(1, len(decoder)))))
    assert t5.logprob(SENTENCES) == pytest.approx(expected, abs=1e-5)


def test_seq2seq_classification_scores_labels_given_the_input(t5: HfSeq2Seq) -> None:
    inputs = [["dax"], ["zup", "fep"], ["lug", "kiki", "wif"]]
    labels = ["RED", "BLUE", "GREEN"]
    expected = []
    for tokens in inputs:
        source = torch.tensor([t5.tokenizer(" ".join(tokens))["input_ids"]])
        scores = []
        for label in labels:
            with torch.no_grad():
                logits = t5.model(input_ids=source, decoder_input_ids=torch.tensor([[t5.start_id]])).logits[0, -1]
            scores.append(float(torch.log_softmax(logits, -1)[t5.tokenizer.convert_tokens_to_ids(label)]))
        expected.append(labels[scores.index(max(scores))])
    assert t5.classify(inputs, labels) == expected


def reversed_colours(examples: list[Example]) -> list[Example]:
    """Train examples whose targets are wrong in a consistent way: fitting train makes them less likely."""
    swap = {"RED": "BLUE", "BLUE": "GREEN", "GREEN": "YELLOW", "YELLOW": "RED"}
    return [e.model_copy(update={"target": [swap[t] for t in e.target or []]}) for e in examples]


def test_fine_tuning_is_deterministic_per_seed_and_keeps_the_best_dev_epoch(t5_dir: Path) -> None:
    train = split("miniscan", "train")
    dev = train.model_copy(update={"name": "dev", "role": "dev", "examples": reversed_colours(train.examples)})

    def fitted(seed: int) -> HfSeq2Seq:
        model = HfSeq2Seq(pretrained=str(t5_dir), threads=1, finetune=True, epochs=10, lr=1e-2, max_new_tokens=8)
        model.log = lambda message: None
        model.fit(train, dev, seed=seed)
        return model

    first, again, other = fitted(0), fitted(0), fitted(1)
    state = first.model.state_dict()
    assert all(torch.equal(value, again.model.state_dict()[key]) for key, value in state.items())
    assert not all(torch.equal(value, other.model.state_dict()[key]) for key, value in state.items())
    history = first.history
    assert len(history["train_loss"]) == len(history["dev_loss"]) == 10
    assert history["train_loss"][-1] < history["train_loss"][0]
    best = min(range(10), key=lambda i: history["dev_loss"][i])
    assert history["best_epoch"] == best + 1 < 10, "dev loss should rise as train is fitted"
    assert first._mean_loss(*first._pairs(dev.examples)) == pytest.approx(history["dev_loss"][best], abs=1e-9)
    assert first.transduce([["dax"], ["zup"]]) == again.transduce([["dax"], ["zup"]])


def test_fine_tuning_needs_a_train_split(t5_dir: Path) -> None:
    model = HfSeq2Seq(pretrained=str(t5_dir), finetune=True)
    with pytest.raises(NotApplicable, match="no"):
        model.transduce([["dax"]])


# whole runs


def run(capsys: pytest.CaptureFixture[str], store: Path, suite: str, *args: str) -> dict[str, Any]:
    argv = ["run", "--suite", suite, *args, "--seeds", "0", "--store", str(store), "--json", "--no-progress"]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


@pytest.mark.long_running
def test_hf_runs_a_minimal_pair_suite_end_to_end(
    capsys: pytest.CaptureFixture[str], store_path: Path, gpt2_dir: Path, gpt2: HfCausalLm
) -> None:
    settings = ["--set", f"pretrained={gpt2_dir}", "--set", "threads=1", "--set", "batch_size=64"]
    record = run(capsys, store_path, "agreement-attractors", "--model", "hf", *settings)
    assert record["status"] == {"0": "done"} and record["errors"] == {}
    tests = [s.name for s in registry.suite("agreement-attractors").spec.splits_with_role("test")]
    assert sorted(record["scores"]) == sorted(tests)
    assert all(0.0 <= record["scores"][name]["accuracy"]["mean"] <= 1.0 for name in tests)
    with Store(store_path) as store:
        runs = store.runs()
        assert json.loads(runs["model_spec"][0])["code"] == HfCausalLm.fingerprint(pretrained=str(gpt2_dir))
        ids, predictions, _ = store.stored_predictions(int(runs["id"][0]))["attractors-1"]
    examples = split("agreement-attractors", "attractors-1").examples[:3]
    assert ids[:3] == [e.id for e in examples]
    # the verb forms, scored as continuations of the prefix (agreement-attractors 2.0.0)
    direct = [gpt2.loglikelihood([(e.input, c) for c in e.candidates or []]) for e in examples]
    assert predictions[:3] == [pytest.approx(pair, abs=1e-5) for pair in direct]


def test_hf_seq2seq_fine_tunes_and_runs_a_transduction_suite_end_to_end(
    capsys: pytest.CaptureFixture[str], store_path: Path, t5_dir: Path, words: list[str]
) -> None:
    settings = [f"pretrained={t5_dir}", "finetune=true", "epochs=3", "lr=0.003", "threads=1", "max_new_tokens=10"]
    record = run(capsys, store_path, "miniscan", "--model", "hf-seq2seq", *[a for s in settings for a in ("--set", s)])
    assert record["status"] == {"0": "done"} and record["errors"] == {}
    stats = record["scores"]["test"]["sequence_accuracy"]
    assert stats["n_seeds"] == 1 and 0.0 <= stats["mean"] <= 1.0
    with Store(store_path) as store:
        runs = store.runs()
        _, predictions, _ = store.stored_predictions(int(runs["id"][0]))["test"]
    assert len(predictions) == 10 and all(isinstance(p, list) for p in predictions)
    assert {token for p in predictions for token in p} <= set(words), "words of the vocabulary, no special tokens"


# refused before running: tokenizers that read words as nothing, pickled code, a checkpoint's own code


def with_tokenizer(checkpoint: Path, tokenizer: Any, out: Path) -> Path:
    """A copy of `checkpoint`'s config and weights with `tokenizer` saved in place of its own."""
    without_tokenizer(checkpoint, out)
    tokenizer.save_pretrained(out)
    return out


def test_a_tokenizer_that_cannot_load_names_the_files_it_reads(tmp_path: Path, gpt2_dir: Path) -> None:
    lost = tmp_path / "lost"
    shutil.copytree(gpt2_dir, lost)
    (lost / "tokenizer.json").unlink()  # tokenizer_config.json still names a tokenizers-backed class
    garbled = tmp_path / "garbled"
    shutil.copytree(gpt2_dir, garbled)
    (garbled / "tokenizer.json").write_text("{not json")
    for folder, says in (
        (lost, f"it reads tokenizer.json, and {lost} lacks tokenizer.json"),
        (garbled, "could not read"),
    ):
        with pytest.raises(UserError) as raised:
            HfCausalLm(pretrained=str(folder), threads=1)
        message = str(raised.value)
        assert message.startswith(f"cannot load the tokenizer of {str(folder)!r}") and says in message
        assert "tokenizer.save_pretrained" in message and one_sentence(message)


def test_a_bare_folder_names_the_files_its_model_types_tokenizer_reads(tmp_path: Path, gpt2_dir: Path) -> None:
    bare = without_tokenizer(gpt2_dir, tmp_path / "bare")
    with pytest.raises(UserError) as raised:
        HfCausalLm(pretrained=str(bare), threads=1)
    assert "it reads tokenizer.json, or vocab.json and merges.txt" in str(raised.value)  # GPT2Tokenizer's
    assert "lacks merges.txt, tokenizer.json, vocab.json" in str(raised.value)
    (bare / "vocab.json").write_text(json.dumps({"the": 0}))  # half of GPT2Tokenizer's pair
    with pytest.raises(UserError) as raised:
        HfCausalLm(pretrained=str(bare), threads=1)
    assert f"{bare} lacks merges.txt, so save the tokenizer" in str(raised.value) and one_sentence(str(raised.value))


@pytest.fixture(scope="module")
def dropping_tokenizer() -> Any:
    """Reads the probe sentence's letters (lower case) and drops every other character."""
    from structbench.adapters.hf.common import PROBE_TEXT
    from tests.support.hf_models import character_tokenizer

    return character_tokenizer(PROBE_TEXT)


def test_a_sentence_read_as_no_tokens_is_refused_not_scored_zero(
    tmp_path: Path, gpt2_dir: Path, t5_dir: Path, dropping_tokenizer: Any
) -> None:
    # before, 'fully quiz' was scored 0.0 (the empty continuation) beside real scores, silently
    causal = HfCausalLm(pretrained=str(with_tokenizer(gpt2_dir, dropping_tokenizer, tmp_path / "gpt2")), threads=1)
    seq2seq = HfSeq2Seq(pretrained=str(with_tokenizer(t5_dir, dropping_tokenizer, tmp_path / "t5")), threads=1)
    assert len(causal.logprob([["the", "cat"], []])) == 2  # words it reads, and the empty sentence, are fine
    asks = [
        ("fully quiz", lambda: causal.logprob([["the", "cat"], ["fully", "quiz"]])),
        ("quiz", lambda: causal.loglikelihood([(["the", "cat"], ["quiz"])])),
        ("fully", lambda: causal.classify([["fully"]], ["the", "cat"])),
        ("fully quiz", lambda: causal.transduce([["the"], ["fully", "quiz"]])),
        ("fully quiz", lambda: seq2seq.logprob([["fully", "quiz"]])),
        ("fully quiz", lambda: seq2seq.transduce([["fully", "quiz"]])),  # T5's `</s>` alone is no reading either
    ]
    for text, ask in asks:
        with pytest.raises(UserError) as raised:
            ask()
        message = str(raised.value)
        assert f"reads the suite's {text!r} as no tokens at all" in message
        assert "no unknown token" in message and one_sentence(message)
    unknown = HfCausalLm(pretrained=str(gpt2_dir), threads=1)  # a word-level vocabulary reads it as <unk>
    assert unknown.logprob([["fully", "quiz"]])[0] < 0
    for model in (causal, seq2seq, unknown):
        model.close()


def test_a_suite_its_tokenizer_reads_as_nothing_is_refused_before_training(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, store_path: Path, t5_dir: Path, dropping_tokenizer: Any
) -> None:
    # miniscan's pseudo-words (wif, ...) and upper-case targets (I_WALK, ...) are dropped whole
    folder = with_tokenizer(t5_dir, dropping_tokenizer, tmp_path / "t5")
    argv = ["run", "--suite", "miniscan", "--model", "hf-seq2seq", "--set", f"pretrained={folder}"]
    assert main([*argv, "--set", "finetune=true", "--seeds", "0", "--store", str(store_path), "--no-progress"]) == 2
    error = capsys.readouterr().err
    assert "reads the suite's 'wif' as no tokens at all" in error  # the first input it cannot read
    with Store(store_path) as store:
        assert store.runs().empty


def hostile_checkpoint(checkpoint: Path, out: Path, marker: Path) -> Path:
    """A copy of `checkpoint` whose weights are a pytorch_model.bin pickle that would create `marker`."""
    import os

    class Hostile:
        def __reduce__(self) -> tuple[Any, tuple[str]]:
            return os.system, (f"touch {marker}",)

    shutil.copytree(checkpoint, out)
    (out / "model.safetensors").unlink()
    torch.save({"transformer.wte.weight": Hostile()}, out / "pytorch_model.bin")
    return out


def test_pickled_code_in_the_weights_is_refused_and_never_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, store_path: Path, gpt2_dir: Path
) -> None:
    marker = tmp_path / "pickle-ran"
    hostile = hostile_checkpoint(gpt2_dir, tmp_path / "hostile", marker)
    with pytest.raises(UserError) as raised:
        HfCausalLm(pretrained=str(hostile), threads=1)
    message = str(raised.value)
    assert message.startswith(f"the weights of {str(hostile)!r} (pytorch_model.bin) hold Python objects")
    assert "posix.system" in message and "safetensors" in message and one_sentence(message)
    argv = ["run", "--suite", "miniscan", "--model", "hf", "--set", f"pretrained={hostile}", "--seeds", "0"]
    assert main([*argv, "--store", str(store_path), "--no-progress"]) == 2
    assert "hold Python objects that a weights-only load refuses" in capsys.readouterr().err
    assert not marker.exists()
    with Store(store_path) as store:
        assert store.runs().empty


def remote_code_checkpoint(checkpoint: Path, out: Path, marker: Path, *, auto_map_in: str) -> Path:
    """A copy of `checkpoint` whose `auto_map` (in `auto_map_in`) points at modules in the folder that
    create `marker` when imported."""
    shutil.copytree(checkpoint, out)
    code = (
        f"open({str(marker)!r}, 'w').close()\n"
        "from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast\n"
        "class OwnConfig(GPT2Config):\n    model_type = 'own-gpt2'\n"
        "class OwnModel(GPT2LMHeadModel):\n    config_class = OwnConfig\n"
        "class OwnTokenizer(PreTrainedTokenizerFast):\n    pass\n"
    )
    (out / "own_code.py").write_text(code)
    settings = json.loads((out / auto_map_in).read_text())
    if auto_map_in == "config.json":
        settings["model_type"] = "own-gpt2"
        settings["auto_map"] = {"AutoConfig": "own_code.OwnConfig", "AutoModelForCausalLM": "own_code.OwnModel"}
    else:
        settings["auto_map"] = {"AutoTokenizer": [None, "own_code.OwnTokenizer"]}
    (out / auto_map_in).write_text(json.dumps(settings))
    return out


def test_a_checkpoint_that_needs_its_own_code_is_refused_and_its_code_never_runs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, store_path: Path, gpt2_dir: Path
) -> None:
    # before, transformers asked "Do you wish to run the custom code? [y/N]" on a terminal
    marker = tmp_path / "own-code-ran"
    for file in ("config.json", "tokenizer_config.json"):
        folder = remote_code_checkpoint(gpt2_dir, tmp_path / file, marker, auto_map_in=file)
        for factory in (HfCausalLm, HfSeq2Seq):
            with pytest.raises(UserError) as raised:
                factory(pretrained=str(folder), threads=1)
            message = str(raised.value)
            assert message.startswith(
                f"{str(folder)!r} needs code from the checkpoint folder to run (auto_map in {file}"
            )
            assert "own_code.Own" in message and "never runs a checkpoint's own code" in message
            assert one_sentence(message)
    argv = ["run", "--suite", "miniscan", "--model", "hf", "--set", f"pretrained={tmp_path / 'config.json'}"]
    assert main([*argv, "--seeds", "0", "--store", str(store_path), "--no-progress"]) == 2
    assert "needs code from the checkpoint folder" in capsys.readouterr().err
    assert not marker.exists()
    with Store(store_path) as store:
        assert store.runs().empty

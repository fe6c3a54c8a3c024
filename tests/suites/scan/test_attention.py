"""SCAN attention targets (Korrel 2018 §5.3.3): each action attends to the word that produced it,
the output's end to the input's `.`; and the guided models run on SCAN with them."""

from __future__ import annotations

import random

import pytest

from structbench import registry
from structbench.baselines.neural.batching import make_batch
from structbench.baselines.neural.seq2seq.model import AttentiveGuidanceOracle
from structbench.data import freeze
from structbench.runs.runner import Runner
from structbench.specs import Example, ModelSpec, Split
from structbench.suites.scan.common import EOS, attention_targets, interpret, parse_scan_file
from tests.conftest import SHARED_DATA

NAMED = {
    "I_TURN_LEFT": "left",
    "I_TURN_RIGHT": "right",
    "I_WALK": "walk",
    "I_LOOK": "look",
    "I_RUN": "run",
    "I_JUMP": "jump",
}
"""The rule: the word each action attends to."""
KORREL = [
    ("jump opposite right twice and turn opposite right thrice .", "2 2 0 2 2 0 7 7 7 7 7 7 9"),
    ("run opposite left after walk right .", "5 4 2 2 0 6"),
    ("turn left after jump twice .", "3 3 1 5"),
    ("look right thrice after look .", "4 1 0 1 0 1 0 5"),
    ("walk right twice and walk left .", "1 0 1 0 5 4 6"),
    ("turn right twice after walk thrice .", "4 4 4 1 1 6"),
]
"""Lines of Korrel's annotated SCAN data (github.com/i-machine-think/machine-tasks at 467a283,
`SCAN/hard_attention/simple_split/train.tsv`): input and attention targets, as published."""
SUITES = [name for name in registry.suite_names() if name.startswith("scan-")]
TINY = {"epochs": 1, "hidden": 16, "embedding": 8, "layers": 1, "batch_size": 256, "dev_limit": 50}


def test_targets_are_korrels_published_annotation() -> None:
    for command, published in KORREL:
        assert attention_targets(command.split()) == [int(a) for a in published.split()], command


def test_a_repeated_word_is_the_one_in_the_sub_command_that_produced_the_action() -> None:
    # `left` twice: the first turn comes from `walk left`, the second from `run left`
    assert attention_targets("walk left and run left".split()) == [1, 0, 4, 3, 5]
    # `after`: the second sub-command's actions come first and attend into it
    assert attention_targets("walk left after run left".split()) == [4, 3, 1, 0, 5]
    # `turn around left` inside an `and`: its four turns attend to its own `left`, not the first one
    assert attention_targets("jump left and turn around left".split()) == [1, 0, 5, 5, 5, 5, 6]


def check_rule(example: Example) -> None:
    """The stated rule on one frozen example, computed independently of the suite's aligner."""
    words, target, attention = example.input, example.target or [], example.attention or []
    assert words[-1] == EOS and len(attention) == len(target) + 1, example.id
    assert attention[-1] == len(words) - 1, example.id  # the end attends to `.`
    command = words[:-1]
    spans = [(0, len(command))]  # each sub-command's word span, in the order its actions are output
    for conjunction in ("and", "after"):
        if conjunction in command:
            i = command.index(conjunction)
            first, second = (0, i), (i + 1, len(command))
            spans = [first, second] if conjunction == "and" else [second, first]
    step = 0
    for start, end in spans:
        produced = len(interpret(command[start:end]))
        for action, position in zip(target[step : step + produced], attention[step : step + produced], strict=True):
            assert start <= position < end, f"{example.id}: {action} attends outside its sub-command"
            assert command[position] == NAMED[action], f"{example.id}: {action} attends to {command[position]!r}"
        step += produced
    assert step == len(target), example.id


@pytest.mark.long_running
def test_attention_targets_follow_the_rule_on_100_random_items() -> None:
    """100 examples drawn from every split of every SCAN suite (and every draw of the few-shot ones)."""
    rng = random.Random(18)
    for _ in range(100):
        suite = registry.suite(rng.choice(SUITES))
        manifest = freeze.ensure_built(suite)
        split = rng.choice(suite.spec.splits).name
        examples = freeze.load_split(suite, manifest, rng.randrange(suite.spec.n_draws), split).examples
        check_rule(rng.choice(examples))


def test_every_official_command_attends_to_the_words_the_rule_names() -> None:
    pairs = parse_scan_file((SHARED_DATA / "scan" / "tasks.txt").read_text(), "tasks.txt")
    for command, actions in pairs:
        check_rule(
            Example(id=" ".join(command), input=[*command, EOS], target=actions, attention=attention_targets(command))
        )


def test_every_scan_suite_carries_attention_targets() -> None:
    for name in SUITES:
        suite = registry.suite(name)
        manifest = freeze.ensure_built(suite)
        for declared in suite.spec.splits:
            examples = freeze.load_split(suite, manifest, 0, declared.name).examples
            assert all(e.attention is not None for e in examples), f"{name} {declared.name}"


@pytest.mark.usefixtures("one_torch_thread")
@pytest.mark.parametrize("name", ["attentive-guidance", "attentive-guidance-oracle"])
def test_guided_models_train_on_scan(runner: Runner, name: str) -> None:
    """Once `n/a` on SCAN (no attention targets); now they train and predict."""
    record = runner.evaluate("scan-simple", ModelSpec(name=name, params=TINY), [0])
    assert record.status == {"0": "done"}, record.errors


@pytest.mark.usefixtures("one_torch_thread")
def test_oracle_guidance_attends_where_the_scan_targets_say() -> None:
    suite = registry.suite("scan-length")
    manifest = freeze.ensure_built(suite)
    train = freeze.load_split(suite, manifest, 0, "train")
    model = AttentiveGuidanceOracle(**TINY)
    model.fit(Split(suite=train.suite, name="train", role="train", draw=0, examples=train.examples[:300]), None, seed=0)
    assert model.net is not None
    example = freeze.load_split(suite, manifest, 0, "test").examples[0]
    batch = make_batch([example.input], model.source, [example.target or []], model.target, [example.attention])
    weights = model.net.eval()(batch, True).attention
    assert weights is not None
    assert weights[0].argmax(dim=-1).tolist() == example.attention

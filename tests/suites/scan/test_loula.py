"""SCAN experiments 4-6 (Loula, Baroni & Lake 2018; Korrel 2018): template, filler and few-shot
suites rebuild the official files, carve dev from train only, and the interpreter solves them."""

from __future__ import annotations

from collections import Counter

import pytest

from structbench import registry
from structbench.data import freeze
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec, Split
from structbench.suites.scan.common import EOS, PRIMITIVES, parse_scan_file
from tests.conftest import REPO, SHARED_DATA

Pair = tuple[list[str], list[str]]
TEMPLATES = {  # suite -> (file name, test lines, train lines)
    "scan-template-jump-around-right": ("jump_around_right", 1173, 18528),
    "scan-template-right": ("right", 4476, 15225),
    "scan-template-opposite-right": ("opposite_right", 4476, 15225),
    "scan-template-around-right": ("around_right", 4476, 15225),
}
FILLER_TRAIN = [15225, 16290, 17391, 18528]
FEWSHOT = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
SHORT = {(32, 2): 31, (64, 0): 61, (64, 1): 61, (64, 2): 63, (64, 3): 62, (64, 4): 60}
"""(k, draw) -> commands the upstream few-shot file adds where it adds fewer than k."""
NEW_SUITES = [*TEMPLATES, *(f"scan-filler-{n}" for n in range(4)), *(f"scan-fewshot-{k}" for k in FEWSHOT)]


def published(name: str) -> list[Pair]:
    return parse_scan_file((SHARED_DATA / "scan" / name).read_text(), name)


def multiset(pairs: list[Pair]) -> Counter[tuple[str, str]]:
    return Counter((" ".join(c), " ".join(a)) for c, a in pairs)


def holds(command: list[str], phrase: str) -> bool:
    return f" {phrase} " in f" {' '.join(command)} "


def built(name: str, draw: int = 0) -> dict[str, Split]:
    suite = registry.suite(name)
    manifest = freeze.ensure_built(suite)
    return {s.name: freeze.load_split(suite, manifest, draw, s.name) for s in suite.spec.splits}


def pairs(split: Split) -> list[Pair]:
    assert all(e.input[-1] == EOS for e in split.examples)
    return [(e.input[:-1], e.target or []) for e in split.examples]


@pytest.fixture(scope="module")
def every_command() -> list[Pair]:
    return published("tasks.txt")


@pytest.mark.parametrize("name", NEW_SUITES)
def test_sizes_are_the_official_line_counts(name: str) -> None:
    """train + dev is the published train file, test the published test file, in every draw."""
    suite = registry.suite(name)
    manifest = freeze.ensure_built(suite)
    if name in TEMPLATES:
        expected = [(TEMPLATES[name][2], TEMPLATES[name][1])]
    elif name.startswith("scan-filler-"):
        expected = [(FILLER_TRAIN[int(name.rsplit("-", 1)[1])], 1173)]
    else:
        k = int(name.rsplit("-", 1)[1])
        expected = [(15225 + SHORT.get((k, draw), k), 1173) for draw in range(5)]
    assert suite.spec.n_draws == len(expected)
    for draw, (train, test) in enumerate(expected):
        sizes = {s: manifest.splits[f"draw{draw}/{s}"].n_examples for s in ("train", "dev", "test")}
        assert (sizes["train"] + sizes["dev"], sizes["test"]) == (train, test)
        assert sizes["dev"] == round(0.1 * (15225 if name.startswith("scan-fewshot-") else train))
    committed = (REPO / "src" / "structbench" / "suites" / "manifests" / f"{suite.spec.key}.json").read_text()
    assert manifest.suite_hash in committed


@pytest.mark.parametrize("name", TEMPLATES)
def test_template_split_is_the_rule(every_command: list[Pair], name: str) -> None:
    """Every command with the template in test; those with its `turn` form in neither split (upstream)."""
    file, _, _ = TEMPLATES[name]
    modifier = file.removeprefix("jump_").replace("_", " ")
    verbs = ["jump"] if file.startswith("jump_") else list(PRIMITIVES)
    turned = [p for p in every_command if holds(p[0], f"turn {modifier}")]
    held_out = [p for p in every_command if any(holds(p[0], f"{verb} {modifier}") for verb in verbs)]
    test = [p for p in held_out if not holds(p[0], f"turn {modifier}")]
    held = {" ".join(c) for c, _ in held_out}
    train = [p for p in every_command if not holds(p[0], f"turn {modifier}") and " ".join(p[0]) not in held]
    splits = built(name)
    assert multiset(pairs(splits["test"])) == multiset(test)
    assert multiset(pairs(splits["train"]) + pairs(splits["dev"])) == multiset(train)
    assert len(turned) + len(test) + len(train) == 20910


def test_filler_n_adds_the_first_n_fillers(every_command: list[Pair]) -> None:
    base = multiset(pairs(built("scan-filler-0")["train"]) + pairs(built("scan-filler-0")["dev"]))
    assert not [c for c, _ in base if " around right" in c]
    fillers = ["look", "walk", "run"]
    for n in range(1, 4):
        splits = built(f"scan-filler-{n}")
        added = multiset(pairs(splits["train"]) + pairs(splits["dev"])) - base
        others = [x for x in ("walk", "look", "run", "jump", "turn") if x not in fillers[:n]]  # jump: the test's
        expected = [
            p
            for p in every_command
            if any(holds(p[0], f"{x} around right") for x in fillers[:n])
            and not any(holds(p[0], f"{y} around right") for y in others)
        ]
        assert added == multiset(expected)
        assert sum(added.values()) == FILLER_TRAIN[n] - FILLER_TRAIN[0]
    tests = {" ".join(c) for c, _ in pairs(built("scan-filler-0")["test"])}
    assert tests == {" ".join(c) for c, _ in every_command if holds(c, "jump around right")} - {
        " ".join(c) for c, _ in every_command if holds(c, "turn around right")
    }


def test_filler_suites_share_the_template_files() -> None:
    """Upstream's 0-filler train file is the `around right` template's, its 3-filler one the `jump around right`'s."""
    assert built("scan-filler-0")["train"].examples == built("scan-template-around-right")["train"].examples
    assert (
        registry.suite("scan-filler-3").sources[0].sha256
        == registry.suite("scan-template-jump-around-right").sources[0].sha256
    )
    assert freeze.ensure_built(registry.suite("scan-filler-3")).suite_hash == (
        freeze.ensure_built(registry.suite("scan-template-jump-around-right")).suite_hash
    )


@pytest.mark.parametrize("k", [1, 64, 1024])
def test_fewshot_draws_add_k_look_around_right_commands_to_the_0_filler_set(k: int) -> None:
    filler_0 = built("scan-filler-0")
    base = multiset(pairs(filler_0["train"]) + pairs(filler_0["dev"]))
    filler_1 = built("scan-filler-1")
    one_filler = multiset(pairs(filler_1["train"]) + pairs(filler_1["dev"])) - base
    suite = registry.suite(f"scan-fewshot-{k}")
    drawn = []
    for draw in range(5):
        splits = built(f"scan-fewshot-{k}", draw)
        train, dev = pairs(splits["train"]), pairs(splits["dev"])
        added = [p for p in train if holds(p[0], "look around right")]
        assert len(added) == SHORT.get((k, draw), k) == len({" ".join(c) for c, _ in added})  # distinct, all in train
        assert not (multiset(added) - one_filler)
        assert not [p for p in dev if holds(p[0], "look around right")]  # dev only from the 0-filler lines
        assert multiset(train + dev) - multiset(added) == base
        assert splits["test"].examples == filler_0["test"].examples
        # seed s reads upstream rep (s mod 5) + 1
        assert suite.sources[draw].path.endswith(f"_num{k}_rep{draw + 1}.txt")
        drawn.append(frozenset(" ".join(c) for c, _ in added))
    assert len(set(drawn)) == 5  # five different draws


def test_every_k_of_a_draw_selects_on_the_same_dev_split() -> None:
    for draw in (0, 3):
        devs = {k: built(f"scan-fewshot-{k}", draw)["dev"].examples for k in (1, 1024)}
        assert devs[1] == devs[1024]
    assert built("scan-fewshot-16")["dev"].examples == built("scan-filler-0")["dev"].examples


def test_series_points() -> None:
    fewshot = {
        point.value: name
        for name in NEW_SUITES
        for point in registry.suite(name).spec.series
        if point.series == "scan-fewshot"
    }
    assert fewshot == {0: "scan-filler-0", **{k: f"scan-fewshot-{k}" for k in FEWSHOT}}
    fillers = {
        point.value
        for n in range(4)
        for point in registry.suite(f"scan-filler-{n}").spec.series
        if point.series == "scan-fillers"
    }
    assert fillers == {0, 1, 2, 3}
    assert all(
        p.log_axis for name in fewshot.values() for p in registry.suite(name).spec.series if p.series == "scan-fewshot"
    )


@pytest.mark.parametrize("name", NEW_SUITES)
def test_oracle_solves_every_draw(runner: Runner, name: str) -> None:
    seeds = list(range(registry.suite(name).spec.n_draws))
    record = runner.evaluate(name, ModelSpec(name="oracle"), seeds)
    assert set(record.status.values()) == {"done"}
    assert record.scores["test"]["sequence_accuracy"].per_seed == [1.0] * len(seeds)

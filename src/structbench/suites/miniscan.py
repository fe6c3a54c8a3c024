"""MiniSCAN, the few-shot colours task (Lake, Linzen & Baroni 2019; Thrush 2020).

Reproduces the instruction-learning experiment of Lake, Linzen & Baroni (2019) as Thrush
(2020) uses it for the LLA-LSTM: 14 study pairs and 10 test pairs of a pseudo-language
whose primitives name colours (dax RED, lug BLUE, wif GREEN, zup YELLOW) and whose functions
compose them: `x fep` repeats x three times, `x blicket y` is x y x, `x kiki y` is y x, with
precedence fep > blicket > kiki (kiki binds loosest). `zup` appears in training only alone,
so every test item asks for a primitive in a composition never seen with it.

The items are the published ones, transcribed from the paper (they have no download address). There is no dev split: Thrush used the train set for
validation, which we cannot mark as a dev split without training on it, so model selection
on this suite must use train. The test split is a generalisation split: every item composes
`zup`, which training shows only alone.

Scorers: exact match (`sequence_accuracy`, primary), and the mean per-item token precision
and recall Thrush reports: the paper does not define them, so we take the bag-of-tokens
overlap of output and target divided by the output's length (precision; 0 for an empty
output) and by the target's length (recall), averaged over items; token accuracy as well.
Thrush reports 0 exact, 90 precision and 62.5 recall for both LSTM and LLA-LSTM.

How the suite was checked is declared in its spec (`CHECKED` below: the spec's `how_checked`), which
the suite card shows; it declares no deviation from the paper.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from structbench.data.sources import SourceFile
from structbench.scoring import PerExample
from structbench.specs import Example, Split, SuiteSpec, scored_split, train_split
from structbench.suite import SourceFiles, Suite
from structbench.suites.common import RuleTransducer

CHECKED = """How it was checked (tests/suites/test_miniscan.py): the interpreter, which is the oracle,
reproduces all 24 published pairs."""
"""How the suites of this module were checked against their paper (`SuiteSpec.how_checked`)."""

COLOURS = {"dax": "RED", "lug": "BLUE", "wif": "GREEN", "zup": "YELLOW"}
ORIGIN = "the items of Lake, Linzen & Baroni 2019 (Human few-shot learning of compositional instructions), transcribed"
FILES = {
    "train": ("miniscan/train.tsv", "d16f67696c385c6bd3ead884934c8117c32421be0d6b3c707d9c8760b6a0743e"),
    "test": ("miniscan/test.tsv", "b097a04a96402bb597db481d1153dd101969e34eca71450ba45452a43b539d36"),
}


def interpret(words: Sequence[str]) -> list[str]:
    """Colours of a MiniSCAN instruction; kiki splits first (loosest), then blicket, then fep."""
    words = list(words)
    if "kiki" in words:
        i = words.index("kiki")
        return interpret(words[i + 1 :]) + interpret(words[:i])
    if "blicket" in words:
        i = words.index("blicket")
        x, y = interpret(words[:i]), interpret(words[i + 1 :])
        return x + y + x
    if words and words[-1] == "fep":
        return interpret(words[:-1]) * 3
    if len(words) == 1 and words[0] in COLOURS:
        return [COLOURS[words[0]]]
    raise ValueError(f"not a MiniSCAN instruction: {' '.join(words)!r}")


def precision_recall(output: Sequence[str], target: Sequence[str]) -> tuple[float, float]:
    overlap = sum((Counter(output) & Counter(target)).values())
    return (overlap / len(output) if output else 0.0), (overlap / len(target) if target else 0.0)


class MiniScan(Suite):
    """14 study and 10 test items of the few-shot colours task."""

    spec = SuiteSpec(
        id="miniscan",
        version="1.0.0",
        family="systematicity",
        protocol="transduction",
        description="Few-shot compositional instructions over colours: learn fep, blicket and kiki from 14 examples "
        "and apply them to a primitive seen only alone.",
        citation="Lake, Linzen & Baroni 2019, Human few-shot learning of compositional instructions; "
        "Thrush 2020, Compositional neural machine translation by removing the lexicon from syntax",
        how_checked=CHECKED,
        primary_metric="sequence_accuracy",
        recipe="miniscan",
        splits=[
            train_split(14, "the study items"),
            scored_split("test", 10, "generalisation", "the test items: zup in compositions never seen with it"),
        ],
    )
    sources = tuple(SourceFile(path=path, url="", origin=ORIGIN, sha256=sha) for path, sha in FILES.values())
    # transcribed from the paper; no repository publishes the items with a licence
    licence = "items as published in the paper (Lake, Linzen & Baroni 2019); no licence stated"

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        splits = {}
        for name, (path, _) in FILES.items():
            rows = [line.split("\t") for line in files.read_text(path).splitlines() if line.strip()]
            splits[name] = [
                Example(
                    id=f"{name}-{i:02d}",
                    input=words.split(),
                    target=colours.split(),
                    meta={"n_words": len(words.split())},
                )
                for i, (words, colours) in enumerate(rows)
            ]
        return splits

    def extra_metrics(
        self, split: str, examples: Sequence[Example], predictions: Sequence[Any]
    ) -> Mapping[str, PerExample]:
        pairs = [precision_recall(p, e.target or []) for e, p in zip(examples, predictions, strict=True)]
        return {"token_precision": [p for p, _ in pairs], "token_recall": [r for _, r in pairs]}

    def oracle(self, splits: Mapping[str, Split]) -> RuleTransducer:
        return RuleTransducer("miniscan-interpreter", interpret)

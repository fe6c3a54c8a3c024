"""Grounded scenes (Monner 2011, chapter 4): sentences about a scene, comprehended as predicates.

Reproduces the grounded-meaning task of Monner's dissertation (chapter 4, the grounded-meaning
model): a scene of 2-4 objects (size x colour x shape = 27 object types, each object with a
distinct id 1-4, presented in random order) is followed by a sentence from the chapter's
grammar (Fig. 4.3):

    S -> NP VP ; NP -> the [Size] [Color] Shape ; VP -> Is Where | Is Color | Is Size
    Where -> on NP | under NP | near NP ; Shape -> things | pyramid(s) | block(s) | cylinder(s)

A noun phrase refers to every object of the scene that has the mentioned attributes: a
singular one to exactly one object, a plural one (or `things`) to a group of two or more;
`is`/`are` agree. A colour or size predicate is true of every referent and names an attribute
the subject did not mention; the object of `on` is never a pyramid and the subject of
`under` never one; subject and object of a location are different objects. Locations are not
in the scene (as in the chapter, they are not checked). The target is the sequence of
grounded predicates in sentence order, e.g. for scene [small red pyramid 1] [large blue block
4] [medium red cylinder 3] [small green pyramid 2] and `the small pyramids are near the blue
block`: `Size small 1+2 | Shape pyramid 1+2 | Location near 1+2 4 | Color blue 4 | Shape
block 4` (Fig. 4.5).

Input: the scene as tokens, four per object (`small red pyramid 1`), objects in random order,
then `:` and the sentence's words.

Four suites, one per systematicity condition (§4.2.3-4.2.4), each with five draws; the
held-out object type is drawn per draw (from the 27 types, with the draw as seed) and stored
in every example's `meta` as `held_out`:
- `grounded-weak`: train, dev and test all from the full distribution; test pairs never occur
  in train (a random held-out share of scene-sentence pairs).
- `grounded-categorical`: the held-out type never appears in a training scene; test scenes
  contain it and the sentence refers to it by a familiar partial description (never its full
  size-colour-shape description).
- `grounded-descriptive`: the type appears in training scenes but no training sentence
  describes it fully; test sentences refer to it with that full description.
- `grounded-strong`: the type neither appears nor is described in training; test sentences
  describe it fully.
Sizes per draw: train 10,000, dev 1,000 (train distribution), test 1,000 (Monner: 3 million
streamed training pairs and 100 test items per network; ours keeps builds to seconds, and a
model that needs more data is told so by this suite).

Scorers: exact match on the whole predicate sequence (`sequence_accuracy`, primary);
`linguistic_accuracy`, exact match with every referent id removed (predicate types and
values only); `referent_accuracy`, the share of target predicates whose ids the output gets
right at the same position (Monner scores ids per noun phrase; every predicate carries its
noun phrase's ids, and a phrase like `the things` has no predicate of its own, so we score
per predicate). Monner reports 95 / 93 / 93 / 97% exact (weak / categorical / descriptive /
strong) for LSTM-g, 10 networks x 100 items.

Test roles: `grounded-weak`'s test is in-distribution (new scene-sentence pairs from the
training distribution); the test splits of the categorical, descriptive and strong conditions
are generalisation splits (an object type absent from training scenes, or never fully
described in training).

How the suites were checked, and where they deviate from the paper, are declared in their spec
(`CHECKED` and `DEVIATIONS` below: the spec's `how_checked` and `deviations`); the suite card shows both.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from structbench.scoring import Counts, PerExample
from structbench.specs import Example, Split, SplitSpec, SuiteSpec, TestRole, dev_split, scored_split, train_split
from structbench.suite import SourceFiles, Suite, SuiteSet, member
from structbench.suites.common import GENERATED_LICENCE, RuleTransducer

CHECKED = """How it was checked (tests/suites/test_grounded.py): the example of Fig. 4.5 gives the chapter's
target; every generated item's target is recomputed by the oracle, which parses the sentence
against the scene; each condition holds out what it claims; splits are disjoint."""
"""How the suites of this module were checked against their paper (`SuiteSpec.how_checked`)."""
DEVIATIONS = """Monner fed the sentence as unsegmented phonemes, each a
vector of acoustic features (Table 4.1), and the scene as one vector per object; we use word
tokens for both (deviation: the suite tests composition, not word segmentation)."""
"""Where the suites of this module depart from their paper, and why (`SuiteSpec.deviations`)."""

SIZES = ("small", "medium", "large")
COLORS = ("red", "green", "blue")
SHAPES = ("block", "pyramid", "cylinder")
TYPES = tuple(itertools.product(SIZES, COLORS, SHAPES))
RELATIONS = ("on", "under", "near")
SCENE_END = ":"
SPLIT_SIZES = {"train": 10_000, "dev": 1_000, "test": 1_000}
GENERATOR_SEED = 20110501
CITATION = (
    "Monner 2011, A neurocomputational model of grounded language comprehension and production at the "
    "sentence level (PhD dissertation, University of Maryland), chapter 4"
)

SceneObject = tuple[str, str, str, int]  # size, colour, shape, id


class NounPhrase:
    """`the [size] [colour] shape`, with the objects of a scene it refers to."""

    def __init__(self, size: str | None, color: str | None, shape: str | None, plural: bool) -> None:
        self.size, self.color, self.shape, self.plural = size, color, shape, plural

    def words(self) -> list[str]:
        noun = "things" if self.shape is None else self.shape + ("s" if self.plural else "")
        return ["the", *(w for w in (self.size, self.color) if w), noun]

    def matches(self, obj: SceneObject) -> bool:
        return (
            (self.size is None or self.size == obj[0])
            and (self.color is None or self.color == obj[1])
            and (self.shape is None or self.shape == obj[2])
        )

    def referents(self, scene: Sequence[SceneObject]) -> list[SceneObject]:
        return [o for o in scene if self.matches(o)]

    def is_full(self, kind: tuple[str, str, str]) -> bool:
        return (self.size, self.color, self.shape) == kind

    def predicates(self, ids: str) -> list[list[str]]:
        named = (("Size", self.size), ("Color", self.color), ("Shape", self.shape))
        return [[name, value, ids] for name, value in named if value is not None]


def ids_token(objects: Sequence[SceneObject]) -> str:
    return "+".join(str(o[3]) for o in sorted(objects, key=lambda o: o[3]))


def parse_np(words: Sequence[str], i: int) -> tuple[NounPhrase, int]:
    if words[i] != "the":
        raise ValueError(f"expected `the` at word {i}")
    i += 1
    size = words[i] if words[i] in SIZES else None
    i += size is not None
    color = words[i] if words[i] in COLORS else None
    i += color is not None
    noun = words[i]
    if noun == "things":
        return NounPhrase(size, color, None, True), i + 1
    shape, plural = (noun[:-1], True) if noun.endswith("s") else (noun, False)
    if shape not in SHAPES:
        raise ValueError(f"unknown noun {noun!r}")
    return NounPhrase(size, color, shape, plural), i + 1


def meaning(scene: Sequence[SceneObject], words: Sequence[str]) -> list[list[str]]:
    """The predicates of a sentence about a scene, in sentence order."""
    subject, i = parse_np(words, 0)
    subject_ids = ids_token(subject.referents(scene))
    out = subject.predicates(subject_ids)
    verb_complement = words[i + 1]
    if verb_complement in RELATIONS:
        obj, _ = parse_np(words, i + 2)
        object_ids = ids_token(obj.referents(scene))
        out.append(["Location", verb_complement, subject_ids, object_ids])
        out.extend(obj.predicates(object_ids))
    else:
        name = "Color" if verb_complement in COLORS else "Size"
        out.append([name, verb_complement, subject_ids])
    return out


def flatten(predicates: Sequence[Sequence[str]]) -> list[str]:
    return [token for i, p in enumerate(predicates) for token in ([*p] if i == 0 else ["|", *p])]


def unflatten(tokens: Sequence[str]) -> list[list[str]]:
    predicates: list[list[str]] = [[]]
    for token in tokens:
        if token == "|":
            predicates.append([])
        else:
            predicates[-1].append(token)
    return predicates if tokens else []


def ground(tokens: Sequence[str]) -> list[str]:
    """The target of an input `scene : sentence` (the oracle's rule)."""
    scene, words = parse_input(tokens)
    return flatten(meaning(scene, words))


def scene_tokens(scene: Sequence[SceneObject]) -> list[str]:
    return [token for size, color, shape, obj_id in scene for token in (size, color, shape, str(obj_id))]


def parse_input(tokens: Sequence[str]) -> tuple[list[SceneObject], list[str]]:
    cut = list(tokens).index(SCENE_END)
    scene = [(tokens[i], tokens[i + 1], tokens[i + 2], int(tokens[i + 3])) for i in range(0, cut, 4)]
    return scene, list(tokens[cut + 1 :])


class SceneGenerator:
    """Random scenes and true sentences about them."""

    def __init__(self, seed: Sequence[int]) -> None:
        self.rng = random.Random("-".join(map(str, seed)))

    def scene(
        self, allowed: Sequence[tuple[str, str, str]], must_contain: tuple[str, str, str] | None
    ) -> list[SceneObject]:
        n = self.rng.randint(2, 4)
        kinds = [self.rng.choice(allowed) for _ in range(n)]
        if must_contain is not None:
            kinds[self.rng.randrange(n)] = must_contain
        ids = self.rng.sample((1, 2, 3, 4), n)
        return [(*kind, obj_id) for kind, obj_id in zip(kinds, ids, strict=True)]

    def noun_phrase(self, scene: Sequence[SceneObject], pool: Sequence[SceneObject]) -> NounPhrase | None:
        """A description anchored on a random object of `pool`, or None if it does not fit."""
        anchor = self.rng.choice(pool)
        size = anchor[0] if self.rng.random() < 0.5 else None
        color = anchor[1] if self.rng.random() < 0.5 else None
        shape = anchor[2] if self.rng.random() < 0.75 else None
        probe = NounPhrase(size, color, shape, plural=True)
        referents = probe.referents(scene)
        if shape is None and len(referents) < 2:
            return None
        probe.plural = len(referents) > 1
        return probe

    def sentence(self, scene: Sequence[SceneObject]) -> tuple[list[str], list[NounPhrase]] | None:
        """A true sentence about the scene and its noun phrases, or None if the draw does not fit."""
        subject = self.noun_phrase(scene, scene)
        if subject is None:
            return None
        referents = subject.referents(scene)
        verb = "are" if subject.plural else "is"
        kind = self.rng.randrange(3)
        if kind < 2:  # colour or size, unmentioned by the subject and true of every referent
            position = 1 if kind == 0 else 0
            if (subject.color if kind == 0 else subject.size) is not None:
                return None
            values = {str(o[position]) for o in referents}  # size or colour: always a word
            if len(values) != 1:
                return None
            return [*subject.words(), verb, values.pop()], [subject]
        relation = self.rng.choice(RELATIONS)
        others = [o for o in scene if o not in referents]
        if not others or (relation == "under" and any(o[2] == "pyramid" for o in referents)):
            return None
        obj = self.noun_phrase(scene, others)
        if obj is None:
            return None
        object_referents = obj.referents(scene)
        if set(object_referents) & set(referents):
            return None
        if relation == "on" and any(o[2] == "pyramid" for o in object_referents):
            return None
        return [*subject.words(), verb, relation, *obj.words()], [subject, obj]


def describes_fully(phrases: Sequence[NounPhrase], kind: tuple[str, str, str]) -> bool:
    return any(phrase.is_full(kind) for phrase in phrases)


def refers_to(scene: Sequence[SceneObject], phrases: Sequence[NounPhrase], kind: tuple[str, str, str]) -> bool:
    return any(o[:3] == kind for phrase in phrases for o in phrase.referents(scene))


def _ids_of(predicate: Sequence[str]) -> list[str]:
    return list(predicate[2:]) if predicate and predicate[0] != "Location" else list(predicate[2:4])


def _without_ids(predicates: Sequence[Sequence[str]]) -> list[list[str]]:
    return [list(p[:2]) for p in predicates]


class GroundedScenes(Suite):
    """One systematicity condition of the grounded-scenes task; subclasses name it."""

    condition: ClassVar[str]
    breakdown_keys: ClassVar[tuple[str, ...]] = ("n_objects", "n_predicates")
    licence = GENERATED_LICENCE

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        generator = SceneGenerator([GENERATOR_SEED, draw, CONDITIONS.index(self.condition)])
        held_out = TYPES[int(np.random.default_rng([GENERATOR_SEED, draw]).integers(len(TYPES)))]
        seen: set[tuple[str, ...]] = set()
        label = " ".join(held_out)

        def draw_split(prefix: str, size: int, test: bool) -> list[Example]:
            examples: list[Example] = []
            hidden = self.condition in ("categorical", "strong")
            allowed = [t for t in TYPES if not (hidden and t == held_out)]
            while len(examples) < size:
                must = held_out if test and self.condition != "weak" else None
                scene = generator.scene(allowed, must)
                drawn = generator.sentence(scene)
                if drawn is None or not self._fits(scene, drawn[1], held_out, test):
                    continue
                words = drawn[0]
                tokens = [*scene_tokens(scene), SCENE_END, *words]
                key = tuple(tokens)
                if key in seen:
                    continue
                seen.add(key)
                predicates = meaning(scene, words)
                examples.append(
                    Example(
                        id=f"{prefix}-{len(examples):05d}",
                        input=tokens,
                        target=flatten(predicates),
                        meta={"held_out": label, "n_objects": len(scene), "n_predicates": len(predicates)},
                    )
                )
            return examples

        test = draw_split("test", SPLIT_SIZES["test"], test=True)
        return {
            "train": draw_split("train", SPLIT_SIZES["train"], test=False),
            "dev": draw_split("dev", SPLIT_SIZES["dev"], test=False),
            "test": test,
        }

    def _fits(
        self, scene: Sequence[SceneObject], phrases: Sequence[NounPhrase], kind: tuple[str, str, str], test: bool
    ) -> bool:
        if self.condition == "weak":
            return True
        if not test:
            # descriptive: the type may be seen but never fully described; categorical and strong
            # never show it, so it cannot be described either
            return not describes_fully(phrases, kind)
        if self.condition == "categorical":
            return refers_to(scene, phrases, kind) and not describes_fully(phrases, kind)
        return describes_fully(phrases, kind)

    def extra_metrics(
        self, split: str, examples: Sequence[Example], predictions: Sequence[Any]
    ) -> Mapping[str, PerExample]:
        linguistic: list[float | None] = []
        referent_hits: list[float] = []
        referent_items: list[int] = []
        for example, prediction in zip(examples, predictions, strict=True):
            target, output = unflatten(example.target or []), unflatten(prediction)
            linguistic.append(float(_without_ids(target) == _without_ids(output)))
            referent_hits.append(
                sum(i < len(output) and _ids_of(output[i]) == _ids_of(predicate) for i, predicate in enumerate(target))
            )
            referent_items.append(len(target))
        return {
            "linguistic_accuracy": linguistic,
            "referent_accuracy": Counts(hits=referent_hits, items=referent_items),
        }

    def oracle(self, splits: Mapping[str, Split]) -> RuleTransducer:
        return RuleTransducer("grounded-oracle", ground)


GROUNDED = SuiteSpec(
    id="grounded",
    version="1.0.0",
    family="systematicity",
    protocol="transduction",
    description="Ground sentences in scenes as predicates.",
    citation=CITATION,
    how_checked=CHECKED,
    deviations=DEVIATIONS,
    primary_metric="sequence_accuracy",
    higher_is_better=True,
    splits=[
        train_split(SPLIT_SIZES["train"]),
        dev_split(SPLIT_SIZES["dev"], "train distribution"),
        scored_split("test", SPLIT_SIZES["test"], "generalisation"),
    ],
    n_draws=5,
)
"""What the four conditions share; each declares its id, description and its test split's role."""


def _splits(role: TestRole) -> list[SplitSpec]:
    """A condition's splits: train, dev and a test split with the condition's role."""
    return [*GROUNDED.splits[:2], scored_split("test", SPLIT_SIZES["test"], role)]


_CONDITIONS: tuple[tuple[str, TestRole, str], ...] = (
    (
        "weak",
        "in-distribution",
        "Ground sentences in scenes as predicates; test pairs are new, objects and descriptions familiar.",
    ),
    (
        "categorical",
        "generalisation",
        "Ground sentences in scenes; one object type never appears in training and is tested by familiar partial "
        "descriptions.",
    ),
    (
        "descriptive",
        "generalisation",
        "Ground sentences in scenes; one object type is seen but never fully described in training, and is tested "
        "with its full description.",
    ),
    (
        "strong",
        "generalisation",
        "Ground sentences in scenes; one object type is neither seen nor described in training, and is tested with "
        "its full description.",
    ),
)
"""Condition, its test split's role, and its suite's description."""
CONDITIONS = tuple(condition for condition, _, _ in _CONDITIONS)
"""The four conditions, in the order whose index seeds each condition's scene generator."""

GROUNDED_SET = SuiteSet(
    member(
        GroundedScenes,
        f"Grounded{condition.capitalize()}",
        f"The grounded-scenes task, {condition} systematicity condition.",
        condition=condition,
        spec=GROUNDED.variant(id=f"grounded-{condition}", description=description, splits=_splits(role)),
    )
    for condition, role, description in _CONDITIONS
)
"""One suite per condition of `_CONDITIONS`."""

__getattr__ = SuiteSet.module_getattr(GROUNDED_SET)

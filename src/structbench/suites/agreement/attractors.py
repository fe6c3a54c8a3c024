"""Agreement attractors from a grammar (Linzen, Dupoux & Goldberg 2016; Tran 2018 §5.5).

Sentences whose subject is followed by material carrying intervening nouns before the verb
that must agree with the subject: prepositional phrases (`near the cats`), subject relative
clauses (`that saw the cats`) and object relative clauses (`that the cats saw`), stacked up to
four intervening nouns. Relative-clause verbs are in the past tense, which carries no number,
so the only number cues are the nouns. An attractor is an intervening noun whose number
differs from the subject's. The verb is an auxiliary (is/are, has/have, does/do, each with a
fitting continuation) or a lexical present-tense verb (sleeps/sleep, ...).

Two suites on the same items, reported separately:
- `agreement-attractors` (minimal-pair): the correct verb form against the wrong one as
  continuations of the prefix before the verb, compared by p(verb | prefix) as Linzen et al.,
  Gulordava et al. and Tran (Table 5.1a) compare them; the correct one must be strictly more
  probable (ties wrong). Version 1.0.0 compared whole sentences, the words after the verb and
  `</s>` included, so that words conditioned on different verbs entered the comparison.
- `agreement-attractors-number` (classification): the prefix up to the verb, labelled
  `singular` or `plural`, as in Linzen et al.'s number-prediction task.

Splits: `train` (20,000 sentences of the natural distribution: the subject is plural with
probability .3, the number of intervening nouns is 0-4 with probabilities .6/.25/.1/.04/.01
and each is an attractor with probability .2, so 89% of sentences have no attractor; usable
as language-model training text), `dev` (1,000: in 1.0.0 the same distribution; from 2.0.0 the
same generator without any prefix of train or the tests, which is another distribution, below) and
six tests of 500: `attractors-0` (1-4 intervening nouns, none an attractor: not Linzen et al.'s
zero-attractor condition, which has no intervening noun), `attractors-1` … `attractors-4` (exactly
k intervening nouns, all attractors: the homogeneous condition) and `mixed` (2-4 intervening nouns,
some but not all attractors).
`meta`: n_attractors, n_intervening, distance (words between subject noun and verb),
construction (e.g. `pp+src`), subject_number, verb_kind.

What the tests repeat of train (version 2.0.0): no test or dev item's prefix occurs in train, nor
in another test split, so no item is one a model has read (the overlap audit counts 0): the six
test splits are drawn first, then train from the natural distribution without their prefixes,
then dev from the natural generator without any prefix of train or the tests. Dev therefore
holds no sentence without intervening nouns (all 20 such prefixes occur in train) and is model
selection on unseen prefixes, not on train's distribution: on draw 0, 0% of dev has no intervening
noun (train 61.0%) and 39.4% has an attractor (train 10.2%). In the LM suite dev is language-model text (whole sentences, as
train), in the number suite prefixes with their labels. Version 1.0.0 kept test sentences out of
train but not their prefixes: 95 of attractors-0's 500 and 152 of attractors-1's prefixes, and 773
of dev's 1,000, repeated a train prefix (and, in the LM suite, 622 dev sentences a train sentence).

Primary metric `accuracy` (higher is better; Linzen et al.'s and Tran's measure, reported per
attractor count), broken down by verb_kind, construction and subject_number within each split.

Test roles: `attractors-0` is in-distribution (no attractor is what 90% of the training
sentences of 2.0.0's draw 0 show, and 29% have intervening nouns without one); `attractors-1` to
`attractors-4` and `mixed` are generalisation splits (in that training split, sentences whose
intervening nouns are all attractors are 4.1% with one, 0.5% with two, 4 sentences with three and
none with four, and mixed ones 5.7%; 1.0.0's: 4.8%, 0.4%, 4, none and 5.5%: these conditions are
the long tail Linzen et al. test beyond). All six are
ranked: their sentences are distinct from each other (one set of tested sentences is kept
across the splits), and `mixed` holds only partial-attractor items, which no bin contains.

How the suites were checked, and where they deviate from the paper, are declared in their spec
(`CHECKED` and `DEVIATIONS` below: the spec's `how_checked` and `deviations`); the suite card shows both.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import ClassVar

from structbench.specs import Example, Split, SplitSpec, SuiteSpec, TestRole, dev_split, scored_split, train_split
from structbench.suite import SourceFiles, Suite
from structbench.suites.common import GENERATED_LICENCE, NUMBER_LABELS

CHECKED = """How it was checked (tests/suites/agreement/test_attractors.py): every item's attractor count, distance and
construction are recomputed from its words; test sentences are unique across the six test
splits and absent from train; the oracle (which reads the subject's number off the sentence,
as the grammar defines agreement) scores 1.0; an n-gram model's accuracy falls as attractors
rise, the effect this suite exists to measure."""
"""How the suites of this module were checked against their paper (`SuiteSpec.how_checked`)."""
DEVIATIONS = """Deviations:
- Data: the items come from a grammar, not from Linzen et al.'s Wikipedia corpus (that is
  `agreement-linzen-number`), so the conditions are controlled and balanced and the numbers are not
  comparable with the papers'.
- Split sizes: 20,000 train, 1,000 dev and six tests of 500, chosen here; Tran (§5.5.1), following
  Linzen et al., takes 10% of the data for training, 1% for validation and the rest (89%) for testing.
- `attractors-0` holds sentences with 1-4 intervening nouns, none of them an attractor; in Linzen et
  al., and in `agreement-linzen-number`'s `attractors-0`, the zero-attractor condition is a subject
  with no intervening noun at all, which no test split here holds."""
"""Where the suites of this module depart from their paper, and why (`SuiteSpec.deviations`)."""
DEVIATIONS_V2 = f"""{DEVIATIONS}
- Dev (from 2.0.0) is not train's distribution: it is drawn from the same generator without any prefix
  of train or the tests, which removes every sentence without intervening nouns (all 20 such prefixes
  occur in train). On draw 0, 0% of dev has no intervening noun (train 61.0%) and 39.4% has an attractor
  (train 10.2%); 1.0.0's dev, drawn without that condition, had 59.5% and 12.1%."""
"""Where version 2.0.0 of the suites departs from the paper (`SuiteSpec.deviations`)."""

NOUNS = {
    "dog": "dogs", "cat": "cats", "author": "authors", "pilot": "pilots", "farmer": "farmers",
    "senator": "senators", "teacher": "teachers", "doctor": "doctors", "painter": "painters", "guard": "guards",
}  # fmt: skip
PLURAL_NOUNS = set(NOUNS.values())
PREPOSITIONS = ("near", "behind", "with", "beside")
PAST_VERBS = ("saw", "liked", "met", "helped", "praised")
VERBS = {  # singular, plural, continuations
    "aux-be": ("is", "are", ("here", "tired", "happy", "late")),
    "aux-have": ("has", "have", ("left", "arrived", "smiled")),
    "aux-do": ("does", "do", ("not care", "not agree", "smile")),
    "lexical": ("sleeps", "sleep", ("", "now", "often")),
}
LABELS = NUMBER_LABELS
INTERVENING_WEIGHTS = (0.6, 0.25, 0.1, 0.04, 0.01)
PLURAL_RATE = 0.3
ATTRACTOR_RATE = 0.2
SIZES = {"train": 20_000, "dev": 1_000, "test": 500}
TEST_SPLITS = ("attractors-0", "attractors-1", "attractors-2", "attractors-3", "attractors-4", "mixed")
TEST_ROLES: dict[str, TestRole] = {
    name: "in-distribution" if name == "attractors-0" else "generalisation" for name in TEST_SPLITS
}
TEST_DESCRIPTIONS = {
    "attractors-0": "1-4 intervening nouns, none an attractor",
    **{f"attractors-{k}": f"exactly {k} intervening nouns, all attractors" for k in range(1, 5)},
    "mixed": "2-4 intervening nouns, some but not all attractors",
}
GENERATOR_SEED = 20160601
CITATION = (
    "Linzen, Dupoux & Goldberg 2016, Assessing the ability of LSTMs to learn syntax-sensitive dependencies; "
    "Tran 2018, Predicting and discovering linguistic structure with neural networks (thesis, §5.5)"
)


class Item:
    """One generated sentence: prefix up to the verb, both verb forms, continuation and meta."""

    def __init__(self, rng: random.Random, subject_plural: bool, intervening: Sequence[bool]) -> None:
        stem = rng.choice(list(NOUNS))
        self.prefix = ["the", NOUNS[stem] if subject_plural else stem]
        kinds = []
        for attractor_plural in intervening:
            noun = rng.choice(list(NOUNS))
            noun = NOUNS[noun] if attractor_plural else noun
            kind = rng.choice(("pp", "src", "orc"))
            kinds.append(kind)
            if kind == "pp":
                self.prefix += [rng.choice(PREPOSITIONS), "the", noun]
            elif kind == "src":
                self.prefix += ["that", rng.choice(PAST_VERBS), "the", noun]
            else:
                self.prefix += ["that", "the", noun, rng.choice(PAST_VERBS)]
        self.verb_kind = rng.choice(list(VERBS))
        singular, plural, continuations = VERBS[self.verb_kind]
        self.correct, self.wrong = (plural, singular) if subject_plural else (singular, plural)
        self.rest = [*rng.choice(continuations).split(), "."]
        self.subject_plural = subject_plural
        self.meta: dict[str, str | int | float | bool] = {
            "n_attractors": sum(p != subject_plural for p in intervening),
            "n_intervening": len(intervening),
            "distance": len(self.prefix) - 2,
            "construction": "+".join(kinds) or "none",
            "subject_number": LABELS[subject_plural],
            "verb_kind": self.verb_kind,
        }

    def sentence(self, correct: bool = True) -> list[str]:
        return [*self.prefix, self.correct if correct else self.wrong, *self.rest]


def natural(rng: random.Random) -> Item:
    n = rng.choices(range(5), weights=INTERVENING_WEIGHTS)[0]
    subject_plural = rng.random() < PLURAL_RATE
    return Item(rng, subject_plural, [subject_plural != (rng.random() < ATTRACTOR_RATE) for _ in range(n)])


def controlled(rng: random.Random, split: str) -> Item:
    subject_plural = rng.random() < 0.5
    if split == "mixed":
        n = rng.randint(2, 4)
        while True:
            attract = [rng.random() < 0.5 for _ in range(n)]
            if 0 < sum(attract) < n:
                break
    elif split == "attractors-0":
        attract = [False] * rng.randint(1, 4)
    else:
        attract = [True] * int(split[-1])
    return Item(rng, subject_plural, [subject_plural != a for a in attract])


def items_v1(draw: int) -> dict[str, list[Item]]:
    """Every split's items in version 1.0.0. Test sentences are unique and never occur in dev or
    train, but their prefixes may; dev and train follow the natural distribution, repeats included."""
    rng = random.Random(GENERATOR_SEED + draw)
    tested: set[tuple[str, ...]] = set()
    out: dict[str, list[Item]] = {}
    for split in TEST_SPLITS:
        chosen: list[Item] = []
        while len(chosen) < SIZES["test"]:
            item = controlled(rng, split)
            key = tuple(item.sentence())
            if key not in tested:
                tested.add(key)
                chosen.append(item)
        out[split] = chosen
    for split in ("dev", "train"):
        natural_items: list[Item] = []
        while len(natural_items) < SIZES[split]:
            item = natural(rng)
            if tuple(item.sentence()) not in tested:
                natural_items.append(item)
        out[split] = natural_items
    return out


def items(draw: int) -> dict[str, list[Item]]:
    """Every split's items (version 2.0.0): no test or dev prefix occurs in train or in another test
    split. Tests first (prefixes unique across the six), then train from the natural distribution
    without the tested prefixes, then dev from it without any prefix of train or the tests."""
    rng = random.Random(GENERATOR_SEED + draw)
    seen: set[tuple[str, ...]] = set()

    def unseen(size: int, make: Callable[[], Item], *, unique: bool) -> list[Item]:
        chosen: list[Item] = []
        taken: set[tuple[str, ...]] = set()
        while len(chosen) < size:
            item = make()
            prefix = tuple(item.prefix)
            if prefix not in seen and not (unique and prefix in taken):
                chosen.append(item)
                taken.add(prefix)
        return chosen

    out: dict[str, list[Item]] = {}
    for split in TEST_SPLITS:
        out[split] = unseen(SIZES["test"], partial(controlled, rng, split), unique=True)
        seen.update(tuple(item.prefix) for item in out[split])
    out["train"] = unseen(SIZES["train"], partial(natural, rng), unique=False)
    seen.update(tuple(item.prefix) for item in out["train"])
    out["dev"] = unseen(SIZES["dev"], partial(natural, rng), unique=False)
    return {split: out[split] for split in (*TEST_SPLITS, "dev", "train")}


class AttractorSuite(Suite):
    """Shared generation; subclasses encode items for their protocol."""

    breakdown_keys: ClassVar[tuple[str, ...]] = ("verb_kind", "construction", "subject_number")
    licence = GENERATED_LICENCE

    def drawn(self, draw: int) -> dict[str, list[Item]]:
        """The items of `draw`, by split (`items`; version 1.0.0 `items_v1`)."""
        return items(draw)

    def encode(self, item: Item, example_id: str, split: str) -> Example:
        raise NotImplementedError

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        return {
            split: [self.encode(item, f"{split}-{i:05d}", split) for i, item in enumerate(chosen)]
            for split, chosen in self.drawn(draw).items()
        }


SPLITS: list[SplitSpec] = [
    train_split(SIZES["train"], "LM training text, natural distribution"),
    dev_split(SIZES["dev"], "natural distribution (model selection)"),
    *(scored_split(name, SIZES["test"], TEST_ROLES[name], TEST_DESCRIPTIONS[name]) for name in TEST_SPLITS),
]

ATTRACTORS_V1 = SuiteSpec(
    id="agreement-attractors",
    version="1.0.0",
    family="agreement",
    protocol="minimal-pair",
    description="Subject-verb agreement across 0-4 intervening nouns: the sentence with the correct verb "
    "must be more probable than the one with the wrong form.",
    citation=CITATION,
    how_checked=CHECKED,
    deviations=DEVIATIONS,
    primary_metric="accuracy",
    higher_is_better=True,
    splits=SPLITS,
)
"""Version 1.0.0 of the minimal-pair member (superseded): whole sentences compared."""

CHANGELOG_V2 = (
    "2.0.0: no test or dev item's prefix occurs in train or in another test split (1.0.0 kept only test "
    "sentences out of train: 95 of attractors-0's and 152 of attractors-1's 500 prefixes, and 773 of dev's "
    "1,000, repeated a train prefix); every split is drawn anew."
)
CHECKED_V2 = """How it was checked (tests/suites/agreement/test_attractors.py): every item's attractor count, distance and
construction are recomputed from its words; no test or dev prefix occurs in train, and test prefixes are
unique across the six test splits (the overlap audit counts 0 repeated items); the oracle (which reads
the subject's number off the prefix, as the grammar defines agreement) scores 1.0; an n-gram model's
accuracy falls as attractors rise, the effect this suite exists to measure."""
"""How version 2.0.0 of the suites was checked (`SuiteSpec.how_checked`)."""
DEV_V2 = (
    "{what} from train's generator without any prefix of train or the tests: no sentence without "
    "intervening nouns, about 4 times train's share with an attractor (model selection)"
)
"""Version 2.0.0's dev split, as its description says it (`what`: LM text or prefixes)."""

ATTRACTORS = ATTRACTORS_V1.variant(
    version="2.0.0",
    description="Subject-verb agreement across 0-4 intervening nouns: after the prefix before the verb, the "
    "correct verb form must be more probable than the wrong one.",
    continuations=True,
    how_checked=CHECKED_V2,
    deviations=DEVIATIONS_V2,
    splits=[
        SPLITS[0],
        dev_split(SIZES["dev"], DEV_V2.format(what="LM text")),
        *SPLITS[2:],
    ],
    changelog=[
        f"{CHANGELOG_V2} The verb forms are continuations of the prefix before the verb, compared by "
        "p(verb | prefix) as Linzen et al., Gulordava et al. and Tran compare them; 1.0.0 compared whole "
        "sentences, the words after the verb and `</s>` included. Dev is language-model text (whole sentences)."
    ],
)
"""The minimal-pair member; the number-prediction member is its variant on the same items and splits."""


class AgreementAttractorsV1(AttractorSuite):
    """Minimal pairs of whole sentences, correct verb form against the wrong one (version 1.0.0, superseded)."""

    spec = ATTRACTORS_V1

    def drawn(self, draw: int) -> dict[str, list[Item]]:
        return items_v1(draw)

    def encode(self, item: Item, example_id: str, split: str) -> Example:
        if split == "train":
            return Example(id=example_id, input=item.sentence(), meta=item.meta)
        return Example(
            id=example_id,
            input=item.prefix,
            candidates=[item.sentence(True), item.sentence(False)],
            answer=0,
            meta=item.meta,
        )

    def oracle(self, splits: Mapping[str, Split]) -> AgreementOracle:
        return AgreementOracle()


class AgreementAttractors(AttractorSuite):
    """The correct verb form against the wrong one, as continuations of the prefix before the verb."""

    spec = ATTRACTORS
    superseded = (AgreementAttractorsV1,)

    def encode(self, item: Item, example_id: str, split: str) -> Example:
        if split in ("train", "dev"):
            return Example(id=example_id, input=item.sentence(), meta=item.meta)
        return Example(
            id=example_id, input=item.prefix, candidates=[[item.correct], [item.wrong]], answer=0, meta=item.meta
        )

    def oracle(self, splits: Mapping[str, Split]) -> AgreementOracle:
        return AgreementOracle()


SINGULAR_FORMS = {forms[0] for forms in VERBS.values()}
PLURAL_FORMS = {forms[1] for forms in VERBS.values()}


class AgreementOracle:
    """Gives a candidate log-probability 0 when its main verb agrees with the subject, else -1: a whole
    sentence (`logprob`, version 1.0.0) or a verb after its prefix (`loglikelihood`)."""

    name = "agreement-oracle"
    protocols = ("minimal-pair",)

    def logprob(self, sequences: list[list[str]]) -> list[float]:
        return [self._agrees(tokens[:2], tokens) for tokens in sequences]

    def loglikelihood(self, requests: list[tuple[list[str], list[str]]]) -> list[float]:
        return [self._agrees(prefix[:2], continuation) for prefix, continuation in requests]

    @staticmethod
    def _agrees(subject: list[str], tokens: list[str]) -> float:
        verb = next((t for t in tokens if t in SINGULAR_FORMS | PLURAL_FORMS), "")
        return 0.0 if (verb in PLURAL_FORMS) == (len(subject) > 1 and subject[1] in PLURAL_NOUNS) else -1.0


class NumberOracle:
    """Reads the subject's number off the prefix (the first noun), as the grammar defines it."""

    name = "number-oracle"
    protocols = ("classification",)

    def classify(self, inputs: list[list[str]], labels: list[str]) -> list[str]:
        return [LABELS[tokens[1] in PLURAL_NOUNS] for tokens in inputs]


NUMBER_V1 = ATTRACTORS_V1.variant(
    id="agreement-attractors-number",
    protocol="classification",
    description="Predict the number of the upcoming verb from the prefix before it, across 0-4 intervening "
    "nouns (Linzen et al.'s number-prediction task).",
    labels=LABELS,
)


class AgreementAttractorsNumberV1(AttractorSuite):
    """Number prediction: the verb's number from the prefix before it (version 1.0.0, superseded)."""

    spec = NUMBER_V1

    def drawn(self, draw: int) -> dict[str, list[Item]]:
        return items_v1(draw)

    def encode(self, item: Item, example_id: str, split: str) -> Example:
        return Example(id=example_id, input=item.prefix, label=LABELS[item.subject_plural], meta=item.meta)

    def oracle(self, splits: Mapping[str, Split]) -> NumberOracle:
        return NumberOracle()


class AgreementAttractorsNumber(AgreementAttractorsNumberV1):
    """Number prediction: the verb's number from the prefix before it; no test or dev prefix occurs in train."""

    spec = NUMBER_V1.variant(
        version="2.0.0",
        how_checked=CHECKED_V2,
        deviations=DEVIATIONS_V2,
        splits=[
            train_split(SIZES["train"], "prefixes with the verb's number, natural distribution"),
            dev_split(SIZES["dev"], DEV_V2.format(what="prefixes")),
            *SPLITS[2:],
        ],
        changelog=[CHANGELOG_V2],
    )

    def drawn(self, draw: int) -> dict[str, list[Item]]:
        return items(draw)

    superseded = (AgreementAttractorsNumberV1,)

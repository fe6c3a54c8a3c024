"""Sentence completion from a grammar (after the MSR Sentence Completion Challenge; Tran 2018 §4.6).

Five-way cloze items in the format of Zweig & Burges (2011): one word of a sentence removed,
the right word and four distractors of the same part of speech offered, each distractor
breaking the one constraint that the item tests (`meta["constraint"]`):

- `agreement`: `the dogs [sleep] often .`; distractors are intransitive verbs of the wrong number;
- `subcategorisation`: `the dog [eats] the bread .`; distractors are intransitive verbs;
- `selection`: `the dog [drinks] the water .`; distractors are transitive verbs whose object
  must be of another kind (eat: food, drink: drinks, read: texts, wear: clothes, play:
  instruments);
  (noun phrases are `the [adjective] noun`, intransitive verbs take an optional adverb)
- `long-distance`: `the dogs that the cat saw [sleep] .`; the verb agrees with the subject
  across an object relative clause whose noun has the other number, and the distractors are
  wrong-number verbs, so a model that looks only at the last few words cannot tell (in the
  training text the relative clause's noun has either number, so it is no cue).

Protocol forced-choice: the candidate whose whole sentence is most probable wins; ties count
wrong. Splits: train (20,000 grammatical sentences of the four shapes, as LM training text),
dev (500 items) and test (2,000 items, 500 per constraint; the answer's position is random).
Test sentences never occur in train.

Primary metric `accuracy` (higher is better; the challenge's measure, the share of items
whose right word wins), broken down by `constraint`.

Test role: `test` is in-distribution: each item's right sentence is a held-out sentence of
the grammar that generates the training text (long-distance items take the half of that
distribution whose relative-clause noun has the other number), so it measures how well a
language model learned that distribution, not extrapolation beyond it.

How the suites were checked, and where they deviate from the paper, are declared in their spec
(`CHECKED` and `DEVIATIONS` below: the spec's `how_checked` and `deviations`); the suite card shows both.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from structbench.specs import Example, Split, SuiteSpec, dev_split, scored_split, train_split
from structbench.suite import SourceFiles, Suite
from structbench.suites.common import GENERATED_LICENCE

CHECKED = """How it was checked (tests/suites/completion/test_grammar.py): in every item exactly one candidate is
grammatical under the grammar (the oracle, which is that grammaticality check, scores 1.0),
and a 4-gram model solves the local constraints far better than the long-distance one."""
"""How the suites of this module were checked against their paper (`SuiteSpec.how_checked`)."""
DEVIATIONS = """Deviation: the items come from a grammar with one constraint each, not from Holmes
sentences with n-gram-chosen impostors, so the numbers are not comparable with the
challenge's; the real challenge files are read by `msr-sentence-completion`
(structbench.suites.completion.msr)."""
"""Where the suites of this module depart from their paper, and why (`SuiteSpec.deviations`)."""

SUBJECTS = {
    "dog": "dogs", "cat": "cats", "child": "children", "farmer": "farmers", "teacher": "teachers", "girl": "girls",
    "boy": "boys", "nurse": "nurses", "pilot": "pilots", "singer": "singers",
}  # fmt: skip
ADJECTIVES = ("old", "young", "tall", "happy", "small", "quiet")
ADVERBS = ("often", "again", "now", "quietly")
PLURALS = set(SUBJECTS.values())
INTRANSITIVE = {"sleep": "sleeps", "laugh": "laughs", "wait": "waits", "run": "runs"}
OBJECTS = {
    "eat": ("bread", "apple", "soup", "cake"),
    "drink": ("water", "milk", "tea", "juice"),
    "read": ("book", "letter", "poem", "note"),
    "wear": ("coat", "hat", "scarf", "dress"),
    "play": ("piano", "drum", "flute", "violin"),
}
THIRD_PERSON = {**INTRANSITIVE, **{verb: verb + "s" for verb in OBJECTS}}
CONSTRAINTS = ("agreement", "subcategorisation", "selection", "long-distance")
SIZES = {"train": 20_000, "dev": 500, "test": 2_000}
GENERATOR_SEED = 20110601
CITATION = (
    "Zweig & Burges 2011, The Microsoft Research Sentence Completion Challenge; Tran 2018, Predicting and "
    "discovering linguistic structure with neural networks (thesis, §4.6)"
)


def form(verb: str, plural: bool) -> str:
    return verb if plural else THIRD_PERSON[verb]


def lemma(word: str) -> tuple[str, bool] | None:
    """(verb, is the plural form) of a present-tense verb form, or None."""
    for verb, third in THIRD_PERSON.items():
        if word == verb:
            return verb, True
        if word == third:
            return verb, False
    return None


def _noun_phrase(words: Sequence[str], i: int) -> tuple[bool, int] | None:
    """(is plural, next index) of `the [adjective] noun` at i, or None."""
    if i >= len(words) or words[i] != "the":
        return None
    i += 1
    if i < len(words) and words[i] in ADJECTIVES:
        i += 1
    if i >= len(words) or (words[i] not in SUBJECTS and words[i] not in PLURALS):
        return None
    return words[i] in PLURALS, i + 1


def grammatical(tokens: Sequence[str]) -> bool:
    """Whether a sentence belongs to the grammar (the oracle's test)."""
    words = list(tokens)
    subject = _noun_phrase(words, 0)
    if subject is None or words[-1:] != ["."]:
        return False
    plural, i = subject
    if words[i : i + 1] == ["that"]:
        inner = _noun_phrase(words, i + 1)
        if inner is None or words[inner[1] : inner[1] + 1] != ["saw"]:
            return False
        i = inner[1] + 1
    verb = lemma(words[i]) if i < len(words) else None
    if verb is None or verb[1] != plural:
        return False
    rest = words[i + 1 : -1]
    if verb[0] in INTRANSITIVE:
        return rest == [] or (len(rest) == 1 and rest[0] in ADVERBS)
    return len(rest) == 2 and rest[0] == "the" and rest[1] in OBJECTS[verb[0]]


def _subject(rng: random.Random, plural: bool) -> list[str]:
    noun = rng.choice(list(SUBJECTS))
    adjective = [rng.choice(ADJECTIVES)] if rng.random() < 0.5 else []
    return ["the", *adjective, SUBJECTS[noun] if plural else noun]


def make_item(rng: random.Random, constraint: str, attract: bool = True) -> tuple[list[str], int, list[str]]:
    """(sentence with the slot, slot position, [answer, four distractors]).

    In a long-distance item the relative clause's noun has the other number (`attract`);
    training sentences draw its number independently, so that it carries no cue.
    """
    plural = rng.random() < 0.5
    subject = _subject(rng, plural)
    if constraint in ("agreement", "long-distance"):
        verb = rng.choice(list(INTRANSITIVE))
        prefix = list(subject)
        if constraint == "long-distance":
            inner_plural = (not plural) if attract else rng.random() < 0.5
            prefix += ["that", *_subject(rng, inner_plural), "saw"]
        adverb = [rng.choice(ADVERBS)] if rng.random() < 0.5 else []
        distractors = [form(v, not plural) for v in INTRANSITIVE]
        return [*prefix, form(verb, plural), *adverb, "."], len(prefix), [form(verb, plural), *distractors]
    verb = rng.choice(list(OBJECTS))
    sentence = [*subject, form(verb, plural), "the", rng.choice(OBJECTS[verb]), "."]
    if constraint == "subcategorisation":
        distractors = [form(v, plural) for v in INTRANSITIVE]
    else:
        distractors = [form(v, plural) for v in OBJECTS if v != verb]
    return sentence, len(subject), [form(verb, plural), *distractors]


def sample_sentence(rng: random.Random) -> list[str]:
    sentence, _, _ = make_item(rng, rng.choice(CONSTRAINTS), attract=False)
    return sentence


class GrammarScorer:
    """Log-probability 0 for grammatical sentences and -1 for the rest (the oracle)."""

    name = "grammar-oracle"
    protocols = ("forced-choice", "minimal-pair")

    def logprob(self, sequences: list[list[str]]) -> list[float]:
        return [0.0 if grammatical(s) else -1.0 for s in sequences]


class SentenceCompletion(Suite):
    """Five-way cloze items from a grammar, one constraint per item."""

    spec = SuiteSpec(
        id="sentence-completion",
        version="1.0.0",
        family="completion",
        protocol="forced-choice",
        description="Pick the word that completes a sentence among five; distractors break number agreement, "
        "subcategorisation, selectional restrictions, or agreement across a relative clause.",
        citation=CITATION,
        how_checked=CHECKED,
        deviations=DEVIATIONS,
        primary_metric="accuracy",
        higher_is_better=True,
        recipe="sentence-completion",
        splits=[
            train_split(SIZES["train"], "LM training text"),
            dev_split(SIZES["dev"], "cloze items of the test's kind (model selection)"),
            scored_split("test", SIZES["test"], "in-distribution", "500 items per constraint"),
        ],
    )
    breakdown_keys = ("constraint",)
    licence = GENERATED_LICENCE

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        rng = random.Random(GENERATOR_SEED + draw)
        tested: set[tuple[str, ...]] = set()

        def items(prefix: str, size: int) -> list[Example]:
            out: list[Example] = []
            while len(out) < size:
                constraint = CONSTRAINTS[len(out) % len(CONSTRAINTS)]
                sentence, slot, words = make_item(rng, constraint)
                if tuple(sentence) in tested:
                    continue
                tested.add(tuple(sentence))
                order = list(range(5))
                rng.shuffle(order)
                candidates = [[*sentence[:slot], words[i], *sentence[slot + 1 :]] for i in order]
                out.append(
                    Example(
                        id=f"{prefix}-{len(out):05d}",
                        input=[*sentence[:slot], "_", *sentence[slot + 1 :]],
                        candidates=candidates,
                        answer=order.index(0),
                        meta={"constraint": constraint},
                    )
                )
            return out

        test = items("test", SIZES["test"])
        dev = items("dev", SIZES["dev"])
        train: list[Example] = []
        while len(train) < SIZES["train"]:
            sentence = sample_sentence(rng)
            if tuple(sentence) not in tested:
                train.append(Example(id=f"train-{len(train):05d}", input=sentence))
        return {"train": train, "dev": dev, "test": test}

    def oracle(self, splits: Mapping[str, Split]) -> GrammarScorer:
        return GrammarScorer()

"""BLiMP, the Benchmark of Linguistic Minimal Pairs for English (Warstadt et al. 2020).

Reproduces the 67 paradigms of Warstadt, Parrish, Liu, Mohananey, Peng, Wang & Bowman 2020
(TACL 8, 377-392), as their repository publishes them (github.com/alexwarstadt/blimp, commit
3e56b06, `BLiMP.zip`: `data/<UID>.jsonl`, 1,000 pairs each), one test split per paradigm named
by its `UID`. Each item is a pair of sentences that differ minimally, one acceptable and one not;
a language model passes it when it gives the acceptable one the higher probability. The 67
paradigms belong to 12 phenomena (`linguistics_term`: anaphor agreement, argument structure,
binding, control/raising, determiner-noun agreement, ellipsis, filler-gap, irregular forms,
islands, NPI licensing, quantifiers, subject-verb agreement) and 4 fields (`field`: morphology,
syntax, semantics, syntax_semantics).

Sentences are scored as lm-evaluation-harness 0.4's `blimp` task scores them, so that a user
moving from it gets the same log-probability for every sentence: each sentence is a continuation
of an empty context (`input` is empty, the spec's `continuations`), asked through
`loglikelihood`; a language model returns the summed natural-log probability of the sentence's
tokens given its start token alone, with no end token and no length normalisation (the Hugging
Face adapter reads the text `" " + sentence` after the tokenizer's BOS, or EOS where it has none,
as lm-eval's `HFLM` does).

Ties. The primary metric `accuracy` is the paper's rule and every structbench minimal-pair
suite's: a pair is right when the acceptable sentence is strictly more probable, so a tie counts
wrong. `accuracy_lm_eval` is lm-eval's `acc`, whose code takes `np.argmax([ll_good, ll_bad])` and
compares it with the gold index 0: numpy returns the first of equal values, so a tie counts
right. The two differ by exactly the share of tied pairs; a user of lm-eval finds its number in
`accuracy_lm_eval`. The strict rule ranks because lm-eval's would rank a model that scores every
sentence alike (one that learned nothing) at 100%. Seven upstream pairs hold the same sentence
twice (`IDENTICAL_PAIRS`): every model ties on them, so under the strict rule none passes them,
the oracle included (its ceiling is 0.998 on passive_1 and 0.995 on principle_A_case_2), and
lm-eval counts them right for every model.

The suite score is the unweighted mean of the 67 paradigm accuracies (every split is a ranked
generalisation split of 1,000 pairs), the overall number of the paper's Table 3 and of
lm-eval's `blimp` group (`weight_by_size: False`).

Every example keeps `field`, `linguistics_term`, `one_prefix_method`, `two_prefix_method` and
`pairID` as metadata; the primary metric is broken down by `linguistics_term` and `field`.

Protocol minimal-pair, zero-shot: the train split is empty (the paper's models were trained on
their own corpora; a user's language model brings its own training). Models that learn from a
suite's train sentences (`ngram`, `unigram`, the neural LMs without `train_on`) are `n/a` here
with that reason. Test role: generalisation, every paradigm; the data is generated from
expert-written grammars, outside any training text.

The authors' published per-paradigm accuracies (`raw_results/summary/models_summary.jsonl`
after the 2021 erratum: 5-gram, LSTM, Transformer-XL, GPT-2 large) and human agreement
(`human_validation_summary.csv`) are reference rows in `structbench/analysis/references.yaml`;
`PUBLISHED_MODELS` and `PUBLISHED_HUMANS` pin those files, which the tests read to check every
number and the corrected Table 3's means.

How the suite was checked, and where it deviates from the paper, are declared in its spec
(`CHECKED` and `DEVIATIONS` below: the spec's `checked` and `deviations`); the suite card shows both.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from structbench.data.sources import SourceFile
from structbench.errors import UserError
from structbench.scoring import PerExample
from structbench.specs import Example, Split, SuiteSpec, scored_split, train_split
from structbench.suite import SourceFiles, Suite
from structbench.suites.common import PUBLISHED_FIX, GoldPairScorer

COMMIT = "3e56b06fcabca9b30822fc66435fca6b1aa40bb1"
REPOSITORY = f"https://raw.githubusercontent.com/alexwarstadt/blimp/{COMMIT}"
DATA = SourceFile(
    path="blimp/BLiMP.zip",
    url=f"{REPOSITORY}/BLiMP.zip",
    sha256="172a1a714d72e72a89e8384dd531483f3d0f8a9aee3d33dccaf7992d8cecbb73",
)
PUBLISHED_MODELS = SourceFile(
    path="blimp/models_summary.jsonl",
    url=f"{REPOSITORY}/raw_results/summary/models_summary.jsonl",
    sha256="d54b1b361559eec9182f89930d5012af89d1a35d8e2ff435637b3166e2e3037a",
)
"""The authors' per-paradigm (and per-phenomenon, and overall) accuracy of their four models, as
corrected on 16 August 2021: the source of the suite's published reference rows."""
PUBLISHED_HUMANS = SourceFile(
    path="blimp/human_validation_summary.csv",
    url=f"{REPOSITORY}/raw_results/summary/human_validation_summary.csv",
    sha256="ea0e7c21de6b9df2fd8a94d0b175e84ea57627e4cbfa1fcba4ef8b3d0fba1b2d",
)
"""The authors' human validation per paradigm (`total_mean`: individual annotators' agreement with the
gold label), the source of the human reference row."""
CITATION = (
    "Warstadt, Parrish, Liu, Mohananey, Peng, Wang & Bowman 2020, BLiMP: The Benchmark of Linguistic Minimal "
    "Pairs for English (TACL 8, 377-392; corrected version of August 2021)"
)

PARADIGMS: dict[str, tuple[str, ...]] = {
    "anaphor_agreement": ("anaphor_gender_agreement", "anaphor_number_agreement"),
    "argument_structure": (
        "animate_subject_passive",
        "animate_subject_trans",
        "causative",
        "drop_argument",
        "inchoative",
        "intransitive",
        "passive_1",
        "passive_2",
        "transitive",
    ),
    "binding": (
        "principle_A_c_command",
        "principle_A_case_1",
        "principle_A_case_2",
        "principle_A_domain_1",
        "principle_A_domain_2",
        "principle_A_domain_3",
        "principle_A_reconstruction",
    ),
    "control_raising": (
        "existential_there_object_raising",
        "existential_there_subject_raising",
        "expletive_it_object_raising",
        "tough_vs_raising_1",
        "tough_vs_raising_2",
    ),
    "determiner_noun_agreement": (
        "determiner_noun_agreement_1",
        "determiner_noun_agreement_2",
        "determiner_noun_agreement_irregular_1",
        "determiner_noun_agreement_irregular_2",
        "determiner_noun_agreement_with_adj_2",
        "determiner_noun_agreement_with_adj_irregular_1",
        "determiner_noun_agreement_with_adj_irregular_2",
        "determiner_noun_agreement_with_adjective_1",
    ),
    "ellipsis": ("ellipsis_n_bar_1", "ellipsis_n_bar_2"),
    "filler_gap_dependency": (
        "wh_questions_object_gap",
        "wh_questions_subject_gap",
        "wh_questions_subject_gap_long_distance",
        "wh_vs_that_no_gap",
        "wh_vs_that_no_gap_long_distance",
        "wh_vs_that_with_gap",
        "wh_vs_that_with_gap_long_distance",
    ),
    "irregular_forms": ("irregular_past_participle_adjectives", "irregular_past_participle_verbs"),
    "island_effects": (
        "adjunct_island",
        "complex_NP_island",
        "coordinate_structure_constraint_complex_left_branch",
        "coordinate_structure_constraint_object_extraction",
        "left_branch_island_echo_question",
        "left_branch_island_simple_question",
        "sentential_subject_island",
        "wh_island",
    ),
    "npi_licensing": (
        "matrix_question_npi_licensor_present",
        "npi_present_1",
        "npi_present_2",
        "only_npi_licensor_present",
        "only_npi_scope",
        "sentential_negation_npi_licensor_present",
        "sentential_negation_npi_scope",
    ),
    "quantifiers": (
        "existential_there_quantifiers_1",
        "existential_there_quantifiers_2",
        "superlative_quantifiers_1",
        "superlative_quantifiers_2",
    ),
    "subject_verb_agreement": (
        "distractor_agreement_relational_noun",
        "distractor_agreement_relative_clause",
        "irregular_plural_subject_verb_agreement_1",
        "irregular_plural_subject_verb_agreement_2",
        "regular_plural_subject_verb_agreement_1",
        "regular_plural_subject_verb_agreement_2",
    ),
}
"""The 12 phenomena of the paper's Table 3 (by `linguistics_term`, in its order) and their paradigms
(by `UID`): the suite's splits, in this order."""
PHENOMENON = {uid: phenomenon for phenomenon, uids in PARADIGMS.items() for uid in uids}
"""Paradigm `UID` -> its phenomenon."""
PAIRS_PER_PARADIGM = 1000
TERMS = {"s-selection": "argument_structure"}
"""`linguistics_term` spellings of the data files -> the phenomenon the paper and the authors' results
file count them under (`animate_subject_passive` and `animate_subject_trans`)."""
FIELDS = {"syntax/semantics": "syntax_semantics"}
"""`field` spellings of the data files -> the one the other paradigms of that field use (`principle_A_case_2`)."""
FIELD_NAMES = ("morphology", "syntax", "semantics", "syntax_semantics")
FLAGS = ("one_prefix_method", "two_prefix_method")
IDENTICAL_PAIRS = 7
"""Pairs whose acceptable and unacceptable sentences are the same string upstream (2 of `passive_1`, 5 of
`principle_A_case_2`): a tie for every model."""

CHECKED = """How it was checked (tests/suites/test_blimp.py): built from the pinned BLiMP.zip, 67 splits of 1,000
pairs each with pairIDs 0-999, every pair's sentences as upstream (whitespace tokens rejoined give the published
string); 12 phenomena and 4 fields; the oracle scores 1.0 on every split but passive_1 and principle_A_case_2,
where the 7 identical pairs tie (accuracy_lm_eval 1.0 everywhere); the manifest matches. Scoring was
checked against lm-evaluation-harness 0.4.9.2 read line by line (lm_eval/tasks/blimp/_template_yaml: empty
context, choices [sentence_good, sentence_bad], target 0, metric acc; lm_eval/api/model.py TemplateLM.loglikelihood:
an empty context becomes the prefix token and the continuation " " + sentence is encoded without special tokens;
lm_eval/models/huggingface.py: the prefix token is BOS, else EOS; lm_eval/api/task.py: acc = argmax(lls) == gold)
and against a direct transformers forward pass on a small GPT-2 with a byte-level BPE tokenizer (per-sentence
log-probabilities within 1e-4), ties included (the hf adapter's BLiMP tests). The published rows' means over
the 67 paradigms equal the corrected Table 3 (61.2, 69.8, 69.6, 83.0; human 88.6)."""
"""How the suite was checked against its paper and lm-eval (`SuiteSpec.checked`)."""
DEVIATIONS = f"""Deviation: sentences are scored as lm-evaluation-harness scores them rather than with the paper's
own code: log p of each sentence after the model's start token, with no end token (the paper's models scored whole
sentences with their own tools). A tie counts wrong in `accuracy`, as in the paper; lm-eval counts it right, which
`accuracy_lm_eval` reports. {IDENTICAL_PAIRS} pairs hold the same sentence twice upstream (2 of passive_1, 5 of
principle_A_case_2), a tie for every model: kept as published, so no model reaches 1.0 there under the strict rule.
Two paradigms' linguistics_term is `s-selection` in the data files (animate_subject_passive, animate_subject_trans);
the paper and the authors' results file count them under argument_structure, and so does the suite (12 phenomena).
principle_A_case_2's field is spelled `syntax/semantics` upstream and `syntax_semantics` here, as for the other
binding paradigms."""
"""Where the suite departs from the paper, and why (`SuiteSpec.deviations`)."""


def _malformed(uid: str, line: int, problem: str) -> UserError:
    return UserError(f"{DATA.path}: data/{uid}.jsonl line {line} {problem}; {PUBLISHED_FIX}.")


def _pair(uid: str, line: int, row: Any) -> Example:
    """One upstream row as an example: the two sentences as continuations of an empty context."""
    if not isinstance(row, dict):
        raise _malformed(uid, line, "is not a JSON object")
    sentences = [row.get("sentence_good"), row.get("sentence_bad")]
    flags = [row.get(flag) for flag in FLAGS]
    pair_id = row.get("pairID")
    if (
        not all(isinstance(s, str) and s.split() and " ".join(s.split()) == s for s in sentences)
        or not all(isinstance(flag, bool) for flag in flags)
        or not (isinstance(pair_id, str) and pair_id.isascii() and pair_id.isdigit())
        or row.get("UID") != uid
    ):
        raise _malformed(
            uid,
            line,
            "lacks two single-spaced sentences, the prefix-method flags, a numeric pairID or its own UID",
        )
    term = str(row.get("linguistics_term"))
    field = str(row.get("field"))
    phenomenon, area = TERMS.get(term, term), FIELDS.get(field, field)
    if phenomenon != PHENOMENON[uid] or area not in FIELD_NAMES:
        raise _malformed(uid, line, f"has linguistics_term {term!r} and field {field!r}, not those of {uid}")
    good, bad = (str(s).split() for s in sentences)
    return Example(
        id=f"{uid}-{pair_id}",
        input=[],
        candidates=[good, bad],
        answer=0,
        meta={
            "field": area,
            "linguistics_term": phenomenon,
            "one_prefix_method": bool(flags[0]),
            "two_prefix_method": bool(flags[1]),
            "pairID": int(pair_id),
        },
    )


def parse_paradigm(uid: str, text: str) -> list[Example]:
    """The 1,000 pairs of one paradigm's JSON-lines file, in file order, with pairIDs 0-999."""
    examples = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            raise _malformed(uid, number, "is not JSON") from None
        examples.append(_pair(uid, number, row))
    if sorted(int(e.meta["pairID"]) for e in examples) != list(range(PAIRS_PER_PARADIGM)):
        raise UserError(
            f"{DATA.path}: data/{uid}.jsonl holds {len(examples)} pairs, not pairIDs 0-{PAIRS_PER_PARADIGM - 1} once "
            f"each; {PUBLISHED_FIX}."
        )
    return examples


def read_paradigms(archive: zipfile.ZipFile) -> dict[str, list[Example]]:
    """Every paradigm's pairs from the BLiMP zip, by UID, in the order of `PARADIGMS`."""
    names = set(archive.namelist())
    missing = [uid for uid in PHENOMENON if f"data/{uid}.jsonl" not in names]
    if missing:
        raise UserError(f"{DATA.path} lacks data/{missing[0]}.jsonl (and {len(missing) - 1} more); {PUBLISHED_FIX}.")
    return {uid: parse_paradigm(uid, archive.read(f"data/{uid}.jsonl").decode("utf-8")) for uid in PHENOMENON}


def lm_eval_verdicts(examples: Sequence[Example], predictions: Sequence[Any]) -> list[float | None]:
    """lm-evaluation-harness's `acc` per pair: 1 when the gold candidate is the first of the largest
    log-probabilities (numpy's `argmax` order), so a tie between good and bad counts right."""
    verdicts: list[float | None] = []
    for example, scores in zip(examples, predictions, strict=True):
        values = [float(value) for value in scores]
        verdicts.append(float(values.index(max(values)) == (example.answer or 0)))
    return verdicts


class Blimp(Suite):
    """BLiMP's 67 paradigms of 1,000 minimal pairs, scored as lm-evaluation-harness scores them."""

    spec = SuiteSpec(
        id="blimp",
        version="1.0.0",
        family="syntax",
        protocol="minimal-pair",
        description="67 paradigms of 1,000 English minimal pairs (an acceptable and an unacceptable sentence) in "
        "12 phenomena of morphology, syntax and semantics: a language model must find the acceptable sentence more "
        "probable (a tie counts wrong). Sentences are scored as lm-evaluation-harness's blimp task scores them, and "
        "accuracy_lm_eval is its acc (a tie counts right).",
        citation=CITATION,
        how_checked=CHECKED,
        deviations=DEVIATIONS,
        primary_metric="accuracy",
        higher_is_better=True,
        continuations=True,
        splits=[
            train_split(0, "empty: models bring their own training"),
            *(
                scored_split(uid, PAIRS_PER_PARADIGM, "generalisation", f"a paradigm of {phenomenon.replace('_', ' ')}")
                for phenomenon, uids in PARADIGMS.items()
                for uid in uids
            ),
        ],
    )
    sources = (DATA,)
    # github.com/alexwarstadt/blimp, README at 3e56b06: "BLiMP is distributed under a CC-BY license"
    licence = "CC BY 4.0 (the licence the BLiMP repository's README states)"
    breakdown_keys: ClassVar[tuple[str, ...]] = ("linguistics_term", "field")
    split_groups = PARADIGMS
    """The paper's 12 phenomena (its Table 3's columns), each its paradigms: on the suite page, every measured
    and published row's mean over a phenomenon's paradigms, as the authors' results file averages them."""

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        try:
            with zipfile.ZipFile(files.path(DATA.path)) as archive:
                paradigms = read_paradigms(archive)
        except (zipfile.BadZipFile, UnicodeDecodeError):
            raise UserError(f"{DATA.path} is not a readable zip of UTF-8 files; {PUBLISHED_FIX}.") from None
        return {"train": [], **paradigms}

    def extra_metrics(
        self, split: str, examples: Sequence[Example], predictions: Sequence[Any]
    ) -> Mapping[str, PerExample]:
        """`accuracy_lm_eval`, lm-evaluation-harness's `acc` (a tie counts right), beside the protocol's
        `accuracy` (the paper's rule: a tie counts wrong)."""
        return {"accuracy_lm_eval": lm_eval_verdicts(examples, predictions)}

    def oracle(self, splits: Mapping[str, Split]) -> GoldPairScorer:
        return GoldPairScorer(*(splits[uid] for uid in PHENOMENON))

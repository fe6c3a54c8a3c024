"""SyntaxGym: the 34 targeted-syntax test suites of Hu, Gauthier, Qian, Wilcox & Levy (2020).

Reproduces the evaluation of "A systematic assessment of syntactic generalization in neural
language models" (ACL 2020): 34 test suites, 842 items (`test_suites/json/*.json` of
github.com/cpllab/syntactic-generalization at commit 2f42038 of its `nextflow` branch, the commit
the authors' pipeline ran). Each item is a set of conditions of one sentence frame, each condition
cut into numbered regions; each suite states one or more predictions, formulas over the regions'
surprisals (`structbench.suites.syntaxgym_formula`). A model gives the surprisal in bits of every
region of every condition (protocol `region-surprisal`; `structbench.protocols.REGION_RULE` says
which sub-word tokens make up a region); an item is right when all its suite's predictions hold,
and a suite's accuracy is the share of its items that are right, as syntaxgym-core's `evaluate`
and the authors' analysis compute them.

One test split per test suite, named by its file (`mvrr`, `npi_orc_any`, ...); the train split is
empty (the paper's models were trained on their own corpora; a user's language model brings its
own training). Each example is one item: its id is `SUITE-N` and its meta holds `item` (N, the
suite file's `item_number`, from 1) and `circuit`, so a later reader of the authors' per-item
results (`sg_results/*.csv`: model, suite, item, correct) pairs items by (split, item); those files
number each suite's items 0 to n - 1, which reads as N - 1 (their pipeline's order is not recorded).

The headline, the **SyntaxGym score**, is the suite score (`structbench.analysis.suite_score`): the
unweighted mean of the suite accuracies over the 31 suites the paper analyses. Its analysis drops
`fgd-embed3`, `fgd-embed4` and `nn-nv-rpl` (`exclude_suite_re` in `notebooks/main.py` at the results
commit 43f1f86, line 84); those three splits are scored and shown but not ranked, so the score
leaves them out. The paper's six circuits are `CIRCUITS`, the map of `notebooks/main.py` lines 36-48
(a suite's tag is its name up to the first `-`, `_` or digit, line 122); `circuit_scores` breaks the
score down by them, each circuit the unweighted mean of its suites' accuracies, as the notebook's
`joined_data_circuits` (lines 188-190 and 227) averages them.

How it was checked and where it deviates: `CHECKED` and `DEVIATIONS` below (the spec's `checked` and
`deviations`); the suite card shows both.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from structbench.data.sources import SourceFile
from structbench.errors import UserError
from structbench.scoring import PerExample
from structbench.specs import Condition, Example, SuiteSpec, scored_split, train_split
from structbench.suite import SourceFiles, Suite
from structbench.suites.common import PUBLISHED_FIX
from structbench.suites.syntaxgym_formula import Claim, FormulaError, check_references, parse_formula

COMMIT = "2f42038477a9f03ab66f308a963ed49864cd8111"
"""github.com/cpllab/syntactic-generalization, branch `nextflow`: the suites the paper's pipeline ran."""
RESULTS_COMMIT = "43f1f86b746254406dafc89bd17b9d4976607ef6"
"""The same repository's `master` at the published results and the analysis notebook (`notebooks/main.py`)."""

SUITES: dict[str, tuple[int, str, str]] = {
    "center_embed": (
        28,
        "ca6a4d995c5ae1ecb3292d5223768131756347930fef2a169bb72e00f40ae99e",
        "center embedding: after two nested subjects, the verbs in their plausible order are less surprising",
    ),
    "center_embed_mod": (
        28,
        "43b0fe0a53187dc26e3286212de0fba43ed6fe569a9925fba1dd41da037dc0b0",
        "center embedding, as center_embed with a modifier on the embedded subject",
    ),
    "cleft": (
        40,
        "03e937690d16ba6bde38fea52c87d1e98f8a18d7a964e85a5e524c77118da354",
        "pseudo-clefts: `What he did was` must go on with a verb phrase, `What he ate was` with a noun phrase",
    ),
    "cleft_modifier": (
        40,
        "b57cc1453e1cb2ab1fc5c82c58c7df3277540d6ff008ebdbabca17ca09c3147a",
        "pseudo-clefts, as cleft with a modifier in the clause",
    ),
    "fgd-embed3": (
        21,
        "1f696306be38bf8307aedee40f00b1c3dc54314594c01c610d528d156a10e4e0",
        "a filler-gap dependency across three sentential embeddings (not analysed in the paper)",
    ),
    "fgd-embed4": (
        21,
        "2ada2070a4341d6fb1d3e936383f2912c7ba9af74b89c0e8bc26a2080a2d7b04",
        "a filler-gap dependency across three embeddings without complementizers (not analysed in the paper)",
    ),
    "fgd_hierarchy": (
        24,
        "564623ca70fbfa1b4c982514d00ec1bf6a7e147bd9b958764c7d28dee888baef",
        "filler-gap dependencies: a wh-filler licenses a gap only where the hierarchy allows it",
    ),
    "fgd_object": (
        24,
        "27f0be66bf05be967215235bfcbff6b1f63a2c8ac4de92890d5cc06d4eb0a004",
        "filler-gap dependencies: a wh-filler makes an object gap expected and a filled object surprising",
    ),
    "fgd_pp": (
        24,
        "02f1cf5cc2f66c8e137e45b8b95339088be612d0a8e64f593f731addfcf8e80a",
        "filler-gap dependencies: a wh-filler makes a gap in a prepositional phrase expected",
    ),
    "fgd_subject": (
        24,
        "f539a32e085b35c0887a662fadc1a2d4bae7962b556a172371b71b96dca2d005",
        "filler-gap dependencies: a wh-filler makes a subject gap expected",
    ),
    "mvrr": (
        28,
        "cc524182cced457f3acb546b321479046cb249209eda634c4729fca059ce03d5",
        "main-verb/reduced-relative garden paths: the disambiguating verb is surprising after an ambiguous reduced relative",
    ),
    "mvrr_mod": (
        28,
        "f8d570a8066fd3b20d3b14718a856b1dbb452a776727e2bd371ac2544d2271b6",
        "main-verb/reduced-relative garden paths, with a modifier before the disambiguation",
    ),
    "nn-nv-rpl": (
        1,
        "7b06181fe8aa7cc6d3c3a224485b3023be2be638ca2ae16ef2dc1ee2c74d4dec",
        "noun-noun/noun-verb ambiguity, one item (not analysed in the paper)",
    ),
    "npi_orc_any": (
        38,
        "20f8b9f325db3b73475da846e5638008320a0cd54b3208f201888d6fff8ef013",
        "NPI licensing: `any` is licensed by a negation that commands it, not one inside an object relative",
    ),
    "npi_orc_ever": (
        38,
        "5de2e6c0cd8ade080a0371e2f4a0fe47c3969593e166de0214633758de1ade58",
        "NPI licensing: `ever` is licensed by a negation that commands it, not one inside an object relative",
    ),
    "npi_src_any": (
        38,
        "23386ddfa6b3028a4822a8e7271ad6f3da5d859990a5985c999bf10d8821a210",
        "NPI licensing: `any` is licensed by a negation that commands it, not one inside a subject relative",
    ),
    "npi_src_ever": (
        38,
        "ef8d105e18104a959f87275515a291d66ddd0a408227a07215d2526fee91219f",
        "NPI licensing: `ever` is licensed by a negation that commands it, not one inside a subject relative",
    ),
    "npz_ambig": (
        24,
        "3ee88ad4d8b5bb6f1c1ff8fbec1abff48c4c08770e0e2198bf2dbe030cff9097",
        "NP/Z garden paths: the main verb is surprising after an optionally transitive verb without a comma",
    ),
    "npz_ambig_mod": (
        24,
        "8635ee5c6140e2d758036501a83d078e32c942f55b9d620615512a7a7d03f1d1",
        "NP/Z garden paths (verb transitivity), with a modifier on the ambiguous noun phrase",
    ),
    "npz_obj": (
        24,
        "2ed685e7c4f1751bf1e2010c44ad95a258cd4a56c775783a053e4755727396eb",
        "NP/Z garden paths: an overt object removes the garden path when no comma does",
    ),
    "npz_obj_mod": (
        24,
        "b9f7d95f4f492ce0d669f77c8213fddbef1ed2436591f00f39599ae40bb112cb",
        "NP/Z garden paths (overt object), with a modifier on the ambiguous noun phrase",
    ),
    "number_orc": (
        19,
        "00181083637beef504a14f63b61da81b73d162d559ffbff245f3a6ee094d2dac",
        "subject-verb number agreement across an object relative clause",
    ),
    "number_prep": (
        19,
        "4af16c9eb6730a987871411e0c068396774922451eccef52c85be03da64aa927",
        "subject-verb number agreement across a prepositional phrase",
    ),
    "number_src": (
        19,
        "477ae9f18447ee80017170ccdacca92c871abc2804734728359671ae408ae395",
        "subject-verb number agreement across a subject relative clause",
    ),
    "reflexive_orc_fem": (
        19,
        "ee9c4231eb6c70fc15eb44af086d12066d4a594df9939f818c59b393666fb10b",
        "reflexive number agreement (herself/themselves) across an object relative clause",
    ),
    "reflexive_orc_masc": (
        19,
        "47f2ac0a44840c5bdd66a012eba73ea7d0888a64625bad5089cb604b7d3475a5",
        "reflexive number agreement (himself/themselves) across an object relative clause",
    ),
    "reflexive_prep_fem": (
        19,
        "8cf12dc4299e359a7cd22ea4ad6fdd6fbaac803b91da7d731f53d0d256472f9c",
        "reflexive number agreement (herself/themselves) across a prepositional phrase",
    ),
    "reflexive_prep_masc": (
        19,
        "4b5cfd53523130d38712a2d69ac17b0707002a537ec9cad2faf85e23a57b21ad",
        "reflexive number agreement (himself/themselves) across a prepositional phrase",
    ),
    "reflexive_src_fem": (
        19,
        "8190bee48a37fd9424869d67ae64c2483fd48b6ba9e00ad255c677b9c3a0bf15",
        "reflexive number agreement (herself/themselves) across a subject relative clause",
    ),
    "reflexive_src_masc": (
        19,
        "c55e934ed168d7cc73929cedd285d590c6082e8a1df924a6192c8d3067874447",
        "reflexive number agreement (himself/themselves) across a subject relative clause",
    ),
    "subordination": (
        23,
        "255fba70b50ad752529bea5ad9c9412686b255b1edce4e201ac3eac27345bc19",
        "subordination: a subordinate clause makes a sentence end surprising and a matrix clause expected",
    ),
    "subordination_orc-orc": (
        23,
        "8d991184b6b7a2a35add7f958e512064617a1d51c8d3826970bfe9711b5fd80d",
        "subordination, with object relatives on the subject and object",
    ),
    "subordination_pp-pp": (
        23,
        "55ddea651892519030f917f6ece222fc237345fb256219dbf152948a646f24c8",
        "subordination, with prepositional phrases on the subject and object",
    ),
    "subordination_src-src": (
        23,
        "d97a38a7a2e7e1f870fc8c78cf648c4570090d5efdccec99cb953baafe34080b",
        "subordination, with subject relatives on the subject and object",
    ),
}
"""Test suite (file name without `.json`) -> (items, SHA-256 of the file at `COMMIT`, what it tests)."""

NOT_ANALYSED = ("fgd-embed3", "fgd-embed4", "nn-nv-rpl")
"""Suites the paper's analysis drops (`exclude_suite_re = ^fgd-embed[34]|^gardenpath|^nn-nv`, main.py line 84)."""

CIRCUITS: dict[str, tuple[str, ...]] = {
    "Licensing": ("npi", "reflexive"),
    "Long-Distance Dependencies": ("fgd", "cleft"),
    "Agreement": ("number",),
    "Garden-Path Effects": ("npz", "mvrr"),
    "Gross Syntactic State": ("subordination",),
    "Center Embedding": ("center",),
}
"""The paper's circuits and the suite tags in each: `circuits` in notebooks/main.py lines 37-44 at `RESULTS_COMMIT`."""


def tag(suite: str) -> str:
    """A suite's tag: its name up to the first `-`, `_` or digit (main.py line 122)."""
    return re.split(r"[-_0-9]", suite)[0]


def circuit(suite: str) -> str | None:
    """The circuit of `suite` (`CIRCUITS`), None for one of no circuit (`nn-nv-rpl`)."""
    return next((name for name, tags in CIRCUITS.items() if tag(suite) in tags), None)


def circuit_splits() -> dict[str, tuple[str, ...]]:
    """Circuit -> its analysed suites (the ranked splits), in `CIRCUITS` order."""
    return {name: tuple(s for s in SUITES if s not in NOT_ANALYSED and circuit(s) == name) for name in CIRCUITS}


def circuit_scores(accuracies: Mapping[str, float]) -> dict[str, float]:
    """Per circuit, the unweighted mean of the accuracies (`accuracies`: suite -> accuracy) of its analysed
    suites, as the authors' notebook averages suites into circuits; a circuit none of whose suites is
    in `accuracies` is left out."""
    out: dict[str, float] = {}
    for name, members in circuit_splits().items():
        known = [accuracies[s] for s in members if s in accuracies]
        if known:
            out[name] = sum(known) / len(known)
    return out


SOURCES = tuple(
    SourceFile(
        path=f"syntaxgym/test_suites/{name}.json",
        url=f"https://raw.githubusercontent.com/cpllab/syntactic-generalization/{COMMIT}/test_suites/json/{name}.json",
        sha256=sha256,
    )
    for name, (_, sha256, _) in SUITES.items()
)
CITATION = (
    "Hu, Gauthier, Qian, Wilcox & Levy 2020, A systematic assessment of syntactic generalization in neural "
    "language models (ACL 2020); test suites and per-item results: github.com/cpllab/syntactic-generalization"
)
CHECKED = """How it was checked (tests/suites/test_syntaxgym.py): the build from the pinned files has 34 test splits and
842 items (799 in the 31 analysed suites), each split as many items as its file; every formula of
the 34 suites parses and refers only to conditions and regions its items have, and formulas
evaluated on hand-made surprisal tables give the truth values worked out by hand (`=` within rtol
1e-5, atol 1e-3 as syntaxgym-core's numpy.isclose); the suite-to-circuit map gives each of the 31
analysed suites one of the six circuits; the authors' per-item results (sg_results) pair with the
items by (suite, item). The region rule and the models' region surprisals are checked by the
adapters' and baselines' tests (test_hf_regions.py: a byte-level BPE GPT-2 against a direct
transformers computation, within 1e-4 bits; test_ngram_regions.py; test_lm.py)."""
DEVIATIONS = """Deviations: (1) no end-of-sentence token. The LM Zoo images the paper ran append one (GPT-2's
`<|endoftext|>`), and syntaxgym-core's aligner adds its surprisal to the last region, which several
predictions compare (subordination's main clause, fgd_hierarchy's continuation); here a region's
surprisal is its own tokens' only. (2) The first token is predicted from the model's start token
(BOS, else EOS), as LM Zoo's GPT-2 image did; LM Zoo's later in-process Hugging Face backend instead
gave the first token surprisal 0 where the tokenizer adds no BOS (GPT-2's). (3) Formulas that the
reference parser accepts with a meaning no suite uses are refused (a chain `a < b < c`, `&` over
numbers, a formula that is no comparison)."""


class SyntaxGym(Suite):
    """The 34 SyntaxGym test suites of Hu et al. 2020, one test split each, scored by the suites' predictions."""

    spec = SuiteSpec(
        id="syntaxgym",
        version="1.0.0",
        family="syntax",
        protocol="region-surprisal",
        description="Targeted syntactic evaluation of language models: in 34 test suites (garden paths, agreement, "
        "licensing, filler-gap dependencies, center embedding, subordination), the surprisals of regions of "
        "minimally different sentences must stand in the relations the suite predicts.",
        citation=CITATION,
        how_checked=CHECKED,
        deviations=DEVIATIONS,
        primary_metric="accuracy",
        higher_is_better=True,
        splits=[
            train_split(0, "empty: models bring their own training"),
            *(
                scored_split(
                    name,
                    size,
                    "generalisation",
                    description + ("" if circuit(name) is None else f" (circuit: {circuit(name)})"),
                    ranked=name not in NOT_ANALYSED,
                )
                for name, (size, _, description) in SUITES.items()
            ),
        ],
    )
    sources = SOURCES
    split_groups = circuit_splits()
    """The paper's six circuits, each its analysed suites: the score's breakdown."""
    # github.com/cpllab/syntactic-generalization, LICENSE at 2f42038: "MIT License"
    licence = "MIT (the licence of the syntactic-generalization repository)"

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        out: dict[str, list[Example]] = {"train": []}
        for name in SUITES:
            path = f"syntaxgym/test_suites/{name}.json"
            try:
                data = json.loads(files.read_text(path))
            except json.JSONDecodeError as error:
                raise UserError(f"{path} is not JSON ({error.msg}, line {error.lineno}); {PUBLISHED_FIX}.") from None
            out[name] = read_suite(data, name, path)
        return out

    def extra_metrics(
        self, split: str, examples: Sequence[Example], predictions: Sequence[Any]
    ) -> Mapping[str, PerExample]:
        """`accuracy`: 1 for an item all of whose predictions hold on the model's region surprisals, else 0."""
        return {"accuracy": [float(item_holds(split, e, p)) for e, p in zip(examples, predictions, strict=True)]}


def read_suite(data: Any, name: str, path: str) -> list[Example]:
    """The items of one suite file as examples; one sentence naming the file where it is not a SyntaxGym
    suite of numbered regions whose predictions parse and refer to what every item has."""
    try:
        formulas = [str(p["formula"]) for p in data["predictions"] if p["type"] == "formula"]
        if len(formulas) != len(data["predictions"]) or not formulas or data["meta"]["metric"] != "sum":
            raise ValueError("a prediction that is not a formula, or a metric other than sum")
        examples = []
        for item in data["items"]:
            number = int(item["item_number"])
            conditions = []
            for condition in item["conditions"]:
                numbers = [int(region["region_number"]) for region in condition["regions"]]
                if numbers != list(range(1, len(numbers) + 1)):
                    raise ValueError(f"item {number}: regions numbered {numbers}, not 1 to {len(numbers)}")
                regions = [str(region["content"]).split() for region in condition["regions"]]
                conditions.append(Condition(name=str(condition["condition_name"]), regions=regions))
            examples.append(
                Example(
                    id=f"{name}-{number}",
                    input=[],
                    conditions=conditions,
                    formulas=formulas,
                    meta={"item": number, "circuit": circuit(name) or "none"},
                )
            )
    except (KeyError, TypeError, ValueError) as error:
        raise UserError(f"{path} is not a SyntaxGym suite of numbered regions ({error}); {PUBLISHED_FIX}.") from None
    if len({e.id for e in examples}) != len(examples):
        raise UserError(f"{path} repeats an item number; {PUBLISHED_FIX}.")
    for index, formula in enumerate(formulas, start=1):
        try:
            parsed = parse_formula(formula, suite=name, prediction=index)
            for example in examples:
                counts = {c.name: len(c.regions) for c in example.conditions or []}
                check_references(
                    parsed,
                    counts,
                    where=f"the SyntaxGym suite {name}, prediction {index} (item {example.meta['item']})",
                )
        except FormulaError as error:
            raise UserError(f"{path}: {error}") from None
    return examples


_PARSED: dict[tuple[str, str], Claim] = {}


def _parsed(split: str, formula: str, index: int) -> Claim:
    """Each distinct formula parsed once per process."""
    key = (split, formula)
    if key not in _PARSED:
        _PARSED[key] = parse_formula(formula, suite=split, prediction=index)
    return _PARSED[key]


def item_holds(split: str, example: Example, prediction: Any) -> bool:
    """Whether every formula of `example` holds on its stored region surprisals (`prediction`: per
    condition, one surprisal per region)."""
    table = {
        (condition.name, number): float(value)
        for condition, values in zip(example.conditions or [], prediction, strict=True)
        for number, value in enumerate(values, start=1)
    }
    return all(_parsed(split, f, i).holds(table) for i, f in enumerate(example.formulas or [], start=1))

"""Frozen records that every other part of the harness passes around.

Suites describe themselves with a `SuiteSpec`; their data is a list of `Example`s per
`Split`; runs, scores and aggregated results travel as the records below. All are pydantic
v2 frozen models so that a spec cannot drift after it was hashed or stored.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from structbench.errors import renamed

if TYPE_CHECKING:
    import pandas as pd

ProtocolName = Literal[
    "transduction", "minimal-pair", "forced-choice", "classification", "tag-induction", "region-surprisal"
]
"""How a suite asks a model (`SuiteSpec.protocol`); each is served by one method of `structbench.protocols.Model`."""
PROTOCOLS: tuple[ProtocolName, ...] = get_args(ProtocolName)
"""`ProtocolName` in declaration order."""
Family = Literal[
    "systematicity", "agreement", "lookup", "completion", "pos-induction", "memory", "syntax", "semantic-parsing"
]
"""The research questions of the built-in suites, declared in the leaderboard's order of families."""
FAMILY_ORDER: tuple[Family, ...] = get_args(Family)
"""`Family` in declaration order: the order in which the leaderboard shows families."""
SplitRole = Literal["train", "dev", "test"]
TestRole = Literal["in-distribution", "generalisation"]
"""What a test split measures: performance on the training distribution, or generalisation beyond it."""
MetaValue = str | int | float | bool


class Frozen(BaseModel):
    """Base of every record: immutable, no unknown fields, field docstrings as descriptions."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class Condition(Frozen):
    """One condition of a region-surprisal item (SyntaxGym): a sentence cut into numbered regions."""

    name: str
    """The condition's name, as the suite's prediction formulas refer to it (`%name%`)."""
    regions: list[list[str]]
    """The whitespace tokens of each region in region order (region 1 first); an empty region is `[]`."""


class Example(Frozen):
    """One item of a split. Which optional fields are set depends on the suite's protocol."""

    id: str
    """Stable identifier, unique within its split; predictions are stored under it."""
    input: list[str]
    """Whitespace tokens the model is given (the prefix, for classification of a verb's number; the shared
    context of the candidates, where they are continuations)."""
    target: list[str] | None = None
    """Gold output tokens (transduction)."""
    candidates: list[list[str]] | None = None
    """Token sequences to compare (minimal-pair: [good, bad]; forced-choice: K options): whole sentences,
    or continuations of `input` where the suite's spec says `continuations`."""
    answer: int | None = None
    """Index of the correct candidate (forced-choice; 0 for minimal-pair)."""
    label: str | None = None
    """Gold label (classification)."""
    tags: list[str] | None = None
    """Gold tag per input token (tag-induction); never shown to the model."""
    attention: list[int] | None = None
    """One input index per output step, end-of-sequence included (for attentive guidance)."""
    conditions: list[Condition] | None = None
    """The item's conditions (region-surprisal): each condition's sentence is its non-empty regions."""
    formulas: list[str] | None = None
    """The predictions the item must satisfy (region-surprisal), each a formula over region surprisals
    in the suite's formula language; the suite scores them, the model never sees them."""
    meta: dict[str, MetaValue] = Field(default_factory=dict)
    """Breakdown columns, e.g. composition length or number of attractors."""


class SplitSpec(Frozen):
    """A split as the suite declares it, before any data exists."""

    name: str
    """Split name, e.g. `train`, `validation`, `heldout_tables`."""
    role: SplitRole
    """`train` is fitted on, `dev` is for model selection only, every `test` split is scored."""
    size: int | None
    """Number of examples in each draw of this split; None where it depends on user-supplied data
    or differs between draws."""
    description: str = ""
    """What the split tests, in one sentence."""
    test_role: TestRole | None = None
    """Test splits only: `in-distribution` or `generalisation` (the suite's docstring says why)."""
    ranked: bool = True
    """Test splits only: whether the leaderboard ranks on it; False for a pooled union of other
    splits or a split overlapping another (which would count the same items twice), and for a
    split where the primary metric cannot tell the rules apart (question formation's test)."""

    @model_validator(mode="after")
    def _roles_agree(self) -> SplitSpec:
        if (self.role == "test") != (self.test_role is not None):
            raise ValueError(
                f"split {self.name!r}: a test split needs test_role (in-distribution or generalisation), "
                "and a train or dev split must not have one"
            )
        return self


def train_split(size: int | None, description: str = "", name: str = "train") -> SplitSpec:
    """A split models are fitted on."""
    return SplitSpec(name=name, role="train", size=size, description=description)


def dev_split(size: int | None, description: str = "", name: str = "dev") -> SplitSpec:
    """A split for model selection only."""
    return SplitSpec(name=name, role="dev", size=size, description=description)


def scored_split(
    name: str, size: int | None, role: TestRole, description: str = "", *, ranked: bool = True
) -> SplitSpec:
    """A scored split; `role` says whether it tests the training distribution or generalisation."""
    return SplitSpec(name=name, role="test", size=size, description=description, test_role=role, ranked=ranked)


class StatisticSpec(Frozen):
    """A statistic of training that a suite asks models to report (`statistics()`), e.g. how many
    training sequences a model needed to reach a criterion: the leaderboard gives it its own
    column with its direction, beside the test splits' metrics."""

    name: str
    """The key models report it under, e.g. `trials_to_criterion`."""
    description: str
    """What it counts and how it is measured, in one sentence (the column's explanation)."""
    higher_is_better: bool
    """Its direction: False for a cost such as training sequences or perplexity."""
    censored_by: str | None = None
    """For a time to an event (training trials until a criterion held): the statistic a run reports
    instead when it stopped before the event, e.g. `trials_trained`. Such a run's value is only known
    to exceed that bound (right-censored); comparisons count it as such instead of dropping it."""


class SeriesPoint(Frozen):
    """A suite's place in a series: suites that differ in one number (training examples of a kind,
    fillers), which the leaderboard draws as one curve per model against that number."""

    series: str
    """The series' name, shared by its suites, e.g. `scan-fewshot`."""
    axis: str
    """What the number counts (the x axis's label), the same for every suite of the series."""
    value: float
    """This suite's number on the axis."""
    log_axis: bool = False
    """Whether the axis is drawn logarithmic (a number doubling from suite to suite); 0 still shows."""


STORED_NAMES: dict[str, str] = {"how_checked": "checked", "recipe": "task"}
"""`SuiteSpec` fields renamed in 0.2.0 -> the key their value is stored under. A spec's JSON (the store's
`suites` table, the reference bundle's `suites/` files) keeps the keys of 0.1, so that no stored spec
changes and a spec stored by any version reads; only the Python names changed (and `model_dump`'s
`include` and `exclude` take them)."""
_RENAMED = {old: new for new, old in STORED_NAMES.items()}


def _new_names(fields: dict[str, Any]) -> dict[str, Any]:
    """`fields` (keywords given to `SuiteSpec` or `SuiteSpec.variant`) with the names of 0.1 replaced by
    their new ones, each with a DeprecationWarning at the caller's line, until `RENAMED_NAMES_GO_IN`."""
    for old, new in _RENAMED.items():
        if old in fields:
            if new in fields:
                raise TypeError(f"SuiteSpec takes {new}= (formerly {old}=), not both")
            renamed(f"SuiteSpec's keyword {old}=", f"{new}=", stacklevel=4)
            fields = {(new if key == old else key): value for key, value in fields.items()}
    return fields


class SuiteSpec(Frozen):
    """Everything that identifies a suite and how it is run, independent of its data.

    Two fields were renamed in 0.2.0 (`STORED_NAMES`): `checked` is `how_checked`, `task` is `recipe`.
    Until `structbench.errors.RENAMED_NAMES_GO_IN` the old keywords still build a spec and the old
    attributes still read, each with a DeprecationWarning; stored JSON keeps the old keys for good."""

    id: str
    """Registry name, e.g. `lookup-tables`."""
    version: str
    """Semantic version; any change to the data is a new version."""
    family: str
    """Research question. Every built-in suite declares one of `Family`, whose order (`FAMILY_ORDER`)
    is the leaderboard's; the field stays an open string so that a plugin suite (or a stored spec) may
    declare a family of its own, which `family_rank` orders after the known ones, by name."""
    protocol: ProtocolName
    """How models are asked; the runner matches it to a model's protocols."""
    description: str
    """One paragraph: what the suite tests."""
    citation: str
    """The paper(s) the suite reproduces."""
    how_checked: str = Field(default="", validation_alias=AliasChoices("how_checked", "checked"))
    """How the suite was checked against its paper's published data or definition, naming the tests
    that check it (prose, shown on the suite card); empty when the suite declares nothing (so does a
    spec stored before this field). Stored under its 0.1 name, `checked`."""
    deviations: str = ""
    """Where the suite departs from its paper or published data, and why; empty when the suite declares
    nothing (so does a spec stored before this field)."""
    changelog: list[str] = Field(default_factory=list)
    """One line per version since the first: what changed in the data and why."""
    splits: list[SplitSpec]
    """Declared splits in display order."""
    n_draws: int = 1
    """Independent data draws (e.g. random table sets); seed s is evaluated on draw s mod n_draws."""
    primary_metric: str
    """The metric the suite's paper headlines: ranked on the leaderboard, broken down by condition."""
    higher_is_better: bool = True
    """Direction of the primary metric."""
    recipe: str = Field(default="default", validation_alias=AliasChoices("recipe", "task"))
    """Which recipe the neural baselines train with on this suite (`recipes/MODEL/RECIPE.yaml`), e.g.
    `scan`; `default`, each model's `default.yaml`, for a suite no recipe targets. Stored under its
    0.1 name, `task`."""
    labels: list[str] | None = None
    """Label set for classification suites."""
    n_clusters: int | None = None
    """Number of clusters asked of tag-induction models (K)."""
    continuations: bool = False
    """Minimal-pair and forced-choice only: each example's candidates are continuations of its `input`,
    a prefix they share, compared by log p(candidate | input) with no end token (the model's
    `loglikelihood`), as agreement is scored at the verb; False compares whole sentences (`logprob`)."""
    statistics: list[StatisticSpec] = Field(default_factory=list)
    """Statistics of training the suite asks models to report, each shown as its own leaderboard
    column with its direction (sample efficiency, where the suite's question is how fast a model
    learns rather than how well)."""
    series: list[SeriesPoint] = Field(default_factory=list)
    """The series the suite belongs to, with its number on each (a learning curve's points)."""

    @property
    def key(self) -> str:
        return f"{self.id}@{self.version}"

    def split(self, name: str) -> SplitSpec:
        for split in self.splits:
            if split.name == name:
                return split
        raise KeyError(name)

    def statistic(self, name: str) -> StatisticSpec | None:
        """The declaration of statistic `name` (its meaning, direction and bound), if the suite declares it."""
        return next((s for s in self.statistics if s.name == name), None)

    def splits_with_role(self, role: SplitRole) -> list[SplitSpec]:
        return [s for s in self.splits if s.role == role]

    @property
    def ranked_splits(self) -> list[SplitSpec]:
        """Test splits the leaderboard ranks on (pooled or overlapping splits excluded)."""
        return [s for s in self.splits if s.role == "test" and s.ranked]

    def variant(self, **changes: object) -> SuiteSpec:
        """A validated copy with `changes`: how a suite set declares its members from one base spec."""
        return SuiteSpec.model_validate({**dict(self), **_new_names(changes)})

    if not TYPE_CHECKING:  # at run time only: type checkers keep the field keywords the pydantic plugin gives

        def __init__(self, **fields: Any) -> None:
            super().__init__(**_new_names(fields))

        # as pydantic's RootModel marks its own: validation (a stored spec's JSON, whose keys are the old
        # names for good) does not go through this __init__, so that only a keyword warns
        __init__.__pydantic_base_init__ = True

    @model_serializer(mode="wrap")
    def _stored_names(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Dumped with the renamed fields under their stored keys (`STORED_NAMES`), each in its place."""
        dumped: dict[str, Any] = handler(self)
        return {STORED_NAMES.get(key, key): value for key, value in dumped.items()}

    @property
    def checked(self) -> str:
        """Deprecated: `how_checked`."""
        renamed("SuiteSpec.checked", "SuiteSpec.how_checked")
        return self.how_checked

    @property
    def task(self) -> str:
        """Deprecated: `recipe`."""
        renamed("SuiteSpec.task", "SuiteSpec.recipe")
        return self.recipe

    @model_validator(mode="after")
    def _splits_are_sound(self) -> SuiteSpec:
        names = [s.name for s in self.splits]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.id}: split names repeat: {names}")
        if not self.ranked_splits:
            raise ValueError(f"{self.id}: at least one test split must be ranked")
        if len(self.splits_with_role("train")) > 1 or len(self.splits_with_role("dev")) > 1:
            raise ValueError(f"{self.id}: at most one train and one dev split")
        statistics = [s.name for s in self.statistics]
        if len(set(statistics)) != len(statistics):
            raise ValueError(f"{self.id}: statistic names repeat: {statistics}")
        if self.continuations and self.protocol not in ("minimal-pair", "forced-choice"):
            raise ValueError(f"{self.id}: continuations apply to minimal-pair and forced-choice suites only")
        series = [point.series for point in self.series]
        if len(set(series)) != len(series):
            raise ValueError(f"{self.id}: a suite has one point per series, but {series} repeat")
        return self


def natural_key(text: str) -> tuple[tuple[str | int, ...], str]:
    """Sort key that orders the numbers inside a name by value, so that suite lists read
    `scan-fewshot-1, -2, -4, ..., -1024` rather than as text (`-1, -1024, -128, -16, ...`); the text
    itself breaks ties (`-01` and `-1`)."""
    parts = re.split(r"(\d+)", text)  # text, number, text, ...: like kinds at like positions
    return tuple(int(part) if index % 2 else part for index, part in enumerate(parts)), text


def family_rank(family: str) -> tuple[int, str]:
    """Sort key of a family on the leaderboard: `FAMILY_ORDER` first, any other family after, by name."""
    return (FAMILY_ORDER.index(family) if family in FAMILY_ORDER else len(FAMILY_ORDER), family)


class Split(Frozen):
    """The examples of one split of one draw, as handed to models."""

    suite: str
    """`id@version` of the suite this split belongs to."""
    name: str
    """Split name."""
    role: SplitRole
    """Role of the split (see `SplitSpec.role`)."""
    draw: int
    """Which data draw the examples come from."""
    examples: list[Example]
    """The examples, in frozen order."""

    def __len__(self) -> int:
        return len(self.examples)


class ModelSpec(Frozen):
    """A model as the user asked for it: registry name and settings from `--set`."""

    name: str
    """Registry name or `module:Class` path."""
    params: dict[str, str | int | float | bool | None] = Field(default_factory=dict)
    """Keyword settings passed to the model's constructor."""

    @property
    def label(self) -> str:
        if not self.params:
            return self.name
        # JSON values, so that e.g. the string "False" and the boolean false never share a label
        settings = ",".join(f"{k}={json.dumps(v)}" for k, v in sorted(self.params.items()))
        return f"{self.name}[{settings}]"


class SeedStats(Frozen):
    """One metric of one split aggregated over seeds."""

    mean: float
    """Mean over seeds."""
    std: float | None
    """Sample standard deviation (ddof = 1); None with a single seed."""
    min: float
    """Smallest per-seed value."""
    max: float
    """Largest per-seed value."""
    ci_low: float | None
    """Lower end of the 95% confidence interval of the mean; None where none is claimed."""
    ci_high: float | None
    """Upper end of the 95% confidence interval of the mean; None where none is claimed."""
    interval: str
    """How the interval was made: `t over N seeds`, `Wilson over N items` or `none` (see `structbench.cells`)."""
    n_seeds: int
    """Number of seeds that finished."""
    per_seed: list[float]
    """Per-seed values, in seed order."""


class ResultRecord(Frozen):
    """What `structbench run --json` prints: one suite x one model over seeds."""

    suite: str
    """Suite id."""
    version: str
    """Suite version."""
    suite_hash: str
    """SHA-256 over the suite's frozen splits; numbers with different hashes never mix."""
    model: str
    """Model label (name plus non-default settings)."""
    seeds: list[int]
    """Seeds asked for."""
    status: dict[str, str]
    """Per seed: `done`, `failed` or `n/a` (the model does not speak the suite's protocol)."""
    errors: dict[str, str] = Field(default_factory=dict)
    """Per failed seed: the error message."""
    scores: dict[str, dict[str, SeedStats]]
    """split -> metric -> the leaderboard cell: statistics over every finished seed of this model
    configuration in the store (the seeds asked for, and any stored before)."""
    breakdowns: dict[str, dict[str, dict[str, dict[str, SeedStats]]]] = Field(default_factory=dict)
    """split -> metric -> `Example.meta` key -> its value -> cell: the primary metric per condition."""
    partial: int | None = None
    """`--limit N`: only the first N examples of each test split were asked; such a run is never ranked."""
    threads: int = Field(default=1, ge=1)
    """The CPU threads every run of this configuration computes on; part of its key when not 1."""
    convergence: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per finished seed of the cells (as `scores`) whose model trains to a criterion (a neural
    baseline's recipe): how its training went, as the store keeps it (`structbench.convergence.Convergence`
    as JSON): `criterion` (`statistic` and its rule: `at_least`, `at_most` or `plateau`), `reached`,
    `value` (where it was reached, else the best seen), `change`, `epochs`, `updates`, `seconds`."""
    under_trained: bool = False
    """Whether any of those seeds missed its criterion: the leaderboard flags such a row *under-trained*."""

    def to_pandas(self) -> pd.DataFrame:
        """One row per (split, metric), in split order: mean, std, ci_low, ci_high, interval, n_seeds
        and the per-seed values, the cells the leaderboard shows."""
        import pandas as pd

        rows = [
            {"split": split, "metric": metric, **stats.model_dump(exclude={"min", "max"})}
            for split, metrics in self.scores.items()
            for metric, stats in metrics.items()
        ]
        columns = ["split", "metric", "mean", "std", "ci_low", "ci_high", "interval", "n_seeds", "per_seed"]
        return pd.DataFrame(rows, columns=columns)

"""Training settings and recipes: the paper's hyper-parameters per (model, task), plus small budgets.

A recipe is `recipes/MODEL/TASK.yaml` with a `citation`, a `notes` line, the task's convergence
`criterion` (when the network has learned its training distribution; training stops there) and
one block of settings per budget (`paper`: the published configuration; `cpu-small`: a budget
chosen on dev splits to reach the criterion on one CPU thread where that is feasible, used by
tests and by `quickstart --neural` on the suites the recipe lists under `quickstart`). The task
is the one the suite's spec declares (`scan-length` -> `scan`); a model without a recipe for a
task uses its `default.yaml`.
`--set key=value` overrides any single setting.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, Field, NonNegativeFloat, NonNegativeInt, PositiveFloat, PositiveInt, ValidationError

from structbench import registry
from structbench.convergence import Criterion
from structbench.devices import DeviceName
from structbench.errors import UserError
from structbench.specs import Frozen

RECIPES = Path(__file__).resolve().parent / "recipes"
Fraction = Annotated[float, Field(ge=0, le=1)]
"""A probability or share: from 0 to 1."""
BUDGETS = ("paper", "cpu-small")


class NeuralSettings(Frozen):
    """Settings every epoch-trained neural baseline shares: device, threads, optimisation, evaluation."""

    device: DeviceName = "auto"
    """`cpu`, `cuda`, `cuda:N` or `auto` (CUDA when available); never part of the run key."""
    epochs: PositiveInt = 20
    """Maximum passes over the training split."""
    batch_size: PositiveInt = 32
    """Examples per update."""
    lr: PositiveFloat = 1e-3
    """Adam learning rate."""
    clip: PositiveFloat | None = 5.0
    """Maximum gradient norm; None disables clipping."""
    patience: PositiveInt | None = None
    """Stop after this many evaluations without improvement; None trains all epochs."""
    eval_every: PositiveInt = 1
    """Epochs between evaluations on dev (the last epoch is always evaluated)."""
    dev_limit: PositiveInt | None = 2000
    """Evaluate on at most this many dev examples (a fixed prefix of the frozen dev split); None = all."""
    amp: bool = False
    """Mixed precision (float16 autocast and loss scaling); used on CUDA only."""
    threads: PositiveInt = 1
    """CPU threads for torch and BLAS; part of the run key (two threads may round otherwise than one)."""
    lr_decay: Annotated[float, Field(gt=0, lt=1)] | None = None
    """Multiply the learning rate by this after every evaluation that model selection did not keep (no
    better than the best so far); None keeps it constant. Part of a run's key only when set."""
    max_decays: NonNegativeInt | None = None
    """With `lr_decay`: an evaluation not kept after this many decays ends training; None never does.
    Part of a run's key only when set."""
    criterion: Criterion | None = None
    """When the network counts as having learned its training distribution; training stops there
    (`structbench.convergence`). Every recipe states one; None trains every epoch and judges nothing."""


class TrainSettings(NeuralSettings):
    """Settings every neural transducer and classifier shares: the run's, plus decoding and model selection."""

    teacher_forcing: Fraction = 0.5
    """Probability that a batch is decoded with the gold previous tokens as inputs."""
    selection: Literal["dev_accuracy", "dev_loss", "train_loss", "last"] = "dev_accuracy"
    """Which parameters are kept: best dev sequence accuracy (ties: lower dev loss), lowest dev or training loss, or the last."""
    guidance: NonNegativeFloat = 0.0
    """Weight of the attention loss toward the suite's attention targets (attentive guidance; 0 = off)."""
    max_length: PositiveInt | None = None
    """Longest output decoded; None = max(64, twice the longest training target + 1)."""


class Recipe(Frozen):
    """One recipe file."""

    citation: str
    """Where the `paper` settings come from (paper, table or section)."""
    notes: str = ""
    """What deviates from the paper, or what is a guess where the paper is silent."""
    criterion: Criterion | None = None
    """When a network counts as having learned the task's training distribution (`structbench.convergence`):
    every budget stops training there unless its block sets `criterion` itself."""
    budgets: dict[str, dict[str, Any]]
    """Budget name -> settings."""
    quickstart: tuple[str, ...] = ()
    """Suites on which the `cpu-small` budget trains in seconds, so `structbench quickstart --neural` runs it there."""
    cpu_small_shortfall: str = ""
    """Where the `cpu-small` budget cannot reach the criterion within 30 minutes per seed on one CPU thread:
    what was measured and what reaching it takes (shown beside the claims its runs leave undecided); empty
    where it can."""


def task_of(suite_id: str) -> str:
    """The recipe task the suite declares in its spec, e.g. `scan-length@1.0.0` -> `scan`."""
    return registry.suite(suite_id).spec.recipe


@cache
def load_recipe(model: str, task: str) -> tuple[Path, Recipe]:
    """The recipe of `model` for `task`, else the model's default recipe."""
    for candidate in (RECIPES / model / f"{task}.yaml", RECIPES / model / "default.yaml"):
        if candidate.is_file():
            try:
                raw = yaml.safe_load(candidate.read_text(encoding="utf-8"))
                return candidate, Recipe.model_validate(raw)
            except (yaml.YAMLError, ValidationError) as error:
                shown = " ".join(str(error).split())[:300]
                raise UserError(
                    f"the {model} {candidate.stem} recipe, which structbench installs, is malformed ({shown}); "
                    "reinstall structbench (`pip install --force-reinstall --no-deps structbench`)."
                ) from None
    raise UserError(f"model {model!r} has no recipe for {task!r} and no default.yaml under {RECIPES / model}.")


def quickstart_models(suite_name: str) -> tuple[str, ...]:
    """The neural baselines whose recipe lists `suite_name` (an id without version) for `quickstart --neural`."""
    task = registry.suite(suite_name).spec.recipe
    return tuple(
        sorted(
            path.parent.name
            for path in RECIPES.glob(f"*/{task}.yaml")
            if suite_name in load_recipe(path.parent.name, task)[1].quickstart
        )
    )


S = TypeVar("S", bound=BaseModel)


def resolve_settings(cls: type[S], model: str, suite_id: str, budget: str, overrides: dict[str, Any]) -> tuple[S, str]:
    """Settings for `model` on `suite_id`: the recipe's `budget` block, then `overrides`; and the recipe's citation."""
    path, recipe = load_recipe(model, task_of(suite_id))
    named = f"the {model} {path.stem} recipe"
    if budget not in recipe.budgets:
        raise UserError(f"{named} has no budget {budget!r}; use one of {', '.join(recipe.budgets)}.")
    judged = {} if recipe.criterion is None else {"criterion": recipe.criterion}
    try:
        return cls.model_validate({**judged, **recipe.budgets[budget], **overrides}), recipe.citation
    except ValidationError as error:
        raise UserError(_invalid(error, f"{model} {path.stem} recipe, budget {budget}", model, overrides)) from None


def _invalid(error: ValidationError, recipe: str, model: str, overrides: dict[str, Any]) -> str:
    """One sentence for settings pydantic refused: each problem named by where its value came from
    (`--set hidden='abc'`, or `seq2seq default recipe, budget cpu-small, key hidden`: a recipe is a
    file of the installed package, which a user does not edit) and the fix."""
    problems, from_recipe = [], False
    for entry in error.errors():
        key = ".".join(map(str, entry["loc"])) or "settings"
        top = str(entry["loc"][0]) if entry["loc"] else ""
        if top in overrides:
            problems.append(f"--set {top}={overrides[top]!r}: {entry['msg']}")
        else:
            from_recipe = True
            problems.append(f"{recipe}, key {key}: {entry['msg']}")
    fix = "fix the --set value" if not from_recipe else "reinstall structbench, whose recipe it is"
    if from_recipe and len(problems) > 1 and any(p.startswith("--set") for p in problems):
        fix = "fix the --set value, and reinstall structbench, whose recipe the other is"
    return f"invalid settings for {model!r} ({'; '.join(problems)}); {fix}."


def check_overrides(cls: type[BaseModel], model: str, overrides: dict[str, Any]) -> None:
    """Refuse `--set` keys that are no setting of `cls`, naming the settings there are."""
    unknown = sorted(set(overrides) - set(cls.model_fields))
    if unknown:
        raise UserError(
            f"model {model!r} has no setting {', '.join(map(repr, unknown))}; "
            f"its settings are: budget, {', '.join(cls.model_fields)}."
        )

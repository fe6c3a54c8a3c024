"""What every built-in suite declares about itself: a known family, in the leaderboard's order, and
families of suites declared once (a parameter table, not a class per member)."""

from __future__ import annotations

from typing import get_args

from structbench import registry
from structbench.specs import FAMILY_ORDER, Family, family_rank
from structbench.suites.grounded import GROUNDED_FAMILY
from structbench.suites.logic.bowman import LOGIC_BOWMAN_FAMILY
from structbench.suites.logic.generated import LOGIC_INFERENCE
from structbench.suites.scan.loula import FEWSHOT, FILLERS, TEMPLATES


def test_every_built_in_suite_declares_a_known_family() -> None:
    families = {registry.suite(name).spec.family for name in registry.suite_names()}
    assert families == set(FAMILY_ORDER)
    assert get_args(Family) == FAMILY_ORDER


def test_families_sort_in_declaration_order_and_unknown_ones_last_by_name() -> None:
    shuffled = ["zoo", *reversed(FAMILY_ORDER), "alchemy"]
    assert sorted(shuffled, key=family_rank) == [*FAMILY_ORDER, "alchemy", "zoo"]


def test_each_family_declares_its_members_once() -> None:
    assert [cls.spec.id for cls in TEMPLATES] == [
        "scan-template-jump-around-right",
        "scan-template-right",
        "scan-template-opposite-right",
        "scan-template-around-right",
    ]
    assert list(FILLERS.members) == [f"scan-filler-{n}" for n in range(4)]
    assert [cls.spec.series[-1].value for cls in FEWSHOT] == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    assert [cls.max_train_ops for cls in LOGIC_INFERENCE] == [3, 6, 9, 12]  # type: ignore[attr-defined]
    assert list(LOGIC_BOWMAN_FAMILY.members) == [f"logic-bowman-le{n}" for n in (3, 6, 9, 12)]
    assert [cls.condition for cls in GROUNDED_FAMILY] == ["weak", "categorical", "descriptive", "strong"]  # type: ignore[attr-defined]
    for family in (TEMPLATES, FILLERS, FEWSHOT, LOGIC_INFERENCE, LOGIC_BOWMAN_FAMILY, GROUNDED_FAMILY):
        for suite_id, cls in family.members.items():
            assert type(registry.suite(suite_id)) is cls

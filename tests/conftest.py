"""Test environment: published data from ../shared/data, a throw-away STRUCTBENCH_HOME.

Suite data is built once per session into the temporary home; every test that stores
results gets its own database.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.runner import Runner
from harness.store import Store

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session", autouse=True)
def structbench_environment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    saved = {k: os.environ.get(k) for k in ("STRUCTBENCH_HOME", "STRUCTBENCH_SOURCE_DIR")}
    home = tmp_path_factory.mktemp("structbench-home")
    os.environ["STRUCTBENCH_HOME"] = str(home)
    os.environ.setdefault("STRUCTBENCH_SOURCE_DIR", str(SHARED_DATA))
    yield home
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "results.sqlite") as opened:
        yield opened


@pytest.fixture
def runner(store: Store) -> Runner:
    quiet = Runner(store, progress=False)
    quiet.log = lambda message: None
    return quiet

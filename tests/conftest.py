"""Test environment: published data from ../shared/data, a throw-away STRUCTBENCH_HOME.

Suite data is built once per session into the temporary home, so nothing is read from or
written to ~/.cache; every test that stores results gets its own database.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from structbench.runner import Runner
from structbench.store import Store

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
ENVIRONMENT = ("STRUCTBENCH_HOME", "STRUCTBENCH_SOURCE_DIR")


@pytest.fixture(scope="session", autouse=True)
def structbench_environment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Point the harness at the published reference data and a session-wide temporary home."""
    saved = {key: os.environ.get(key) for key in ENVIRONMENT}
    home = tmp_path_factory.mktemp("structbench-home")
    os.environ["STRUCTBENCH_HOME"] = str(home)
    os.environ["STRUCTBENCH_SOURCE_DIR"] = str(SHARED_DATA)
    yield home
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    """Where a fresh results database for this test lives (not created yet)."""
    return tmp_path / "results.sqlite"


@pytest.fixture
def store(store_path: Path) -> Iterator[Store]:
    with Store(store_path) as opened:
        yield opened


@pytest.fixture
def runner(store: Store) -> Runner:
    quiet = Runner(store, progress=False)
    quiet.log = lambda message: None
    return quiet

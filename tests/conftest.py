"""Test environment: published data from ../shared/data, a throw-away STRUCTBENCH_HOME.

Suite data is built once per session into the temporary home, so nothing is read from or
written to ~/.cache; every test that stores results gets its own database. Under pytest-xdist
(tox runs `-n auto`) each worker has a home of its own whose built suites are shared.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from structbench import registry
from structbench.execution.collector import set_thresholds
from structbench.runs.runner import Runner
from structbench.store import Store
from tests.support.hostile import install_plugin

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
if not SHARED_DATA.is_dir() and os.environ.get("STRUCTBENCH_SOURCE_DIR"):
    SHARED_DATA = Path(os.environ["STRUCTBENCH_SOURCE_DIR"])  # a checkout with no shared/ beside it (a git worktree)
ENVIRONMENT = ("STRUCTBENCH_HOME", "STRUCTBENCH_SOURCE_DIR", "STRUCTBENCH_REFERENCE", "OMP_NUM_THREADS")
"""A third-party suite (`reverse-words`), as a plugin package would ship it."""


def pytest_configure(config: pytest.Config) -> None:
    """The test processes collect garbage as structbench's own processes do (`structbench.execution.collector`):
    tests run what users run, and the golden table's one process holds every suite it has read."""
    set_thresholds()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The `long_running` tests first in each worker's share, longest first.

    pytest-xdist's `worksteal` deals each of its N workers an equal contiguous share of the collection
    and lets an idle worker take the end of a busy one's queue; so the long tests are dealt in turn to
    the N shares, each share opening with its own, and none is left to start near the end of the
    session (with all of them at the head of one share, that worker was still running the
    determinism matrix after the others had finished)."""
    workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
    heavy = sorted(
        (item for item in items if item.get_closest_marker("long_running")),
        key=lambda item: -_expected_seconds(item),
    )
    light = iter([item for item in items if not item.get_closest_marker("long_running")])
    ordered: list[pytest.Item] = []
    left = len(items)
    for share in range(workers):
        size = left // (workers - share)  # what worksteal deals this worker
        own = heavy[share::workers]
        ordered += own + list(itertools.islice(light, max(size - len(own), 0)))
        left -= size
    ordered += light
    items[:] = ordered


def _expected_seconds(item: pytest.Item) -> float:
    """A `long_running` test's rough length on one quiet core (`seconds=`, default 60): an order to deal
    them in, never a limit."""
    marker = item.get_closest_marker("long_running")
    return float(marker.kwargs.get("seconds", 60)) if marker else 0.0


@pytest.fixture(scope="session", autouse=True)
def structbench_environment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Point the harness at the published reference data and a session-wide temporary home."""
    saved = {key: os.environ.get(key) for key in ENVIRONMENT}
    home = tmp_path_factory.mktemp("structbench-home")
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # pytest-xdist's workers share the built suites (building is serialised by the freeze lock and
        # publishing is atomic), so each suite is built once per run; checkpoints stay per worker
        shared = tmp_path_factory.getbasetemp().parent / "structbench-suites"
        shared.mkdir(exist_ok=True)
        (home / "suites").symlink_to(shared, target_is_directory=True)
        # one CPU per worker: one torch thread here and in the commands the tests start
        torch.set_num_threads(1)
        os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["STRUCTBENCH_HOME"] = str(home)
    os.environ["STRUCTBENCH_SOURCE_DIR"] = str(SHARED_DATA)
    # no reference runs unless a test asks for a bundle: each test sees the runs it made
    os.environ["STRUCTBENCH_REFERENCE"] = str(home / "no-reference-bundle")
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


@pytest.fixture
def installed_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """`reverse_suite.py` plus a dist-info folder, on sys.path: what `pip install` of a plugin leaves."""
    install_plugin(tmp_path, "reverse_suite:ReverseWords", monkeypatch, {})
    yield
    registry.clear_cache()


@pytest.fixture
def one_torch_thread() -> Iterator[None]:
    """The neural baselines' tests train tiny networks: one torch thread; the other tests get theirs back."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def fresh_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, structbench_environment: Path) -> Path:
    """A STRUCTBENCH_HOME of this test's own, so that no other test's checkpoint is found in it; the
    session's built suites are linked in rather than built again."""
    home = tmp_path / "home"
    home.mkdir()
    (structbench_environment / "suites").mkdir(exist_ok=True)
    (home / "suites").symlink_to(structbench_environment / "suites", target_is_directory=True)
    monkeypatch.setenv("STRUCTBENCH_HOME", str(home))
    return home

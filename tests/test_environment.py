"""The test environment is the locked one: every package at the version constraints.txt pins.

The golden table and the determinism of the tests hold for one set of libraries; a newer numpy or
scipy may move a number, and the failure should then name the package, not a drifted cell.
`tox -e lock` rewrites the lock (CONTRIBUTING.md, "The golden table").
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

import pytest

from structbench.environments import PACKAGES
from tests.conftest import REPO
from tests.regression.golden import made_with
from tests.support.lock import pins

LOCK = REPO / "constraints.txt"
PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==(\S+)$")


def locked(path: Path = LOCK) -> dict[str, str]:
    """Package name (lower case) -> pinned version, from the lock's `name==version` lines."""
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            match = PIN.match(line.strip())
            assert match, f"{path.name}: {line!r} is not name==version; rewrite it with `tox -e lock`."
            found[match.group(1).lower()] = match.group(2)
    return found


def test_every_locked_package_is_installed_at_its_pinned_version() -> None:
    differing = []
    for name, version in sorted(locked().items()):
        try:
            installed = metadata.version(name).split("+")[0]  # torch's +cpu build is 2.13.0
        except metadata.PackageNotFoundError:
            differing.append(f"{name} is not installed (constraints.txt pins {version})")
            continue
        if installed != version:
            differing.append(f"{name} {installed} is installed, constraints.txt pins {version}")
    assert not differing, (
        "this environment is not the locked one, so golden numbers may move for that reason alone: "
        + "; ".join(differing)
        + ". Run the tests through tox, or install with `pip install -c constraints.txt ...`."
    )


def test_the_golden_table_was_made_with_the_locked_versions() -> None:
    """A refreshed lock needs a golden table made under it: else a moved cell would be blamed on the code."""
    made, pinned = made_with(), locked()
    differing = [
        f"{package} {made[package]} (constraints.txt pins {pinned[package]})"
        for package in PACKAGES
        if isinstance(made.get(package), str) and package in pinned and made[package].split("+")[0] != pinned[package]
    ]
    assert not differing, (
        "tests/regression/golden.json was made with other versions than the lock's: "
        + "; ".join(differing)
        + '. Rewrite the table under the new lock (CONTRIBUTING.md, "The golden table") or restore the lock.'
    )


def test_the_lock_writer_pins_what_is_installed_and_drops_local_labels() -> None:
    written = dict(line.split("==") for line in pins())
    assert "structbench" not in {name.lower() for name in written}
    assert written["torch"] == metadata.version("torch").split("+")[0]
    assert all("+" not in version for version in written.values())


@pytest.mark.parametrize("line", ["numpy>=2", "numpy", "numpy == 2.4.6"])
def test_a_lock_line_that_is_not_an_exact_pin_is_refused(tmp_path: Path, line: str) -> None:
    path = tmp_path / "constraints.txt"
    path.write_text(f"# header\n{line}\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="is not name==version"):
        locked(path)

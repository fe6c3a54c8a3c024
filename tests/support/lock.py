"""Write the test environment's lock (`tox -e lock`): every installed distribution but structbench,
`name==version`, sorted by name, with a header saying how it was made.

A local version label (torch's `+cpu`) is dropped: `torch==2.13.0` matches the CPU build this
machine installs and the same release from the package index, and a lock naming `+cpu` could not
be installed where only the index serves torch. Run by `tox -e lock` in a fresh virtual
environment; `tests/test_environment.py` checks an environment against the file.
"""

from __future__ import annotations

import platform
import sys
from importlib import metadata
from pathlib import Path

HEADER = """\
# Every package of the test environment (tox's py and lint environments) at one version, so that
# the golden table and every test see the same libraries on any machine. Written by `tox -e lock`
# (tests/support/lock.py) on Python {python}; tests/test_environment.py fails, naming the package,
# where an environment differs from it. The package's own metadata keeps ranges for users.
"""


INSTALLERS = {"pip", "setuptools", "wheel"}
"""What the virtual environment brings with it rather than what the tests need: left to tox."""


def pins() -> list[str]:
    """`name==version` of every installed distribution except structbench and the installers, by
    lower-cased name."""
    found: dict[str, str] = {}
    for distribution in metadata.distributions():
        name = distribution.metadata["Name"]
        if name and name.lower() not in {"structbench", *INSTALLERS}:
            found[name.lower()] = f"{name}=={distribution.version.split('+')[0]}"
    return [found[key] for key in sorted(found)]


def main(path: Path) -> None:
    text = HEADER.format(python=platform.python_version()) + "\n".join(pins()) + "\n"
    path.write_text(text, encoding="utf-8")
    print(f"{path}: {text.count(chr(10)) - HEADER.count(chr(10))} packages pinned")


if __name__ == "__main__":
    main(Path(sys.argv[1]))

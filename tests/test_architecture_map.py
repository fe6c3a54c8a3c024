"""The maintainer's map cannot drift from the code.

`docs/architecture.md` is where a new maintainer learns which module does what and which
package may import which. It drifted before (modules missing from it, a layer chain that was not
the enforced one), so these tests hold it to the tree: every module under `src/structbench` is
named there by its path, and the layer chain it prints is the `layers` contract that
`lint-imports` enforces from `pyproject.toml`.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
PACKAGE = REPOSITORY / "src" / "structbench"
MAP = REPOSITORY / "docs" / "architecture.md"


def modules() -> list[str]:
    """Every module of the package as a path below `src/structbench` (`runs/identity.py`)."""
    return sorted(
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if path.name != "__init__.py" and "reference_runs" not in path.parts
    )


def test_every_module_is_named_in_the_map() -> None:
    text = MAP.read_text(encoding="utf-8")
    named = set(re.findall(r"`([\w/]+\.py)`", text))
    missing = [module for module in modules() if module not in named]
    assert not missing, f"docs/architecture.md does not name {len(missing)} modules: {', '.join(missing)}"


def test_the_map_names_no_module_that_is_gone() -> None:
    text = MAP.read_text(encoding="utf-8")
    index = text.split("## Every module", 1)[1]
    named = set(re.findall(r"^\| `([\w/]+\.py)` \|", index, re.MULTILINE))
    gone = sorted(named - set(modules()))
    assert not gone, f"docs/architecture.md's module index names modules that do not exist: {', '.join(gone)}"


def enforced_layers() -> list[str]:
    config = tomllib.loads((REPOSITORY / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return [
        " | ".join(sorted(part.strip().removeprefix("structbench.") for part in layer.split("|")))
        for layer in contract["layers"]
    ]


def printed_layers() -> list[str]:
    text = MAP.read_text(encoding="utf-8")
    chain = re.search(r"<!-- layers -->\n(.*?)\n<!-- /layers -->", text, re.DOTALL)
    assert chain, "docs/architecture.md lost its layer chain (between <!-- layers --> markers)"
    layers = [layer.strip().strip("()") for layer in " ".join(chain.group(1).split()).split(">")]
    return [" | ".join(sorted(part.strip().strip("`") for part in layer.split("|"))) for layer in layers]


def test_the_printed_layer_chain_is_the_enforced_one() -> None:
    assert printed_layers() == enforced_layers()

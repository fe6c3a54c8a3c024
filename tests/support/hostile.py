"""Plugin suites installed the way a plugin distribution is (a module and a dist-info folder on
sys.path), among them one whose source files claim hostile addresses (issue 34)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from structbench import registry

PLUGIN = Path(__file__).with_name("fixtures") / "plugin" / "reverse_suite.py"

SOURCE_URLS = {
    "hostile/script.txt": "javascript:alert('srcurl')",
    "hostile/mixed-case.txt": " JaVaScRiPt:alert(2)",
    "hostile/tab.txt": "java\tscript:alert(3)",
    "hostile/data.txt": "data:text/html,<script>alert(4)</script>",
    "hostile/file.txt": "file:///etc/passwd",
    "hostile/fine.txt": "https://example.org/fine.txt?a=1&b=2",
}
"""The source files of the plugin suite, by the address each claims to be downloadable from."""

HOSTILE_PLUGIN = f"""
from reverse_suite import ReverseWords
from structbench.data.sources import SourceFile

SOURCE_URLS = {SOURCE_URLS!r}


class HostileLinks(ReverseWords):
    sources = tuple(SourceFile(path=path, url=url, sha256="") for path, url in SOURCE_URLS.items())
"""


def install_plugin(folder: Path, entry_point: str, monkeypatch: pytest.MonkeyPatch, modules: dict[str, str]) -> None:
    """What `pip install` of a plugin distribution leaves, in `folder`: `reverse_suite.py`, the
    `modules` (file name -> source), and a dist-info folder whose `structbench.suites` entry point is
    `reverse-words = ENTRY_POINT`; `folder` goes on sys.path and the registry is cleared (clear it
    again when done)."""
    folder.mkdir(exist_ok=True)
    shutil.copy(PLUGIN, folder / "reverse_suite.py")
    for name, source in modules.items():
        (folder / name).write_text(source)
    info = folder / "structbench_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: structbench-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[structbench.suites]\nreverse-words = {entry_point}\n")
    monkeypatch.syspath_prepend(str(folder))
    registry.clear_cache()


def install_hostile_plugin(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`reverse-words` as an installed plugin in `folder` whose source files claim `SOURCE_URLS`."""
    install_plugin(folder, "hostile_suite:HostileLinks", monkeypatch, {"hostile_suite.py": HOSTILE_PLUGIN})

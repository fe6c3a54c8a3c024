"""Frozen data: tampering is caught, and published files are found or refused with a clear reason."""

from __future__ import annotations

import fcntl
import gzip
import hashlib
import http.client
import http.server
import io
import json
import os
import shutil
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from structbench import registry
from structbench.cli import main
from structbench.data import freeze
from structbench.data.sources import SourceFile, resolve
from structbench.errors import DataIntegrityError, SourceUnavailable, UserError
from structbench.specs import Split
from structbench.store import Store
from tests.conftest import REPO, SHARED_DATA
from tests.support.helpers import offline, one_sentence_error

SUITE_KEY = "lookup-tables@1.0.0"


@pytest.fixture
def built_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    """A private STRUCTBENCH_HOME with lookup-tables built, so that tampering does not leak into other tests."""
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    assert main(["build", "lookup-tables"]) == 0
    assert f"built {SUITE_KEY}" in capsys.readouterr().out
    return tmp_path / "home" / "suites" / SUITE_KEY


def read_stored(path: Path) -> bytes:
    """The JSON lines a stored (gzip) split file holds."""
    return gzip.decompress(path.read_bytes())


def write_stored(path: Path, blob: bytes) -> None:
    """Replace a stored split file with other JSON lines, compressed as freeze stores them."""
    path.write_bytes(gzip.compress(blob))


def mismatches(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("MISMATCH")]


def test_verify_passes_on_fresh_data(built_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", "lookup-tables", "--verify"]) == 0
    captured = capsys.readouterr()
    assert f"ok {SUITE_KEY}" in captured.out
    assert mismatches(captured.err) == []


def test_verify_names_a_split_with_one_flipped_byte(built_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = built_home / "draw2" / "heldout_tables.jsonl.gz"
    data = bytearray(path.read_bytes())  # a damaged compressed file
    data[100] ^= 0x01
    path.write_bytes(bytes(data))
    assert main(["build", "lookup-tables", "--verify"]) == 1
    captured = capsys.readouterr()
    [line] = mismatches(captured.err)  # that split and no other
    assert "draw2/heldout_tables" in line
    assert f"ok {SUITE_KEY}" not in captured.out


def test_verify_catches_a_truncated_split(built_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = built_home / "draw0" / "train.jsonl.gz"
    path.write_bytes(path.read_bytes()[:-40])
    assert main(["build", "lookup-tables", "--verify"]) == 1
    [line] = mismatches(capsys.readouterr().err)
    assert "draw0/train" in line


def test_verify_catches_a_deleted_split(built_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (built_home / "draw4" / "longer_5.jsonl.gz").unlink()
    assert main(["build", "lookup-tables", "--verify"]) == 1
    [line] = mismatches(capsys.readouterr().err)
    assert "draw4/longer_5" in line and "missing" in line


def test_a_rebuild_repairs_tampered_data(built_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = built_home / "draw1" / "validation.jsonl.gz"
    original = read_stored(path)
    write_stored(path, original.replace(b"t1", b"t2", 1))
    assert main(["build", "lookup-tables"]) == 0
    assert read_stored(path) == original
    assert main(["build", "lookup-tables", "--verify"]) == 0


def test_tampered_data_is_never_scored(built_home: Path, store_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = built_home / "draw0" / "heldout_inputs.jsonl.gz"
    tampered = read_stored(path).replace(b'"000"', b'"111"', 1)
    assert tampered != read_stored(path)
    write_stored(path, tampered)
    code = main(["run", "--suite", "lookup-tables", "--model", "oracle", "--store", str(store_path), "--json"])
    captured = capsys.readouterr()
    assert code == 2
    assert "does not match the manifest" in captured.err and str(path) in captured.err
    told = [line for line in captured.err.strip().splitlines() if not line.startswith("new results store at ")]
    assert len(told) == 1 and "Traceback" not in captured.err
    assert captured.out == ""  # no result record
    with Store(store_path) as store:
        assert store.runs().empty and store.scores().empty
    suite = registry.suite("lookup-tables")
    manifest = freeze.expected_manifest(suite)
    assert manifest is not None
    with pytest.raises(DataIntegrityError):
        freeze.load_split(suite, manifest, 0, "heldout_inputs")
    freeze.load_split(suite, manifest, 0, "heldout_tables")  # untouched splits still load


def test_missing_source_offline_names_file_url_and_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("STRUCTBENCH_SOURCE_DIR", str(tmp_path / "empty"))
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    source = SourceFile(path="scan/tasks.txt", url="http://127.0.0.1:9/nothing", sha256="0" * 64)
    with pytest.raises(UserError) as caught:
        resolve(source)
    message = str(caught.value)
    assert "scan/tasks.txt" in message
    assert "http://127.0.0.1:9/nothing" in message
    assert "STRUCTBENCH_SOURCE_DIR" in message
    assert not (tmp_path / "home" / "sources" / "scan" / "tasks.txt").exists()


def test_a_source_file_with_other_bytes_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f.tsv").write_text("edited\n")
    pinned = hashlib.sha256(b"original\n").hexdigest()
    source = SourceFile(path="d/f.tsv", url="http://127.0.0.1:9/nothing", sha256=pinned)
    with pytest.raises(UserError, match="pinned"):
        resolve(source, tmp_path)  # --source-dir
    monkeypatch.setenv("STRUCTBENCH_SOURCE_DIR", str(tmp_path))
    with pytest.raises(UserError, match="STRUCTBENCH_SOURCE_DIR"):
        resolve(source)
    (tmp_path / "d" / "f.tsv").write_text("original\n")
    assert resolve(source, tmp_path) == tmp_path / "d" / "f.tsv"
    assert resolve(source) == tmp_path / "d" / "f.tsv"


def test_building_from_an_edited_published_file_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    copy = tmp_path / "data"
    for sample in range(1, 6):
        shutil.copytree(SHARED_DATA / "lookup_tables" / f"sample{sample}", copy / "lookup_tables" / f"sample{sample}")
    edited = copy / "lookup_tables" / "sample3" / "heldout_tables.tsv"
    edited.write_text(edited.read_text().replace("\t", " \t", 1))
    assert main(["build", "lookup-tables-mt", "--source-dir", str(copy)]) == 2
    err = capsys.readouterr().err
    assert "lookup_tables/sample3/heldout_tables.tsv" in err and "pinned" in err
    assert not (tmp_path / "home" / "suites" / "lookup-tables-mt@1.0.0").exists()


@pytest.fixture
def web_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, str]]:
    """A local HTTP server over a folder, standing in for the pinned download address."""
    for variable in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    folder = tmp_path / "web"
    folder.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
            super().__init__(*args, directory=str(folder), **kwargs)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield folder, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_a_download_cut_short_is_an_unavailable_source_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STRUCTBENCH_SOURCE_DIR", str(tmp_path / "empty"))
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))

    class CutShort(io.BytesIO):
        def read(self, *_: object) -> bytes:
            raise http.client.IncompleteRead(b"partial", 100)

    monkeypatch.setattr(urllib.request, "urlopen", lambda *_, **__: CutShort())
    source = SourceFile(path="scan/tasks.txt", url="https://example.org/tasks.txt", sha256="0" * 64)
    with pytest.raises(SourceUnavailable) as caught:
        resolve(source)
    assert "STRUCTBENCH_SOURCE_DIR" in str(caught.value)  # the full message names the fix; the short one, the reason
    assert (
        caught.value.short
        == "scan/tasks.txt was not found locally and could not be downloaded (IncompleteRead(7 bytes read, 100 more expected))"
    )


def test_a_missing_file_is_downloaded_once_into_the_cache(
    web_folder: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, url = web_folder
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("STRUCTBENCH_SOURCE_DIR", str(tmp_path / "empty"))
    (folder / "train.tsv").write_bytes(b"000 t1 .\t000 001\t0 1 2\n")
    source = SourceFile(
        path="lookup_tables/x/train.tsv",
        url=f"{url}/train.tsv",
        sha256=hashlib.sha256(b"000 t1 .\t000 001\t0 1 2\n").hexdigest(),
    )
    cached = tmp_path / "home" / "sources" / "lookup_tables" / "x" / "train.tsv"
    assert resolve(source) == cached
    assert cached.read_bytes() == (folder / "train.tsv").read_bytes()
    (folder / "train.tsv").unlink()  # the server no longer has it: the cache answers
    assert resolve(source) == cached


def test_a_download_with_other_bytes_is_refused_and_not_cached(
    web_folder: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, url = web_folder
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("STRUCTBENCH_SOURCE_DIR", str(tmp_path / "empty"))
    (folder / "f.tsv").write_bytes(b"upstream changed\n")
    source = SourceFile(path="d/f.tsv", url=f"{url}/f.tsv", sha256=hashlib.sha256(b"original\n").hexdigest())
    with pytest.raises(UserError, match="pinned") as caught:
        resolve(source)
    assert f"{url}/f.tsv" in str(caught.value) and "STRUCTBENCH_SOURCE_DIR" in str(caught.value)
    assert not (tmp_path / "home" / "sources" / "d").exists()


def test_a_generator_change_under_a_released_version_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    suite = registry.suite("lookup-tables")
    original = type(suite).generate

    def drifted(self, draw, files):  # type: ignore[no-untyped-def]
        splits = original(self, draw, files)
        splits["train"] = list(reversed(splits["train"]))
        return splits

    monkeypatch.setattr(type(suite), "generate", drifted)
    with pytest.raises(DataIntegrityError, match="new suite version") as caught:
        freeze.build(suite)
    assert "draw0/train" in str(caught.value) and "draw0/heldout_tables" not in str(caught.value)
    assert not (tmp_path / "home" / "suites" / SUITE_KEY).exists()


def fake_released(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: Callable[[dict[str, Any]], str] | None = None
) -> Path:
    """A copy of lookup-tables' committed manifest, passed through `edit`, that the suite takes for its released one."""
    suite = registry.suite("lookup-tables")
    committed = suite.released_manifest()
    assert committed is not None
    path = tmp_path / "manifests" / f"{SUITE_KEY}.json"
    path.parent.mkdir(parents=True)
    text = committed.read_text()
    path.write_text(text if edit is None else edit(json.loads(text)))
    monkeypatch.setattr(type(suite), "released_manifest", classmethod(lambda cls: path))
    return path


def wrong_hash(manifest: dict[str, Any]) -> str:
    """draw1/validation gets another SHA-256; the suite hash is left as it was (a hand edit)."""
    manifest["splits"]["draw1/validation"]["sha256"] = "0" * 64
    return json.dumps(manifest, indent=2)


def test_a_released_manifest_with_one_wrong_split_hash_is_refused_at_build_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    path = fake_released(tmp_path, monkeypatch, wrong_hash)
    assert main(["build", "lookup-tables"]) == 2
    line = one_sentence_error(capsys.readouterr().err)
    assert str(path) in line and "git checkout" in line
    assert not (tmp_path / "home" / "suites" / SUITE_KEY).exists()
    # `run` reports the same damaged file, not a "rebuild it" that no rebuild can satisfy
    assert main(["run", "--suite", "lookup-tables", "--model", "oracle", "--store", str(store_path)]) == 2
    line = one_sentence_error(capsys.readouterr().err)
    assert str(path) in line and "git checkout" in line and "rebuild" not in line


def recomputed(edit: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], str]:
    """An edit of a manifest after which its suite hash is recomputed, so it stays consistent with itself."""

    def apply(manifest: dict[str, Any]) -> str:
        edit(manifest)
        digests = {key: freeze.SplitDigest(**digest) for key, digest in manifest["splits"].items()}
        manifest["suite_hash"] = freeze.suite_hash(digests)
        return json.dumps(manifest, indent=2)

    return apply


@pytest.mark.parametrize("field, value", [("sha256", "0" * 64), ("n_examples", 17)], ids=["sha256", "n_examples"])
def test_a_build_is_compared_with_every_split_of_a_consistent_released_manifest(
    field: str,
    value: object,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    store_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    path = fake_released(
        tmp_path, monkeypatch, recomputed(lambda m: m["splits"]["draw1/validation"].update({field: value}))
    )
    assert main(["build", "lookup-tables"]) == 2
    line = one_sentence_error(capsys.readouterr().err)
    assert "draw1/validation" in line and "draw0/validation" not in line and "new suite version" in line
    assert str(path) in line
    assert not (tmp_path / "home" / "suites" / SUITE_KEY).exists()
    assert main(["run", "--suite", "lookup-tables", "--model", "oracle", "--store", str(store_path)]) == 2
    assert "draw1/validation" in one_sentence_error(capsys.readouterr().err)


@pytest.mark.parametrize("command", [["build", "lookup-tables"], ["build", "lookup-tables", "--verify"], ["suites"]])
def test_a_truncated_released_manifest_is_one_sentence_naming_it(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    (tmp_path / "home" / "suites" / SUITE_KEY).mkdir(parents=True)
    (tmp_path / "home" / "suites" / SUITE_KEY / "manifest.json").write_text("{}")  # so that --verify looks
    path = fake_released(tmp_path, monkeypatch, lambda manifest: json.dumps(manifest, indent=2)[:700])
    assert main(command) in (1, 2)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    [line] = [line for line in captured.err.splitlines() if str(path) in line]
    assert "not a valid manifest" in line and "git checkout" in line


def test_a_consistent_released_manifest_still_builds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    fake_released(tmp_path, monkeypatch, lambda manifest: json.dumps(manifest))  # same content, other layout
    assert main(["build", "lookup-tables"]) == 0
    assert main(["build", "lookup-tables", "--verify"]) == 0
    assert f"ok {SUITE_KEY}" in capsys.readouterr().out


@pytest.mark.parametrize(
    "path", sorted((REPO / "src" / "structbench" / "suites" / "manifests").glob("*.json")), ids=lambda p: p.stem
)
def test_every_committed_manifest_is_consistent(path: Path) -> None:
    suite = registry.suite(path.stem)
    # installed (as under tox) the released manifest is a copy of the committed file
    assert (released := suite.released_manifest()) is not None and released.read_bytes() == path.read_bytes()
    manifest = freeze.expected_manifest(suite)
    assert manifest is not None and manifest.suite_hash == json.loads(path.read_text())["suite_hash"]


def test_a_damaged_local_manifest_is_one_sentence_and_a_build_repairs_it(
    built_home: Path, store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = built_home / "manifest.json"
    path.write_text(path.read_text()[:300])
    assert main(["run", "--suite", "lookup-tables", "--model", "oracle", "--store", str(store_path)]) == 2
    line = one_sentence_error(capsys.readouterr().err)
    assert str(path) in line and "structbench build lookup-tables" in line
    assert main(["build", "lookup-tables", "--verify"]) == 1
    [line] = mismatches(capsys.readouterr().err)
    assert str(path) in line
    assert main(["build", "lookup-tables"]) == 0
    assert main(["build", "lookup-tables", "--verify"]) == 0


def test_a_build_of_identical_data_leaves_the_published_folder_alone(
    built_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = os.stat(built_home).st_ino
    assert main(["build", "lookup-tables"]) == 0  # as when another process built it first
    assert os.stat(built_home).st_ino == before
    write_stored(built_home / "draw3" / "train.jsonl.gz", b"tampered\n")
    assert main(["build", "lookup-tables"]) == 0  # a stale folder is replaced by a new one
    assert os.stat(built_home).st_ino != before
    leftovers = [p.name for p in built_home.parent.iterdir() if p.name.startswith(".") and not p.name.endswith(".lock")]
    assert leftovers == []
    assert main(["build", "lookup-tables", "--verify"]) == 0


def test_a_reader_waits_out_a_publish_instead_of_failing(built_home: Path) -> None:
    suite = registry.suite("lookup-tables")
    manifest = freeze.expected_manifest(suite)
    assert manifest is not None
    aside = built_home.parent / f".{SUITE_KEY}.stale-test"
    loaded: list[object] = []

    def read() -> None:
        try:
            loaded.append(freeze.load_split(suite, manifest, 2, "train"))
        except Exception as error:
            loaded.append(error)

    with freeze.lock_path(suite).open("a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)  # a publisher between its two renames
        built_home.rename(aside)
        reader = threading.Thread(target=read)
        reader.start()
        reader.join(0.5)
        assert reader.is_alive() and loaded == []
        aside.rename(built_home)
        fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
    reader.join(10)
    [split] = loaded
    assert isinstance(split, Split) and len(split) == manifest.splits["draw2/train"].n_examples


def test_building_every_suite_skips_those_whose_files_cannot_be_had_and_lists_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    offline(tmp_path, monkeypatch, "no network")
    assert main(["build"]) == 0  # what can be built is built, after the suites that cannot be
    captured = capsys.readouterr()
    assert "built agreement-attractors@2.0.0" in captured.out
    assert "skipped agreement-linzen-number@2.0.0: linzen/agr_50_mostcommon_10K.tsv was not found" in captured.err
    message = "skipped scan-simple@2.0.0: scan/tasks_train_simple.txt was not found locally and could not be downloaded"
    assert message in captured.err
    empty, cache = tmp_path / "empty", tmp_path / "home" / "sources"
    assert captured.err.splitlines()[-1] == (
        f"built 1 of 3 suites; skipped 2, whose source files are not in {empty} (STRUCTBENCH_SOURCE_DIR) or {cache} "
        "(the cache) and could not be downloaded (reasons above): agreement-linzen-number, scan-simple. "
        f"STRUCTBENCH_SOURCE_DIR is set to {empty}, which does not exist: make it and put them there, or point "
        "STRUCTBENCH_SOURCE_DIR at a folder that holds them; or run online to download those that have a download "
        "address."
    )
    skips = [line for line in captured.err.splitlines() if line.startswith("skipped ")]
    assert len(skips) == 2  # one short line each: the reason, not the URL or the fix, which ends the output once
    assert not any("http" in line or "STRUCTBENCH_SOURCE_DIR" in line for line in skips)
    assert main(["build", "agreement-linzen-number"]) == 2  # named, its files are needed
    assert one_sentence_error(capsys.readouterr().err).endswith(
        f"STRUCTBENCH_SOURCE_DIR is set to {empty}, which does not exist: make it and put it there, or point "
        "STRUCTBENCH_SOURCE_DIR at a folder that holds it."
    )


def test_splits_are_stored_compressed_and_hashed_by_their_json_lines(built_home: Path) -> None:
    suite = registry.suite("lookup-tables")
    manifest = freeze.expected_manifest(suite)
    released = suite.released_manifest()
    assert manifest is not None and released is not None
    assert manifest.suite_hash == json.loads(released.read_text())["suite_hash"]  # storage changes no hash
    for key, digest in manifest.splits.items():
        stored = built_home / f"{key}.jsonl.gz"
        lines = read_stored(stored)
        assert hashlib.sha256(lines).hexdigest() == digest.sha256
        assert stored.stat().st_size * 3 < len(lines)
        draw, name = key.removeprefix("draw").split("/")
        examples = freeze.load_split(suite, manifest, int(draw), name).examples
        assert [example.model_dump_json(exclude_none=True) for example in examples] == lines.decode().splitlines()
    assert sorted(p.name for p in built_home.glob("draw0/*")) == sorted(f"{s.name}.jsonl.gz" for s in suite.spec.splits)


def test_a_folder_built_before_compression_still_reads_and_a_build_compresses_it(
    built_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = registry.suite("lookup-tables")
    manifest = freeze.expected_manifest(suite)
    assert manifest is not None
    for stored in built_home.rglob("*.jsonl.gz"):  # the layout of an older structbench: plain files, no audit
        stored.with_suffix("").write_bytes(read_stored(stored))
        stored.unlink()
    (built_home / freeze.AUDIT).unlink()
    assert freeze.verify(suite) == []
    assert freeze.ensure_built(suite) == manifest  # used as it is, not rebuilt
    assert len(freeze.load_split(suite, manifest, 3, "train").examples) == manifest.splits["draw3/train"].n_examples
    assert freeze.built_audit(suite, manifest.suite_hash) is None

    assert main(["build", "lookup-tables"]) == 0  # publishes the compressed layout with its audit
    assert not list(built_home.rglob("*.jsonl")) and len(list(built_home.rglob("*.jsonl.gz"))) == len(manifest.splits)
    assert freeze.built_audit(suite, manifest.suite_hash) is not None
    assert main(["build", "lookup-tables", "--verify"]) == 0


def test_a_split_written_after_this_process_read_it_is_read_again_and_refused(built_home: Path) -> None:
    suite = registry.suite("lookup-tables")
    manifest = freeze.expected_manifest(suite)
    assert manifest is not None
    first = freeze.load_split(suite, manifest, 0, "heldout_inputs")
    assert freeze.load_split(suite, manifest, 0, "heldout_inputs") == first  # the same file: served as read
    path = built_home / "draw0" / "heldout_inputs.jsonl.gz"
    write_stored(path, read_stored(path).replace(b'"000"', b'"111"', 1))
    with pytest.raises(DataIntegrityError, match="does not match the manifest"):
        freeze.load_split(suite, manifest, 0, "heldout_inputs")

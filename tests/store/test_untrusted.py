"""The bounded reader of files from outside the package: what a hostile file cannot make it do (block,
follow a link, read without end, inflate without end, recurse without end)."""

from __future__ import annotations

import gzip
import json
import os
import zlib
from pathlib import Path

import pytest

from structbench.store.untrusted import MAX_DEPTH, Refused, inflate, nesting, parse_json, read_file
from tests.support.deadline import deadline


def test_a_regular_file_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_bytes(b'{"a": 1}')
    assert read_file(path, 8, root=tmp_path) == b'{"a": 1}'


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "x.json"
    os.mkfifo(fifo)
    with deadline(), pytest.raises(Refused, match="it is a FIFO, not a regular file"):
        read_file(fifo, 100)


def test_a_device_and_a_link_to_one_are_refused(tmp_path: Path) -> None:
    with pytest.raises(Refused, match="it is a character device, not a regular file"):
        read_file(Path("/dev/zero"), 100)
    link = tmp_path / "seed0.json.gz"
    link.symlink_to("/dev/zero")
    with pytest.raises(Refused, match="it is a symbolic link, and a link is never followed here"):
        read_file(link, 100)
    with pytest.raises(Refused, match="character device"):  # a file the user named follows its link, and is refused
        read_file(link, 100, follow=True)


def test_a_file_behind_a_linked_folder_that_leads_out_of_the_root_is_refused(tmp_path: Path) -> None:
    outside, root = tmp_path / "outside", tmp_path / "bundle"
    outside.mkdir()
    (outside / "run.json").write_text("{}")
    (root / "runs").mkdir(parents=True)
    (root / "runs" / "x@1").symlink_to(outside)
    with pytest.raises(Refused, match=f"it lies outside {root}"):
        read_file(root / "runs" / "x@1" / "run.json", 100, root=root)


def test_a_file_larger_than_its_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as file:
        file.truncate(1 << 40)  # a sparse terabyte: read, it would never end
    with pytest.raises(Refused, match=r"it holds 1,099,511,627,776 bytes, more than the 1,000 such a file may hold"):
        read_file(path, 1000)


def test_a_gzip_bomb_stops_at_the_inflated_cap() -> None:
    bomb = gzip.compress(b"\0" * (64 << 20))  # 64 MiB of zeros in 64 KB
    with pytest.raises(Refused, match=r"it inflates to more than the 1,048,576 bytes such a file may hold"):
        inflate(bomb, 1 << 20)
    assert inflate(gzip.compress(b"abc" * 1000), 3000) == b"abc" * 1000
    assert inflate(zlib.compress(b"abc"), 3, gzip=False) == b"abc"


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"not gzip", "it is not gzip data"),
        (gzip.compress(b"abc", mtime=0)[:-6], "it is not a complete gzip stream"),
        (gzip.compress(b"abc", mtime=0) + gzip.compress(b"more", mtime=0), "it holds bytes after its gzip stream"),
    ],
)
def test_a_damaged_gzip_is_refused(data: bytes, problem: str) -> None:
    with pytest.raises(Refused, match=problem):
        inflate(data, 1000)


def test_json_nested_deeper_than_the_bound_is_refused_before_it_is_parsed() -> None:
    with pytest.raises(Refused, match=rf"its JSON nests 200,000 deep, deeper than the {MAX_DEPTH} such a file may"):
        parse_json(b"[" * 200_000 + b"]" * 200_000)
    assert parse_json(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH) is not None


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    text = json.dumps({"prediction": "[" * 1000, "escaped": '\\"[[[{{{', "list": [[1, ["x"]]]}).encode()
    assert nesting(text) == 4  # the object, then three lists
    assert parse_json(text)["prediction"] == "[" * 1000


def test_nan_and_overflowing_numbers_are_left_to_the_schema_that_names_their_field() -> None:
    value = parse_json(b'{"value": NaN, "n": 1e400}')
    assert value["value"] != value["value"] and value["n"] == float("inf")


@pytest.mark.parametrize(("data", "problem"), [(b"\xff\xfe", "it is not UTF-8 text"), (b"{1: 2}", "it is not JSON")])
def test_text_that_is_not_json_is_refused(data: bytes, problem: str) -> None:
    with pytest.raises(Refused, match=problem):
        parse_json(data)

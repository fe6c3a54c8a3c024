"""Reading a file that came from outside the package: every step bounded before it starts.

A bundle of runs travels between users, and so will imported results; a golden file and a store's
predictions are input too. Such a file may be anything: a FIFO that blocks its reader forever, a
device or a link to one that never ends, a link out of the folder it claims to be in, a gzip that
inflates to gigabytes, JSON nested deeper than the parser's recursion. So each read here checks
what it is about to do before it does it:

- `read_file`: a regular file only, opened without following a link at its last step
  (`O_NOFOLLOW`) and without waiting for a writer (`O_NONBLOCK`: a FIFO opens at once and is then
  refused), checked with `fstat` (a regular file of at most `limit` bytes) before a byte is read;
  where a `root` is given, its folder must lie inside the root once links are resolved;
- `inflate`: gzip or zlib decompressed in chunks (`zlib.decompressobj` with `max_length`), so that
  a bomb stops at `limit` inflated bytes, not at the machine's memory;
- `parse_json`: the nesting is measured on the bytes first (strings left out) and anything deeper
  than `MAX_DEPTH` refused, so that the parser's recursion never runs out.

A refusal is `Refused`, a ValueError whose message is one clause saying what is wrong with the
file; the caller's sentence names the file and the fix. What the values mean (finite numbers,
counts, statuses) is the caller's schema to check.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import zlib
from pathlib import Path
from typing import Any

MAX_DEPTH = 64
"""The deepest nesting of arrays and objects `parse_json` reads (a bundle's files nest 6 deep)."""
CHUNK = 1 << 16
"""How many bytes `inflate` feeds the decompressor at a time."""


class Refused(ValueError):
    """A file, or bytes, that a bounded read refused: the message is one clause saying why."""


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def inside(path: Path, root: Path) -> bool:
    """Whether the folder of `path` is `root` or lies under it once every link is resolved."""
    try:
        return Path(os.path.realpath(path.parent)).is_relative_to(os.path.realpath(root))
    except (OSError, ValueError):
        return False


def read_file(path: Path, limit: int, *, root: Path | None = None, follow: bool = False) -> bytes:
    """The bytes of the regular file `path`, at most `limit` of them, read without blocking and without
    following a link at its last step (unless `follow`: a file the user named, whose link is theirs);
    where `root` is given, `path`'s folder must lie inside it. Anything else raises `Refused` before
    the file's content is read."""
    if root is not None and not inside(path, root):
        raise Refused(f"it lies outside {root} (a linked folder leads out of it)")
    nofollow = 0 if follow else getattr(os, "O_NOFOLLOW", 0)
    flags = os.O_RDONLY | os.O_NONBLOCK | nofollow | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        if error.errno == errno.ELOOP and not follow:
            raise Refused("it is a symbolic link, and a link is never followed here") from None
        raise Refused(f"it cannot be opened ({error.strerror or error})") from None
    try:
        found = os.fstat(descriptor)
        if not stat.S_ISREG(found.st_mode):
            raise Refused(f"it is {_kind(found.st_mode)}, not a regular file")
        if found.st_size > limit:
            raise Refused(f"it holds {found.st_size:,} bytes, more than the {limit:,} such a file may hold")
        chunks = []
        total = 0
        while chunk := os.read(descriptor, min(CHUNK * 16, limit + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # it grew after fstat
                raise Refused(f"it holds more than the {limit:,} bytes such a file may hold")
        return b"".join(chunks)
    except OSError as error:
        raise Refused(f"it cannot be read ({error.strerror or error})") from None
    finally:
        os.close(descriptor)


def inflate(data: bytes, limit: int, *, gzip: bool = True) -> bytes:
    """`data` decompressed (a gzip member, or zlib where `gzip` is False), refused with `Refused` as soon
    as it would inflate past `limit` bytes, or when it is not what it says."""
    kind = "gzip" if gzip else "zlib"
    inflater = zlib.decompressobj(wbits=31 if gzip else 15)
    out = bytearray()
    view, offset = memoryview(data), 0
    try:
        while not inflater.eof:
            source: bytes | memoryview
            if inflater.unconsumed_tail:
                source = inflater.unconsumed_tail
            elif offset < len(view):
                source, offset = view[offset : offset + CHUNK], offset + CHUNK
            else:
                raise Refused(f"it is not a complete {kind} stream (it ends early)")
            out += inflater.decompress(source, limit + 1 - len(out))  # never more than the cap allows
            if len(out) > limit:
                raise Refused(f"it inflates to more than the {limit:,} bytes such a file may hold")
    except zlib.error as error:
        raise Refused(f"it is not {kind} data ({error})") from None
    if inflater.unused_data or offset < len(view):
        raise Refused(f"it holds bytes after its {kind} stream")
    return bytes(out)


_ESCAPE = re.compile(rb"\\.", re.DOTALL)
"""A backslash escape inside a JSON string (`\\"` among them), dropped before strings are found."""
_NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[]{}")))


def _deepest(brackets: bytes) -> int:
    import numpy as np

    if not brackets:
        return 0
    codes = np.frombuffer(brackets, dtype=np.uint8)
    steps = np.where((codes == ord("[")) | (codes == ord("{")), 1, -1).astype(np.int64)
    return int(np.cumsum(steps).max())


def nesting(data: bytes, at_most: int | None = None) -> int:
    """How deep the arrays and objects of the JSON text `data` nest (an upper bound where `data` is
    not JSON), measured without parsing it. Where the count over every bracket, those inside strings
    too, is within `at_most`, that count is returned; else strings are left out and it is exact."""
    bound = _deepest(data.translate(None, _NOT_BRACKETS))
    if at_most is not None and bound <= at_most:
        return bound
    unescaped = _ESCAPE.sub(b"", data) if b"\\" in data else data
    outside = b"".join(unescaped.split(b'"')[::2])  # every other piece between quotes: not in a string
    return _deepest(outside.translate(None, _NOT_BRACKETS))


def parse_json(data: bytes | str, *, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value of `data` (UTF-8), refused with `Refused` where it nests deeper than `max_depth`,
    is not UTF-8 or not JSON. NaN, Infinity and a number too large for a double (1e400, read as
    infinity) are read as Python reads them: the caller's schema refuses them by field."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if (depth := nesting(raw, max_depth)) > max_depth:
        raise Refused(f"its JSON nests {depth:,} deep, deeper than the {max_depth} such a file may")
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise Refused(f"it is not UTF-8 text (byte {error.start})") from None
    except RecursionError:  # a bound above the interpreter's: never with MAX_DEPTH
        raise Refused("its JSON nests deeper than this Python can read") from None
    except ValueError as error:  # json.JSONDecodeError, and an integer of more digits than Python converts
        raise Refused(f"it is not JSON ({' '.join(str(error).split())[:120]})") from None

"""Windows of lines from files of any size, at any offset, in flat memory.

A line number cannot be turned into a byte offset without counting the
newlines before it. The first read of a huge file counts them once and keeps
a *sparse* index: the number of newlines before the start of every 64 KiB
block (16 384 integers for 1 GB, 128 KiB of memory). Later reads at any line
jump to the right block and scan at most one block plus the window itself, so
they take milliseconds. The index is cached per (real path, device, inode,
size, mtime): a changed file is counted again. It grows on demand: a read near
the start of a file never pays for its end.

Memory stays flat: scanning reuses one buffer, and a line longer than
``max_line_bytes`` (minified code, a log with no newlines) is cut while it is
read, never held whole.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from array import array
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

BLOCK = 1 << 16
_READ = 1 << 22  # bytes read at a time while counting
_WINDOW_READ = 1 << 18
_CACHE_SIZE = 16
# Files up to this size are indexed to the end in the background after a first read.
BACKGROUND_LIMIT = 4 << 30
_BACKGROUND_STEP = 64 << 20

IndexKey = tuple[str, int, int, int, int]


class _GiveWay(Exception):
    """Background counting stops for a read that is waiting."""


@dataclass(slots=True)
class RawLine:
    """One line's bytes (without the newline), cut if it was too long."""

    data: bytes
    full_length: int  # bytes in the whole line

    @property
    def cut(self) -> bool:
        return self.full_length > len(self.data)


class LineIndex:
    """Newline counts at 64 KiB block boundaries of one version of one file."""

    def __init__(self, size: int) -> None:
        self.size = size
        # starts[i]: newlines in bytes [0, i * BLOCK)
        self.starts = array("q", [0])
        self.scanned = 0  # bytes counted so far (a multiple of BLOCK, or size)
        self.newlines = 0  # newlines in bytes [0, scanned)
        self.lock = threading.Lock()
        self.background: threading.Thread | None = None
        # Reads waiting for or holding the lock (background counting gives way to them).
        self.readers = 0

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """Hold the index for a read, making background counting pause."""
        with _CACHE_LOCK:
            self.readers += 1
        try:
            with self.lock:
                yield
        finally:
            with _CACHE_LOCK:
                self.readers -= 1

    @property
    def complete(self) -> bool:
        return self.scanned >= self.size

    def extend(
        self,
        fh: BinaryIO,
        needed: int,
        check: Callable[[], None] | None = None,
        max_bytes: int | None = None,
    ) -> None:
        """Count on until ``needed`` newlines are known (or the end of the file, or
        ``max_bytes`` more bytes were counted)."""
        if self.newlines >= needed or self.complete:
            return
        buf = bytearray(_READ)
        fh.seek(self.scanned)
        stop_at = None if max_bytes is None else self.scanned + max_bytes
        while self.newlines < needed and not self.complete:
            if stop_at is not None and self.scanned >= stop_at:
                break
            if check is not None:
                check()
            n = _fill(fh, buf)
            if not n:
                self.size = self.scanned  # the file shrank under us; stop at what is there
                break
            for off in range(0, n, BLOCK):
                end = min(off + BLOCK, n)
                self.newlines += buf.count(b"\n", off, end)
                self.scanned += end - off
                if end - off == BLOCK:
                    self.starts.append(self.newlines)

    def line_offset(
        self, fh: BinaryIO, line: int, check: Callable[[], None] | None = None
    ) -> int | None:
        """Byte offset where 1-based ``line`` starts; None when the file has fewer lines."""
        if line <= 1:
            return 0
        need = line - 1  # newlines before the line
        self.extend(fh, need, check)
        if self.newlines < need:
            return None
        block = bisect_left(self.starts, need) - 1
        pos = block * BLOCK
        skip = need - self.starts[block]
        fh.seek(pos)
        while True:
            data = fh.read(BLOCK)
            if not data:
                return None
            count = data.count(b"\n")
            if count < skip:
                skip -= count
                pos += len(data)
                continue
            at = -1
            for _ in range(skip):
                at = data.find(b"\n", at + 1)
            return pos + at + 1

    def total_lines(self, fh: BinaryIO) -> int | None:
        """Lines in the file (a last line without newline counts), once fully counted."""
        if not self.complete:
            return None
        if self.size == 0:
            return 0
        fh.seek(self.size - 1)
        last = fh.read(1)
        return self.newlines + (0 if last == b"\n" else 1)


def _fill(fh: BinaryIO, buf: bytearray) -> int:
    """Read until ``buf`` is full or the file ends (blocks must stay aligned)."""
    view = memoryview(buf)
    n = 0
    while n < len(buf):
        got = fh.readinto(view[n:])  # type: ignore[attr-defined]
        if not got:
            break
        n += got
    return n


_CACHE: OrderedDict[IndexKey, LineIndex] = OrderedDict()
_CACHE_LOCK = threading.Lock()


def index_for(path: str, st: os.stat_result) -> LineIndex:
    """The cached index of this version of the file (a new one when it changed)."""
    key: IndexKey = (os.path.realpath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    with _CACHE_LOCK:
        index = _CACHE.get(key)
        if index is None:
            index = _CACHE[key] = LineIndex(st.st_size)
            while len(_CACHE) > _CACHE_SIZE:
                _CACHE.popitem(last=False)
        else:
            _CACHE.move_to_end(key)
        return index


def finish_in_background(path: str, index: LineIndex, limit: int | None = None) -> None:
    """Count the rest of the file on a worker thread, so the next read anywhere is fast.

    A model that read the start of a huge log usually reads its middle or end
    next; by then the index is complete. Files over ``limit`` bytes are left to
    be counted on demand.
    """
    limit = BACKGROUND_LIMIT if limit is None else limit
    if index.complete or index.size > limit or index.background is not None:
        return

    def give_way() -> None:
        if index.readers:
            raise _GiveWay

    def work() -> None:
        # A read that comes in stops the counting at once (the index stays consistent
        # after every 4 MiB), and counting resumes when no read is waiting: under the
        # GIL a busy counter would otherwise slow every read down.
        try:
            with open(path, "rb") as fh:
                while not index.complete:
                    while index.readers:
                        time.sleep(0.005)
                    try:
                        with index.lock:
                            index.extend(fh, 1 << 62, give_way, max_bytes=_BACKGROUND_STEP)
                    except _GiveWay:
                        continue
        except OSError:
            pass

    index.background = threading.Thread(target=work, name="codev-line-index", daemon=True)
    index.background.start()


def clear_cache() -> None:
    with _CACHE_LOCK:
        _CACHE.clear()


def read_lines_at(
    fh: BinaryIO, pos: int, count: int, max_line_bytes: int
) -> tuple[list[RawLine], int]:
    """Up to ``count`` lines starting at byte ``pos``; returns them and the byte after the last.

    A final line without a newline is included. Lines longer than
    ``max_line_bytes`` are cut while reading (their full length is counted).
    Chunks are split in C (``bytes.split``); only a line that spans chunks is
    carried over, and never more than ``max_line_bytes`` of it.
    """
    fh.seek(pos)
    lines: list[RawLine] = []
    carry = b""  # the start of a line that continues in the next chunk (cut)
    carry_len = 0  # its full length so far
    while len(lines) < count:
        chunk = fh.read(_WINDOW_READ)
        if not chunk:
            if carry_len:
                lines.append(RawLine(carry, carry_len))
                pos += carry_len
            break
        parts = chunk.split(b"\n")
        tail = parts.pop()  # no newline after it (yet)
        if parts and carry_len:
            first = parts[0]
            lines.append(RawLine((carry + first)[:max_line_bytes], carry_len + len(first)))
            pos += carry_len + len(first) + 1
            parts = parts[1:]
            carry, carry_len = b"", 0
        for part in parts[: count - len(lines)]:
            lines.append(RawLine(part[:max_line_bytes], len(part)))
            pos += len(part) + 1
        if len(lines) >= count:
            break
        if carry_len or not parts:
            carry = (carry + tail)[:max_line_bytes] if len(carry) < max_line_bytes else carry
            carry_len += len(tail)
        else:
            carry, carry_len = tail[:max_line_bytes], len(tail)
    return lines, pos

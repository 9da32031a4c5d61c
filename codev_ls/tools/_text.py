"""Text files as the file tools see them: encoding, line endings, diffs.

Edit and Write must give back a file that differs from the original only where
the model asked: same encoding (UTF-8, UTF-8 with BOM, UTF-16, or a legacy
8-bit code page), same line endings (LF or CRLF). The model never sees ``\\r``
(Read shows lines without it), so its strings are mapped onto the file's line
endings here, and diffs are shown with plain ``\\n``.
"""

from __future__ import annotations

import codecs
import difflib
import re
from dataclasses import dataclass

# How much of a file decides its encoding when it is read in pieces.
SNIFF_BYTES = 64 * 1024

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


# C0 control bytes that text does not contain (tab, line breaks, form feed, backspace,
# bell and escape are kept: logs and terminal captures hold them), and DEL.
_CONTROL_BYTES = bytes(b for b in range(32) if b not in b"\t\n\r\f\v\b\a\x1b") + b"\x7f"
_C1_BYTES = bytes(range(0x80, 0xA0))
# More than this share of control bytes (and more than a handful) is binary data.
# Random bytes are neither UTF-8 nor cp1252 (past a few hundred bytes) and hold about
# 22% C0 and C1 controls; text with \x01 field separators (Hive) stays text.
_MAX_CONTROL_SHARE = 0.30
_MAX_LATIN1_CONTROL_SHARE = 0.08
_MIN_CONTROLS = 8


class NotText(ValueError):
    """The bytes are not text in any encoding we accept (binary data)."""


@dataclass(slots=True)
class DecodedText:
    """A file's text and how to write it back byte for byte."""

    text: str
    encoding: str
    line_ending: str  # "\n" or "\r\n": the file's dominant line ending


def bom_encoding(head: bytes) -> str | None:
    """The encoding a byte-order mark at the start of ``head`` announces."""
    for bom, name in _BOMS:
        if head.startswith(bom):
            return name
    return None


def sniff_encoding(sample: bytes, *, complete: bool) -> str:
    """Guess the encoding of ``sample`` (the start of a file, or all of it).

    A BOM decides; else valid UTF-8 is UTF-8 (a multi-byte character cut at
    the end of an incomplete sample is allowed); else Windows-1252, the usual
    8-bit encoding of old Western files, when it decodes; else Latin-1, which
    decodes any byte and so writes every untouched byte back as it was.
    Raises :class:`NotText` for NUL bytes outside UTF-16, and for a high share
    of control bytes (binary data that happens to hold no NUL).
    """
    bom = bom_encoding(sample)
    if bom is not None:
        return bom
    if b"\x00" in sample:
        raise NotText("NUL bytes")
    head = sample[:SNIFF_BYTES]
    # Control characters text does not use: a high share means binary data even
    # without NUL bytes (random or compressed bytes, machine code).
    controls = len(head) - len(head.translate(None, _CONTROL_BYTES))
    share = _MAX_CONTROL_SHARE
    try:
        codecs.getincrementaldecoder("utf-8")().decode(sample, final=complete)
        encoding = "utf-8"
    except UnicodeDecodeError:
        try:
            sample.decode("cp1252")
            encoding = "cp1252"
        except UnicodeDecodeError:
            # Only Latin-1 decodes it: its C1 controls (0x80-0x9f) count as controls too,
            # and the bar is lower (real Latin-1 text has next to none of either).
            encoding = "latin-1"
            controls += len(head) - len(head.translate(None, _C1_BYTES))
            share = _MAX_LATIN1_CONTROL_SHARE
    if controls > max(_MIN_CONTROLS, len(head) * share):
        raise NotText(f"{controls} control bytes in {len(head)}")
    return encoding


def detect_line_ending(text: str) -> str:
    """``"\\r\\n"`` when most line breaks are CRLF, else ``"\\n"``."""
    if "\r" not in text:  # a scan far cheaper than counting
        return "\n"
    crlf = text.count("\r\n")
    if crlf == 0:
        return "\n"
    lf = text.count("\n") - crlf
    return "\r\n" if crlf >= lf else "\n"


def decode_bytes(data: bytes) -> DecodedText:
    """Decode a whole file; raises :class:`NotText` for binary data."""
    encoding = sniff_encoding(data, complete=True)
    text = data.decode(encoding)
    return DecodedText(text, encoding, detect_line_ending(text))


def encode_text(text: str, encoding: str) -> bytes:
    """Encode for writing; raises ``UnicodeEncodeError`` when ``encoding`` cannot hold it."""
    return text.encode(encoding)


def can_encode(text: str, encoding: str) -> bool:
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return False
    return True


def to_line_ending(text: str, line_ending: str) -> str:
    """``text`` (written with ``\\n``) with every bare ``\\n`` turned into ``line_ending``."""
    if line_ending == "\n" or "\n" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\n", line_ending)


def normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n")


# --------------------------------------------------------------------------- diffs


def unified_diff(old: str | None, new: str, label: str, *, context: int = 3) -> str:
    """A ``git diff``-style unified diff of two versions of one file.

    ``old`` None means the file is new (``--- /dev/null``). CRLF is shown as
    plain line breaks; a missing final newline is marked as ``diff`` does.
    """
    before = old or ""
    fromfile = "/dev/null" if old is None else f"a/{label}"
    # difflib is quadratic-ish, and even splitting 10 MB into lines costs a
    # tenth of a second: only the lines around what changed are split and
    # diffed, and the hunks are put back at their real line numbers. An Edit
    # of one line in a 10 MB file takes milliseconds instead of seconds.
    start, tail = changed_window(before, new, context)
    head = before[:start]
    lo = count_lines(normalize_newlines(head) if "\r" in head else head, python=True)
    lines = difflib.unified_diff(
        _diff_lines(before[start : len(before) - tail]),
        _diff_lines(new[start : len(new) - tail]),
        fromfile,
        f"b/{label}",
        n=context,
    )
    out = []
    for line in lines:
        if lo and line.startswith("@@ "):
            line = _HUNK.sub(
                lambda m: (
                    f"-{_shift(m.group(1), m.group(2), lo)} +{_shift(m.group(3), m.group(4), lo)}"
                ),
                line,
                1,
            )
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)


_HUNK = re.compile(r"-(\d+)(,\d+)? \+(\d+)(,\d+)?")


def _shift(start: str, length: str | None, lo: int) -> str:
    # An empty range names the line before it ("-0,0" at the top of the window).
    return f"{int(start) + lo}{length or ''}"


# Python's str.splitlines breaks lines at these too (and at "\r\n" once).
_PY_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
_CHUNK = 1 << 16


def common_prefix_length(a: str, b: str) -> int:
    """How many leading characters ``a`` and ``b`` share (compared a block at a time)."""
    n = min(len(a), len(b))
    lo = 0
    while lo < n:
        hi = min(n, lo + _CHUNK)
        if a[lo:hi] == b[lo:hi]:
            lo = hi
            continue
        while hi - lo > 1:  # the first difference is in [lo, hi)
            mid = (lo + hi) // 2
            if a[lo:mid] == b[lo:mid]:
                lo = mid
            else:
                hi = mid
        return lo
    return n


def common_suffix_length(a: str, b: str, limit: int) -> int:
    """How many trailing characters ``a`` and ``b`` share, at most ``limit``."""
    la, lb = len(a), len(b)
    lo = 0
    while lo < limit:
        hi = min(limit, lo + _CHUNK)
        if a[la - hi : la - lo] == b[lb - hi : lb - lo]:
            lo = hi
            continue
        while hi - lo > 1:  # the last difference is hi..lo characters from the end
            mid = (lo + hi) // 2
            if a[la - mid : la - lo] == b[lb - mid : lb - lo]:
                lo = mid
            else:
                hi = mid
        return lo
    return limit


def changed_window(a: str, b: str, context: int) -> tuple[int, int]:
    """Where two texts differ, as whole lines plus ``context`` lines around: ``(start, tail)``.

    ``a[:start] == b[:start]`` and ``a[-tail:] == b[-tail:]`` (``tail`` may be 0);
    both cuts lie just after a ``\n`` (or at the ends), so they fall between
    lines however lines are counted, and splitting only ``a[start:len(a) - tail]``
    gives the same lines as splitting all of ``a``.
    """
    prefix = common_prefix_length(a, b)
    start = a.rfind("\n", 0, prefix) + 1
    for _ in range(context):
        if start == 0:
            break
        start = a.rfind("\n", 0, start - 1) + 1
    suffix = common_suffix_length(a, b, min(len(a), len(b)) - prefix)
    if suffix == 0:
        return start, 0
    first = a.find("\n", len(a) - suffix)
    tail = 0 if first < 0 else len(a) - first - 1
    for _ in range(context):
        if tail == 0:
            break
        nxt = a.find("\n", len(a) - tail)
        tail = 0 if nxt < 0 else len(a) - nxt - 1
    return start, tail


def count_lines(text: str, end: int | None = None, *, python: bool = False) -> int:
    """The number of line breaks in ``text[:end]`` (``end`` just after a ``\n``).

    LSP counts ``\n``, ``\r\n`` and ``\r``; ``python`` counts as
    ``str.splitlines`` does (form feeds, U+2028 and the rest too).
    """
    end = len(text) if end is None else end
    if end <= 0:
        return 0
    breaks = _PY_BREAKS if python else "\n\r"
    # Counted only when present (a find is far cheaper than a count; they rarely are).
    present = [ch for ch in breaks[1:] if text.find(ch, 0, end) >= 0]
    total = text.count("\n", 0, end) + sum(text.count(ch, 0, end) for ch in present)
    return total - text.count("\r\n", 0, end) if "\r" in present else total


def _diff_lines(text: str) -> list[str]:
    return normalize_newlines(text).splitlines(keepends=True)


def diff_stats(diff: str) -> tuple[int, int]:
    """Lines added and removed in a unified diff."""
    added = removed = 0
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


def cut_text(text: str, limit: int) -> str:
    """``text`` cut at a line boundary near ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    head = text[:limit].rsplit("\n", 1)[0]
    rest = text[len(head) :]
    return f"{head}\n… ({rest.count(chr(10)):,} more lines not shown)\n"

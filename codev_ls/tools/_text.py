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
    Raises :class:`NotText` for NUL bytes outside UTF-16.
    """
    bom = bom_encoding(sample)
    if bom is not None:
        return bom
    if b"\x00" in sample:
        raise NotText("NUL bytes")
    try:
        codecs.getincrementaldecoder("utf-8")().decode(sample, final=complete)
        return "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        sample.decode("cp1252")
        return "cp1252"
    except UnicodeDecodeError:
        return "latin-1"


def detect_line_ending(text: str) -> str:
    """``"\\r\\n"`` when most line breaks are CRLF, else ``"\\n"``."""
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
    old_lines = _diff_lines(old or "")
    new_lines = _diff_lines(new)
    fromfile = "/dev/null" if old is None else f"a/{label}"
    # difflib is quadratic-ish on long files: hand it only the part that changed (plus
    # context), then put the hunks back at their real line numbers. An Edit of one
    # line in a 10 MB file takes milliseconds instead of seconds.
    lo, old_hi, new_hi = _changed_span(old_lines, new_lines, context)
    lines = difflib.unified_diff(
        old_lines[lo:old_hi], new_lines[lo:new_hi], fromfile, f"b/{label}", n=context
    )
    out = []
    for line in lines:
        if lo and line.startswith("@@ "):
            line = _HUNK.sub(
                lambda m: f"-{int(m.group(1)) + lo}{m.group(2)} +{int(m.group(3)) + lo}", line, 1
            )
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)


_HUNK = re.compile(r"-(\d+)(,\d+)? \+(\d+)")


def _changed_span(old: list[str], new: list[str], context: int) -> tuple[int, int, int]:
    """(start, old end, new end) of the lines that differ, widened by ``context`` lines."""
    limit = min(len(old), len(new))
    start = 0
    while start < limit and old[start] == new[start]:
        start += 1
    end = 0
    while end < limit - start and old[-1 - end] == new[-1 - end]:
        end += 1
    keep = max(0, end - context)
    return max(0, start - context), len(old) - keep, len(new) - keep


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

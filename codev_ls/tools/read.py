"""Read: a file's text as numbered lines (``cat -n``), a window at a time.

Reads stream: a window of a huge file costs the lines before it, never the
whole file in memory. An open editor buffer is read as the user sees it,
unsaved changes included. What was read is recorded for the stale-read rule of
Edit and Write.
"""

from __future__ import annotations

import asyncio
import difflib
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from codev_ls.engine.context import FileReadRecord, ToolUseContext, digest_text
from codev_ls.engine.files import display_path, is_within
from codev_ls.engine.tool import (
    ProgressCallback,
    Tool,
    ToolError,
    ToolInterrupted,
    ToolResult,
    ValidationResult,
)
from codev_ls.permissions.types import PermissionSubject
from codev_ls.tools._text import SNIFF_BYTES, NotText, sniff_encoding

DEFAULT_LIMIT = 2_000
MAX_LINE_CHARS = 2_000
# Files up to this size are hashed whole when read (for the stale-read rule).
HASH_LIMIT_BYTES = 32 * 1024 * 1024
_CHUNK = 1 << 20

PROMPT = """\
Reads a file from the local filesystem.
- `file_path` must be an absolute path.
- By default up to 2000 lines are read from the start; use `offset` (1-based line number) and \
`limit` to read a window of a long file.
- Lines longer than 2000 characters are cut.
- Results are numbered like `cat -n` (line number, tab, text); the numbers are not part of the file.
- An open editor buffer is read as the user sees it, unsaved changes included.
- You must Read a file before you Edit or overwrite it."""


class ReadInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file_path: str = Field(description="The absolute path of the file to read.")
    offset: int | None = Field(
        default=None,
        ge=1,
        description="The line number to start reading from (1-based). Only for long files.",
    )
    limit: int | None = Field(
        default=None, ge=1, description="How many lines to read (default 2000)."
    )
    pages: str | None = Field(
        default=None,
        description='Page range of a PDF to read, e.g. "1-5" or "3". Only for PDF files.',
    )


class ReadTool(Tool):
    name = "Read"
    search_hint = "read file contents lines text pdf image notebook"
    input_model = ReadInput
    # Persisting a Read's result would only send the model to Read the copy.
    max_result_size_chars = 0

    def description(self) -> str:
        return "Read a file (text as numbered lines; PDF, images and notebooks too)."

    def prompt(self) -> str:
        return PROMPT

    def is_read_only(self, input: Any) -> bool:
        return True

    def is_concurrency_safe(self, input: Any) -> bool:
        return True

    def user_facing_name(self, input: Any = None) -> str:
        return "Read"

    def get_activity_description(self, input: ReadInput) -> str:
        return f"reading {Path(input.file_path).name}"

    def render_tool_use_message(self, input: ReadInput) -> str:
        window = ""
        if input.offset or input.limit:
            window = f" (lines {input.offset or 1}–{(input.offset or 1) + (input.limit or DEFAULT_LIMIT) - 1})"
        return f"Read {input.file_path}{window}"

    def to_auto_classifier_input(self, input: ReadInput) -> str:
        return input.file_path

    def permission_subject(self, input: ReadInput, ctx: ToolUseContext) -> PermissionSubject:
        path = Path(input.file_path)
        return PermissionSubject(summary=f"read {display_path(path, ctx.root)}", read_paths=[path])

    async def validate_input(self, input: ReadInput, ctx: ToolUseContext) -> ValidationResult:
        path = Path(input.file_path)
        if not path.is_absolute():
            return ValidationResult.fail(
                f"file_path must be an absolute path, got {input.file_path!r}. "
                f"Did you mean {ctx.root / input.file_path}?"
            )
        if ctx.bridge.read_buffer(path) is not None:
            return ValidationResult.success()
        if path.is_dir():
            return ValidationResult.fail(
                f"{path} is a directory, not a file. Use Glob or `ls` (Bash) to list it."
            )
        if not path.exists():
            return ValidationResult.fail(_missing_file_message(path, ctx.root))
        return ValidationResult.success()

    async def call(
        self, input: ReadInput, ctx: ToolUseContext, on_progress: ProgressCallback
    ) -> ToolResult:
        path = Path(input.file_path)
        offset = input.offset or 1
        limit = input.limit or DEFAULT_LIMIT
        buffer = ctx.bridge.read_buffer(path)
        if buffer is not None:
            lines = buffer.text.splitlines()
            window = lines[offset - 1 : offset - 1 + limit]
            total = len(lines)
            record = FileReadRecord(
                path=path,
                mtime_ns=_mtime_ns(path),
                size=len(buffer.text),
                digest=digest_text(buffer.text),
                buffer_version=buffer.version,
                partial=offset > 1 or total > len(window),
            )
            text_empty = buffer.text == ""
        else:
            window, total, record, text_empty = await asyncio.to_thread(
                read_window, path, offset, limit, ctx.abort
            )
        ctx.session.read_state[_key(path)] = record
        if text_empty:
            return ToolResult(
                f"<system-reminder>The file {path} exists but is empty.</system-reminder>"
            )
        if not window:
            return ToolResult(
                f"<system-reminder>The file {path} has {total} lines; offset {offset} is past "
                "its end.</system-reminder>"
            )
        body = format_numbered(window, offset)
        shown_end = offset + len(window) - 1
        if total is None:
            body += f"\n\n(Showing lines {offset}–{shown_end}; the file goes on. Use offset/limit to read more.)"
        elif offset > 1 or shown_end < total:
            body += f"\n\n(Showing lines {offset}–{shown_end} of {total}. Use offset/limit to read more.)"
        return ToolResult(body)


def _key(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _mtime_ns(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0


def format_numbered(lines: list[str], first: int) -> str:
    """``cat -n`` style: right-aligned number, a tab, the line (cut when too long)."""
    out = []
    for n, line in enumerate(lines, first):
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f"… [line cut: {len(line):,} characters]"
        out.append(f"{n:>6}\t{line}")
    return "\n".join(out)


def read_window(
    path: Path, offset: int, limit: int, abort: Any = None
) -> tuple[list[str], int | None, FileReadRecord, bool]:
    """Lines ``offset``..``offset+limit-1`` of a file, its line count, and a read record.

    Streams in chunks: memory stays flat whatever the file's size. Small files
    are read to the end (line count, whole-file hash for the stale-read rule);
    for huge files reading stops after the window and the count is None.
    """
    import hashlib

    try:
        st = path.stat()
        fh = open(path, "rb")  # noqa: SIM115 - closed below
    except PermissionError as exc:
        raise ToolError(f"Permission denied reading {path}.") from exc
    except OSError as exc:
        raise ToolError(f"Cannot read {path}: {exc.strerror or exc}.") from exc
    small = st.st_size <= HASH_LIMIT_BYTES
    hasher = hashlib.sha256() if small else None
    window: list[str] = []
    first, last = offset, offset + limit - 1
    line_no = 0  # complete lines seen so far
    pending = b""
    newlines = 0
    last_byte = b""
    collecting = True
    encoding: str | None = None
    with fh:
        head = fh.read(4)
        fh.seek(0)
        if head.startswith((b"\xff\xfe", b"\xfe\xff")):
            return _read_utf16(fh, path, st, offset, limit)
        while chunk := fh.read(_CHUNK):
            if abort is not None and getattr(abort, "aborted", False):
                raise ToolInterrupted("read interrupted")
            if encoding is None:
                try:
                    encoding = sniff_encoding(
                        chunk[:SNIFF_BYTES], complete=st.st_size <= SNIFF_BYTES
                    )
                except NotText as exc:
                    raise ToolError(_binary_message(path, chunk[:8192])) from exc
                if encoding == "utf-8-sig":
                    encoding = "utf-8"  # the BOM is cut from the first line
            if hasher is not None:
                hasher.update(chunk)
            newlines += chunk.count(b"\n")
            last_byte = chunk[-1:]
            if not collecting:
                continue
            data = pending + chunk
            count = data.count(b"\n")
            if line_no + count < first:
                line_no += count
                pending = data[data.rfind(b"\n") + 1 :] if count else data
                continue
            parts = data.split(b"\n")
            pending = parts.pop()
            for raw in parts:
                line_no += 1
                if first <= line_no <= last:
                    window.append(_decode_line(raw, encoding))
            if line_no >= last:
                collecting = False
                if not small:
                    break
    total: int | None = None
    if collecting or small:
        total = newlines + (1 if last_byte and last_byte != b"\n" else 0)
        if collecting and pending and first <= line_no + 1 <= last:
            window.append(_decode_line(pending, encoding))
    record = FileReadRecord(
        path=path,
        mtime_ns=st.st_mtime_ns,
        size=st.st_size,
        digest=hasher.hexdigest() if hasher is not None else None,
        partial=offset > 1 or total is None or total > len(window),
    )
    return window, total, record, st.st_size == 0


def _read_utf16(
    fh: Any, path: Path, st: os.stat_result, offset: int, limit: int
) -> tuple[list[str], int | None, FileReadRecord, bool]:
    """A UTF-16 file (it has a BOM): decoded whole, as its NUL bytes defeat line streaming."""
    if st.st_size > HASH_LIMIT_BYTES:
        raise ToolError(
            f"{path} is a UTF-16 text file of {st.st_size / 2**20:,.0f} MiB; only UTF-16 files up "
            f"to {HASH_LIMIT_BYTES // 2**20} MiB can be read. Convert it with `iconv` (Bash)."
        )
    from codev_ls.engine.context import digest_bytes

    data = fh.read()
    lines = data.decode("utf-16", errors="replace").replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    window = lines[offset - 1 : offset - 1 + limit]
    record = FileReadRecord(
        path=path,
        mtime_ns=st.st_mtime_ns,
        size=st.st_size,
        digest=digest_bytes(data),
        partial=offset > 1 or len(lines) > len(window),
    )
    return window, len(lines), record, not lines


def _decode_line(raw: bytes, encoding: str | None) -> str:
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    return raw.decode(encoding or "utf-8", errors="replace")


def _binary_message(path: Path, sample: bytes) -> str:
    kind = _sniff_type(sample) or "binary data"
    return (
        f"{path} is a binary file ({kind}) and cannot be read as text. "
        "Use a tool that understands the format (e.g. Bash with `file`, `xxd | head`)."
    )


_MAGIC = [
    (b"\x7fELF", "an ELF executable"),
    (b"PK\x03\x04", "a ZIP archive"),
    (b"\x1f\x8b", "gzip-compressed data"),
    (b"%PDF", "a PDF document"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"SQLite format 3", "an SQLite database"),
]


def _sniff_type(sample: bytes) -> str | None:
    for magic, kind in _MAGIC:
        if sample.startswith(magic):
            return kind
    return None


def _missing_file_message(path: Path, root: Path) -> str:
    msg = f"File does not exist: {path}."
    folder = path.parent
    try:
        siblings = [p.name for p in folder.iterdir()] if folder.is_dir() else []
    except OSError:
        siblings = []
    close = difflib.get_close_matches(path.name, siblings, n=3, cutoff=0.6)
    if close:
        msg += " Did you mean " + ", ".join(str(folder / c) for c in close) + "?"
    elif not folder.exists():
        msg += f" The folder {folder} does not exist either."
    if not is_within(path, root):
        msg += f" (The workspace is {root}.)"
    return msg

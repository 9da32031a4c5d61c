"""Edit: replace an exact string in a file, through the editor, with a diff to review.

The change is computed against what the user sees (the open buffer, unsaved
changes included, else the disk), keeps the file's encoding and line endings,
needs a Read of the file earlier in the session with no change since, and is
applied by the bridge (``FileEdit``), never written here. It is recorded in the
session's change list so it can be reviewed and undone.
"""

from __future__ import annotations

import asyncio
import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from codev_ls.engine.context import ToolUseContext
from codev_ls.engine.files import display_path
from codev_ls.engine.tool import (
    InputError,
    ProgressCallback,
    Tool,
    ToolError,
    ToolResult,
    ValidationResult,
)
from codev_ls.permissions.types import PermissionSubject
from codev_ls.tools._edits import apply_change, change_meta, result_text
from codev_ls.tools._filestate import CurrentFile, check_fresh, load_current
from codev_ls.tools._paths import check_file_path
from codev_ls.tools._text import (
    can_encode,
    cut_text,
    diff_stats,
    normalize_newlines,
    unified_diff,
)

PROMPT = """\
Performs an exact string replacement in a file.
- You must Read the file earlier in the conversation before editing it; the edit is refused if \
the file changed since (read it again then).
- `old_string` must match the file exactly, including indentation, and exactly once unless \
`replace_all` is true; give enough surrounding lines to make it unique. Do not include the line \
numbers and tab that Read puts in front of each line.
- `new_string` must differ from `old_string`. `replace_all` changes every occurrence (e.g. to \
rename a variable).
- An empty `old_string` on a file that does not exist creates it with `new_string`.
- The file keeps its encoding and line endings (CRLF stays CRLF); when its legacy encoding \
(e.g. Latin-1) cannot hold the new text, it is written as UTF-8 and the result says so. The \
result is a unified diff.
- Prefer editing existing files to creating new ones. To edit a Jupyter notebook use NotebookEdit."""

# Files larger than this get no "did you mean" search (it reads every line).
_HINT_LIMIT_CHARS = 4_000_000


class EditInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file_path: str = Field(description="The absolute path of the file to change.")
    old_string: str = Field(description="The exact text to replace.")
    new_string: str = Field(description="The text to put in its place (must differ).")
    replace_all: bool = Field(
        default=False, description="Replace every occurrence of old_string (default false)."
    )


@dataclass(slots=True)
class PlannedEdit:
    """An edit computed against the file as it is now."""

    current: CurrentFile
    new_text: str
    count: int
    diff: str
    # The encoding the new text is written in: the file's own, or UTF-8 when the
    # file's cannot hold the new text (``note`` then tells the model).
    encoding: str = "utf-8"
    note: str = ""


class EditTool(Tool):
    name = "Edit"
    search_hint = "edit modify replace text in a file"
    input_model = EditInput
    edit_preview: ClassVar[bool] = True

    def description(self) -> str:
        return (
            "Replace an exact string in a file (keeps encoding and line endings); returns a diff."
        )

    def prompt(self) -> str:
        return PROMPT

    def is_read_only(self, input: Any) -> bool:
        return False

    def is_concurrency_safe(self, input: Any) -> bool:
        return False

    def is_destructive(self, input: Any) -> bool:
        # The change is recorded (before/after) and can be undone.
        return False

    def get_activity_description(self, input: EditInput) -> str:
        return f"editing {Path(input.file_path).name}"

    def render_tool_use_message(self, input: EditInput) -> str:
        every = " (all occurrences)" if input.replace_all else ""
        return f"Edit {input.file_path}{every}"

    def to_auto_classifier_input(self, input: EditInput) -> str:
        return f"{input.file_path}: {input.new_string[:200]}"

    def permission_subject(self, input: EditInput, ctx: ToolUseContext) -> PermissionSubject:
        path = Path(input.file_path)
        rel = display_path(path, ctx.root)
        try:
            detail = planned_edit(input, ctx).diff
        except ToolError as exc:
            detail = exc.message
        return PermissionSubject(summary=f"edit {rel}", detail=detail, write_paths=[path])

    async def validate_input(self, input: EditInput, ctx: ToolUseContext) -> ValidationResult:
        path = Path(input.file_path)
        problem = check_file_path(
            input.file_path,
            ctx.root,
            must_exist=False,
            has_buffer=ctx.bridge.read_buffer(path) is not None,
        )
        if problem:
            return ValidationResult.fail(problem)
        if input.old_string == input.new_string:
            return ValidationResult.fail(
                "old_string and new_string are the same, so there is nothing to change. "
                "Give the replacement text in new_string."
            )
        if path.suffix.lower() == ".ipynb":
            return ValidationResult.fail(
                f"{path} is a Jupyter notebook: change its cells with NotebookEdit instead."
            )
        await asyncio.to_thread(planned_edit, input, ctx)  # raises ToolError with the reason
        return ValidationResult.success()

    async def call(
        self, input: EditInput, ctx: ToolUseContext, on_progress: ProgressCallback
    ) -> ToolResult:
        # Computed again if the file or buffer changed while the user was asked.
        plan = await asyncio.to_thread(planned_edit, input, ctx)
        path = Path(input.file_path)
        change = await apply_change(
            ctx,
            tool_name=self.name,
            path=path,
            old_text=plan.current.text,
            new_text=plan.new_text,
            encoding=plan.encoding,
            old_encoding=plan.current.encoding,
            diff=plan.diff,
        )
        rel = display_path(path, ctx.root)
        added, removed = diff_stats(change.diff)
        if plan.current.text is None:
            summary = f"Created {rel} (+{added} lines)."
        else:
            what = f"{plan.count} occurrences" if plan.count > 1 else "1 occurrence"
            summary = f"Edited {rel}: replaced {what} (+{added} −{removed} lines)."
        text = result_text(summary, change)
        if plan.note:
            text += "\n" + plan.note
        return ToolResult(text, meta=change_meta(path, change))


_MEMO = "Edit.plan"


def planned_edit(input: EditInput, ctx: ToolUseContext) -> PlannedEdit:
    """:func:`plan_edit`, computed once per tool use while the file stays as it was.

    Validation, the permission prompt and the call each need the plan; for a
    10 MB file each computation reads, hashes and diffs all of it. The plan is
    reused while the input is the same, the buffer holds the very text it was
    computed on (the same string object: nothing was typed) and the file on disk
    has the same stamp. Anything else computes it again; and applying the edit
    checks once more that the buffer or file is what the plan was made against.
    """
    path = Path(input.file_path)
    disk = _disk_stamp(path)
    memo = ctx.memo.get(_MEMO)
    if memo is not None:
        m_input, m_disk, m_buffer, plan = memo
        buffer = ctx.bridge.read_buffer(path)
        if (
            m_input == input
            and m_disk == disk
            and (buffer is None) == (m_buffer is None)
            and (
                buffer is None
                or (buffer.text is m_buffer.text and buffer.version == m_buffer.version)
            )
        ):
            return plan
    plan = plan_edit(input, ctx)
    ctx.memo[_MEMO] = (input, disk, plan.current.buffer, plan)
    return plan


def _disk_stamp(path: Path) -> tuple[int, int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def plan_edit(input: EditInput, ctx: ToolUseContext) -> PlannedEdit:
    """Compute the edit against the buffer or disk; raise :class:`ToolError` saying why not."""
    path = Path(input.file_path)
    current = load_current(path, ctx.bridge.read_buffer(path))
    rel = display_path(path, ctx.root)
    if current.text is None:
        if input.old_string != "":
            raise InputError(
                f"File does not exist: {path}. To create it, use Write (or Edit with an "
                "empty old_string)."
            )
        new_text = input.new_string
        return PlannedEdit(current, new_text, 1, unified_diff(None, new_text, rel))
    check_fresh(ctx.session, current, action="edit")
    text = current.text
    if input.old_string == "":
        if text.strip():
            raise InputError(
                f"old_string is empty but {path} already has content. Give the exact text to "
                "replace (an empty old_string only fills an empty file or creates a new one)."
            )
        new_text = _to_file_endings(input.new_string, current.line_ending)
        return _planned(current, new_text, 1, unified_diff(text, new_text, rel))
    new_text, count = replace_in(text, input, current.line_ending)
    return _planned(current, new_text, count, unified_diff(text, new_text, rel))


def _planned(current: CurrentFile, new_text: str, count: int, diff: str) -> PlannedEdit:
    """The plan, with the encoding the new text can be written in (checked before any send)."""
    encoding, note = current.encoding, ""
    if not can_encode(new_text, encoding):
        note = (
            f"(The file was {encoding}, which cannot hold the new text; it was written as "
            "UTF-8, so its other non-ASCII characters are now stored as UTF-8 too.)"
        )
        encoding = "utf-8"
    return PlannedEdit(current, new_text, count, diff, encoding, note)


def _to_file_endings(s: str, line_ending: str) -> str:
    return normalize_newlines(s).replace("\n", line_ending) if line_ending != "\n" else s


_QUOTES = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"'})


def replace_in(text: str, input: EditInput, line_ending: str) -> tuple[str, int]:
    """Replace ``old_string`` in ``text``; raise :class:`InputError` unless it matches as asked.

    The model writes ``\\n``; in a CRLF file its strings are matched and
    written with ``\\r\\n``. Curly quotes in the file match straight ones in
    ``old_string`` (models often type straight quotes).
    """
    old, new = input.old_string, input.new_string
    variants: list[tuple[str, str]] = []
    if line_ending != "\n":
        variants.append((_to_file_endings(old, line_ending), _to_file_endings(new, line_ending)))
    variants.append((old, new))
    if "\r\n" in old:
        variants.append((normalize_newlines(old), normalize_newlines(new)))
    for needle, replacement in variants:
        count = text.count(needle)
        if count:
            return _replace(text, needle, replacement, count, input)
    # Straight quotes typed for the file's curly ones: find the file's own spelling.
    if any(q in text for q in "‘’“”"):
        for needle, replacement in variants:
            folded = text.translate(_QUOTES)
            at = folded.find(needle.translate(_QUOTES))
            if at >= 0:
                actual = text[at : at + len(needle)]
                return _replace(text, actual, replacement, text.count(actual), input)
    raise InputError(_not_found_message(text, input))


def _replace(
    text: str, needle: str, replacement: str, count: int, input: EditInput
) -> tuple[str, int]:
    if count > 1 and not input.replace_all:
        lines = _match_lines(text, needle)
        shown = ", ".join(str(n) for n in lines[:10]) + (", …" if len(lines) > 10 else "")
        raise InputError(
            f"old_string matches {count} times in {input.file_path} (at lines {shown}). "
            "Include more surrounding lines to make it unique, or set replace_all to true "
            "to change every occurrence."
        )
    return text.replace(needle, replacement), count


def _match_lines(text: str, needle: str) -> list[int]:
    lines = []
    start = 0
    line = 1
    pos = 0
    while True:
        at = text.find(needle, start)
        if at < 0:
            return lines
        line += text.count("\n", pos, at)
        pos = at
        lines.append(line)
        start = at + max(len(needle), 1)


def _not_found_message(text: str, input: EditInput) -> str:
    msg = (
        f"old_string was not found in {input.file_path}. It must match the file exactly, "
        "including whitespace and indentation (without Read's line-number prefixes)."
    )
    hint = _closest_passage(text, input.old_string)
    if hint:
        msg += "\n" + hint
    msg += "\nRead the file again to see its current content."
    return msg


def _closest_passage(text: str, old: str) -> str:
    """Where the file has something close to ``old``: same lines modulo whitespace, or similar."""
    if len(text) > _HINT_LIMIT_CHARS:
        return ""
    file_lines = normalize_newlines(text).split("\n")
    want = normalize_newlines(old).split("\n")
    first = next((ln.strip() for ln in want if ln.strip()), "")
    if not first:
        return ""
    for i, line in enumerate(file_lines):
        if line.strip() == first:
            window = file_lines[i : i + min(len(want), 6)]
            if [w.strip() for w in window] == [w.strip() for w in want[: len(window)]]:
                return (
                    f"The same lines, with different whitespace or indentation, are at line {i + 1}:\n"
                    + cut_text("\n".join(window), 1200)
                )
    stripped = [ln.strip() for ln in file_lines]
    close = difflib.get_close_matches(first, stripped, n=1, cutoff=0.75)
    if close:
        i = stripped.index(close[0])
        return f"A similar line is at line {i + 1}: {file_lines[i][:300]!r}"
    return ""

"""Write: create a file or replace its whole content, atomically, through the editor.

Overwriting needs a Read of the file earlier in the session with no change
since (the stale-read rule). An existing file keeps its encoding (when the new
text fits in it) and its CRLF line endings; its permission bits (and, where
the server may set them, owner and group) are kept by the atomic writer (temp
file + rename), and missing parent folders are created. The rename makes a new
file: other hard links to the old one keep the old content.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from codev_ls.engine.context import ToolUseContext
from codev_ls.engine.files import display_path
from codev_ls.engine.tool import ProgressCallback, Tool, ToolError, ToolResult, ValidationResult
from codev_ls.permissions.types import PermissionSubject
from codev_ls.tools._edits import apply_change, change_meta, result_text
from codev_ls.tools._filestate import CurrentFile, check_fresh, load_current
from codev_ls.tools._paths import check_file_path
from codev_ls.tools._text import can_encode, diff_stats, to_line_ending, unified_diff

PROMPT = """\
Writes a file: creates it, or replaces all of its content.
- `file_path` must be absolute; missing parent folders are created.
- Overwriting an existing file needs a Read of it earlier in the conversation, and is refused if \
it changed since (read it again then). To change part of a file, prefer Edit.
- An existing file keeps its encoding and line endings (CRLF stays CRLF).
- Do not create documentation or README files unless asked."""


class WriteInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file_path: str = Field(description="The absolute path of the file to write.")
    content: str = Field(description="The whole content of the file.")


@dataclass(slots=True)
class PlannedWrite:
    current: CurrentFile
    new_text: str
    encoding: str
    diff: str
    note: str = ""


class WriteTool(Tool):
    name = "Write"
    search_hint = "write create overwrite a file"
    input_model = WriteInput
    edit_preview: ClassVar[bool] = True

    def description(self) -> str:
        return "Create a file or replace its content (atomic; keeps encoding and line endings)."

    def prompt(self) -> str:
        return PROMPT

    def is_read_only(self, input: Any) -> bool:
        return False

    def is_concurrency_safe(self, input: Any) -> bool:
        return False

    def is_destructive(self, input: WriteInput) -> bool:
        # Replacing a whole existing file throws its old content away.
        try:
            return Path(input.file_path).is_file()
        except OSError:
            return True

    def get_activity_description(self, input: WriteInput) -> str:
        return f"writing {Path(input.file_path).name}"

    def render_tool_use_message(self, input: WriteInput) -> str:
        return f"Write {input.file_path} ({len(input.content):,} characters)"

    def to_auto_classifier_input(self, input: WriteInput) -> str:
        return f"{input.file_path}: {input.content[:200]}"

    def permission_subject(self, input: WriteInput, ctx: ToolUseContext) -> PermissionSubject:
        path = Path(input.file_path)
        rel = display_path(path, ctx.root)
        verb = "overwrite" if path.exists() else "create"
        try:
            detail = plan_write(input, ctx).diff
        except ToolError as exc:
            detail = exc.message
        return PermissionSubject(summary=f"{verb} {rel}", detail=detail, write_paths=[path])

    async def validate_input(self, input: WriteInput, ctx: ToolUseContext) -> ValidationResult:
        path = Path(input.file_path)
        problem = check_file_path(
            input.file_path,
            ctx.root,
            must_exist=False,
            has_buffer=ctx.bridge.read_buffer(path) is not None,
        )
        if problem:
            return ValidationResult.fail(problem)
        await asyncio.to_thread(plan_write, input, ctx)  # raises ToolError with the reason
        return ValidationResult.success()

    async def call(
        self, input: WriteInput, ctx: ToolUseContext, on_progress: ProgressCallback
    ) -> ToolResult:
        plan = await asyncio.to_thread(plan_write, input, ctx)
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
            n = len(plan.new_text.splitlines())
            summary = f"Created {rel} ({n} line{'' if n == 1 else 's'})."
            text = summary if not change.note else f"{summary}\n\n{change.note}"
        else:
            summary = f"Overwrote {rel} (+{added} −{removed} lines)."
            text = result_text(summary, change)
        if plan.note:
            text += "\n" + plan.note
        return ToolResult(text, meta=change_meta(path, change))


def plan_write(input: WriteInput, ctx: ToolUseContext) -> PlannedWrite:
    """The write against the file as it is now; raises :class:`ToolError` saying why not."""
    path = Path(input.file_path)
    rel = display_path(path, ctx.root)
    try:
        current = load_current(path, ctx.bridge.read_buffer(path))
    except ToolError as exc:
        raise ToolError(
            f"{exc.message} Write only replaces text files; remove or replace this one with "
            "Bash if that is really intended."
        ) from exc
    content = input.content
    if current.text is None:
        return PlannedWrite(current, content, "utf-8", unified_diff(None, content, rel))
    check_fresh(ctx.session, current, action="overwrite")
    if current.line_ending == "\r\n" and "\r\n" not in content:
        content = to_line_ending(content, "\r\n")
    encoding, note = current.encoding, ""
    if not can_encode(content, encoding):
        note = (
            f"(The file was {encoding}, which cannot hold the new text; it was written as UTF-8.)"
        )
        encoding = "utf-8"
    return PlannedWrite(current, content, encoding, unified_diff(current.text, content, rel), note)

"""Applying a file change through the editor, and keeping it in the session's change list.

Edit, Write and NotebookEdit never write files themselves: they hand a
:class:`FileEdit` to the bridge, which shows it (a preview, when the editor's
preview is the approval), applies it to open buffers and disk, and says what
landed. This module turns the bridge's answer into what the model and the user
read: a rejection (:class:`ToolRejected`), a partial application (which hunks
landed), or success; and records a :class:`FileChange` (before/after) so the
change can be reviewed and undone.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from codev_ls.bridge import EditApplyResult, FileEdit
from codev_ls.engine.context import FileChange, ToolUseContext
from codev_ls.engine.files import display_path
from codev_ls.engine.tool import ToolError, ToolRejected
from codev_ls.tools._filestate import record_read, state_key
from codev_ls.tools._text import cut_text, normalize_newlines, unified_diff

# Diffs longer than this are cut in results (the full diff stays in the change list).
RESULT_DIFF_CHARS = 20_000


@dataclass(slots=True)
class AppliedChange:
    """What happened to one change: the text now in the file and what to tell the model."""

    final_text: str
    diff: str  # old → final
    partial: bool
    note: str  # empty, or what did not land
    result: EditApplyResult


async def apply_change(
    ctx: ToolUseContext,
    *,
    tool_name: str,
    path: Path,
    old_text: str | None,
    new_text: str,
    encoding: str,
    diff: str,
    old_encoding: str | None = None,
) -> AppliedChange:
    """Send the change to the editor; record it; raise :class:`ToolRejected` if refused.

    The bytes to write are checked before anything is sent: an editor must never
    show a change the disk cannot take. A failure that is not the user's refusal
    is a :class:`ToolError` saying what state the disk and the buffer are in.
    """
    rel = display_path(path, ctx.root)
    try:
        new_text.encode(encoding)
    except UnicodeEncodeError as exc:
        raise ToolError(
            f"The {tool_name} of {rel} was not made: the new text cannot be written in "
            f"{encoding} ({exc.reason} at character {exc.start}). Nothing was changed."
        ) from exc
    edit = FileEdit(
        path=path,
        old_text=old_text,
        new_text=new_text,
        label=f"Codev: {tool_name} {rel}",
        tool_name=tool_name,
        needs_confirmation=ctx.edit_preview_approval,
        diff=diff,
        encoding=encoding,
        old_encoding=old_encoding if old_encoding != encoding else None,
    )
    try:
        result = await ctx.bridge.apply_edit(edit)
    except OSError as exc:
        raise ToolError(
            f"Could not write {path}: {exc.strerror or exc}. The file was not changed."
        ) from exc
    except ValueError as exc:  # e.g. UnicodeEncodeError from a bridge's own writer
        raise ToolError(
            f"Could not write {path}: {type(exc).__name__}: {exc}. The file was not changed."
        ) from exc
    if result.error and not result.applied:
        raise ToolError(
            f"The {tool_name} of {rel} failed: {result.error}. Nothing was changed: the file "
            "on disk and any editor buffer of it are as they were."
        )
    if not result.applied:
        reason = result.reason or "the user rejected the change in the editor"
        raise ToolRejected(f"The {tool_name} of {rel} was not applied: {reason}.")
    final = result.final_text if result.final_text is not None else new_text
    partial = final != new_text and normalize_newlines(final) != normalize_newlines(new_text)
    final_diff = unified_diff(old_text, final, rel) if partial else diff
    note = ""
    if partial:
        note = _partial_note(result, final, new_text, rel)
    ctx.session.changes.append(
        FileChange(
            path=path,
            before=old_text,
            after=final,
            tool_name=tool_name,
            tool_use_id=ctx.tool_use_id,
            diff=final_diff,
        )
    )
    # What the model knows now is the final text: it may edit again without a Read.
    record_read(ctx.session, path, text=final, buffer=ctx.bridge.read_buffer(path))
    if result.error:
        # In the editor's buffer, not on disk: an error, never "not applied".
        raise ToolError(
            f"The {tool_name} of {rel} is in the editor's buffer but could not be saved to "
            f"disk: {result.error}. The buffer holds the change, unsaved; the file on disk "
            "still has its previous content. Ask the user to save or undo it in the editor."
        )
    return AppliedChange(final, final_diff, partial, note, result)


def _partial_note(result: EditApplyResult, final: str, wanted: str, rel: str) -> str:
    applied = result.hunks_applied or []
    rejected = result.hunks_rejected or []
    parts = [
        "Only part of the change was applied: the user accepted some hunks and refused others."
    ]
    if applied or rejected:
        parts.append(
            f"Hunks applied: {_hunk_list(applied)}; hunks refused: {_hunk_list(rejected)} "
            "(numbered from 1 in the order of the diff)."
        )
    missing = unified_diff(final, wanted, rel)
    parts.append(
        "These changes were NOT applied (the diff from the file as it is now to what you asked "
        "for); do not assume they are there:\n" + cut_text(missing, RESULT_DIFF_CHARS // 2)
    )
    return "\n".join(parts)


def _hunk_list(indices: list[int]) -> str:
    return ", ".join(str(i + 1) for i in indices) if indices else "none"


def result_text(summary: str, change: AppliedChange) -> str:
    """The result the model reads: a summary line, the diff of what landed, and any note."""
    body = f"{summary}\n{cut_text(change.diff, RESULT_DIFF_CHARS)}".rstrip("\n")
    if change.note:
        body += "\n\n" + change.note
    return body


def change_meta(path: Path, change: AppliedChange) -> dict[str, object]:
    """Structured facts for editors (the outcome's ``meta``)."""
    meta: dict[str, object] = {"path": str(path), "diff": change.diff, "partial": change.partial}
    if change.result.hunks_applied is not None:
        meta["hunksApplied"] = change.result.hunks_applied
    if change.result.hunks_rejected is not None:
        meta["hunksRejected"] = change.result.hunks_rejected
    return meta


async def revert_change(ctx: ToolUseContext, change: FileChange) -> EditApplyResult:
    """Undo one recorded change through the editor, if the file still holds its result.

    The same path as an edit: the editor applies it to open buffers (one undoable
    step) and the disk gets it; a buffer with unsaved changes that are not the
    change's result is never overwritten. Refuses (:class:`ToolError`) when the
    file changed since, so an undo never throws away work done after it. A
    created file is removed when it is not open in the editor (emptied when it
    is). Afterwards the model must read the file again: the undo was not its doing.
    """
    from codev_ls.tools._filestate import load_current

    current = load_current(change.path, ctx.bridge.read_buffer(change.path))
    rel = display_path(change.path, ctx.root)
    if current.text is None or normalize_newlines(current.text) != normalize_newlines(change.after):
        raise ToolError(
            f"{rel} changed after the {change.tool_name}, so it was not undone (undo the later "
            "changes first, or change it by hand)."
        )
    if change.before is None and current.buffer is None:
        try:
            change.path.unlink()
        except OSError as exc:
            raise ToolError(f"Could not remove {rel}: {exc.strerror or exc}.") from exc
        ctx.session.read_state.pop(state_key(change.path), None)
        return EditApplyResult(applied=True, final_text=None)
    before = change.before or ""
    encoding = current.encoding
    try:
        before.encode(encoding)
    except UnicodeEncodeError:
        encoding = "utf-8"
    result = await ctx.bridge.apply_edit(
        FileEdit(
            path=change.path,
            old_text=current.text,
            new_text=before,
            label=f"Codev: undo {change.tool_name} {rel}",
            tool_name=change.tool_name,
            diff=unified_diff(current.text, before, rel),
            encoding=encoding,
            old_encoding=current.encoding if encoding != current.encoding else None,
        )
    )
    if result.applied:
        ctx.session.read_state.pop(state_key(change.path), None)
    return result

"""NotebookEdit: replace, insert or delete one cell of a Jupyter notebook.

Cells are found by the id Read shows (``cell-N`` for notebooks without ids)
or by index. The notebook is rewritten with nbformat (the writer Jupyter
itself uses, so unrelated parts of the file do not move) and applied through
the editor like Edit, under the same stale-read rule, and recorded in the
session's change list.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

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
from codev_ls.tools._edits import apply_change, change_meta
from codev_ls.tools._filestate import CurrentFile, check_fresh, load_current
from codev_ls.tools._paths import check_file_path
from codev_ls.tools._text import cut_text, unified_diff

EditMode = Literal["replace", "insert", "delete"]
CellType = Literal["code", "markdown", "raw"]

PROMPT = """\
Changes one cell of a Jupyter notebook (.ipynb): replace its source, insert a new cell, or \
delete a cell.
- `notebook_path` must be absolute. Read the notebook first; the edit is refused if it changed \
since.
- Name the cell by `cell_id` (the id Read shows, e.g. "a1b2c3" or "cell-3") or by `cell_index` \
(0-based).
- `edit_mode` "replace" (default) sets the cell's source (a code cell's outputs are cleared); \
"insert" adds a new cell after `cell_id` (or at `cell_index`; at the top when neither is given) \
and needs `cell_type`; "delete" removes the cell.
- `cell_type` ("code" or "markdown") also converts a cell when replacing."""


class NotebookEditInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    notebook_path: str = Field(description="The absolute path of the notebook (.ipynb).")
    new_source: str = Field(
        default="", description="The new source of the cell (ignored when deleting)."
    )
    cell_id: str | None = Field(
        default=None,
        description='The id of the cell, as Read shows it (e.g. "a1b2c3" or "cell-3"). For '
        "insert: the new cell goes after this one.",
    )
    cell_index: int | None = Field(
        default=None,
        ge=0,
        description="The cell's 0-based index, instead of cell_id. For insert: the index the "
        "new cell gets.",
    )
    cell_type: CellType | None = Field(
        default=None, description='"code" or "markdown" (required for insert).'
    )
    edit_mode: EditMode = Field(
        default="replace", description='"replace" (default), "insert" or "delete".'
    )


@dataclass(slots=True)
class PlannedCellEdit:
    current: CurrentFile
    new_text: str
    index: int
    label: str
    summary: str
    cell_diff: str
    diff: str


class NotebookEditTool(Tool):
    name = "NotebookEdit"
    search_hint = "edit jupyter notebook cell ipynb"
    input_model = NotebookEditInput
    edit_preview: ClassVar[bool] = True

    def description(self) -> str:
        return "Replace, insert or delete a cell of a Jupyter notebook."

    def prompt(self) -> str:
        return PROMPT

    def is_read_only(self, input: Any) -> bool:
        return False

    def is_concurrency_safe(self, input: Any) -> bool:
        return False

    def is_destructive(self, input: NotebookEditInput) -> bool:
        # Deleting a cell (with its outputs) throws content away; replacing clears outputs.
        return input.edit_mode == "delete"

    def get_activity_description(self, input: NotebookEditInput) -> str:
        return f"editing {Path(input.notebook_path).name}"

    def render_tool_use_message(self, input: NotebookEditInput) -> str:
        cell = input.cell_id or (
            f"index {input.cell_index}" if input.cell_index is not None else ""
        )
        return f"NotebookEdit {input.edit_mode} {cell} in {input.notebook_path}".replace("  ", " ")

    def to_auto_classifier_input(self, input: NotebookEditInput) -> str:
        return f"{input.notebook_path} {input.edit_mode}: {input.new_source[:200]}"

    def permission_subject(
        self, input: NotebookEditInput, ctx: ToolUseContext
    ) -> PermissionSubject:
        path = Path(input.notebook_path)
        rel = display_path(path, ctx.root)
        try:
            plan = plan_cell_edit(input, ctx)
            summary, detail = f"{plan.summary} in {rel}", plan.cell_diff
        except ToolError as exc:
            summary, detail = f"{input.edit_mode} a cell in {rel}", exc.message
        return PermissionSubject(summary=summary, detail=detail, write_paths=[path])

    async def validate_input(
        self, input: NotebookEditInput, ctx: ToolUseContext
    ) -> ValidationResult:
        path = Path(input.notebook_path)
        problem = check_file_path(input.notebook_path, ctx.root, must_exist=True)
        if problem:
            return ValidationResult.fail(problem.replace("file_path", "notebook_path"))
        if path.suffix.lower() != ".ipynb":
            return ValidationResult.fail(
                f"{path} is not a Jupyter notebook (.ipynb); use Edit for other files."
            )
        if input.cell_id is not None and input.cell_index is not None:
            return ValidationResult.fail("Give cell_id or cell_index, not both.")
        if input.edit_mode == "insert" and input.cell_type is None:
            return ValidationResult.fail('cell_type ("code" or "markdown") is required to insert.')
        if input.edit_mode != "insert" and input.cell_id is None and input.cell_index is None:
            return ValidationResult.fail(
                f"Name the cell to {input.edit_mode} with cell_id (as Read shows it) or cell_index."
            )
        await asyncio.to_thread(plan_cell_edit, input, ctx)  # raises ToolError with the reason
        return ValidationResult.success()

    async def call(
        self, input: NotebookEditInput, ctx: ToolUseContext, on_progress: ProgressCallback
    ) -> ToolResult:
        plan = await asyncio.to_thread(plan_cell_edit, input, ctx)
        path = Path(input.notebook_path)
        change = await apply_change(
            ctx,
            tool_name=self.name,
            path=path,
            old_text=plan.current.text,
            new_text=plan.new_text,
            encoding=plan.current.encoding,
            diff=plan.diff,
        )
        rel = display_path(path, ctx.root)
        text = f"{plan.summary[0].upper()}{plan.summary[1:]} in {rel}."
        if input.edit_mode != "delete":
            text += f"\n{cut_text(plan.cell_diff, 10_000)}".rstrip("\n")
        if change.note:
            text += "\n\n" + change.note
        return ToolResult(text, meta=change_meta(path, change))


def _find_cell(cells: list[Any], input: NotebookEditInput) -> int | None:
    """The index of the named cell (by id, ``cell-N``, or index); None when not named."""
    from codev_ls.tools._notebook import cell_label

    if input.cell_index is not None:
        return input.cell_index
    if input.cell_id is None:
        return None
    for i, cell in enumerate(cells):
        if cell.get("id") == input.cell_id:
            return i
    for i, cell in enumerate(cells):
        if cell_label(cell, i) == input.cell_id:
            return i
    if input.cell_id.isdigit():
        return int(input.cell_id)
    raise InputError(
        f"No cell with id {input.cell_id!r} in {input.notebook_path}. Ids: "
        + ", ".join(cell_label(c, i) for i, c in enumerate(cells[:30]))
        + (", …" if len(cells) > 30 else "")
        + ". Read the notebook to see them."
    )


def plan_cell_edit(input: NotebookEditInput, ctx: ToolUseContext) -> PlannedCellEdit:
    """The new notebook text; raises :class:`ToolError` saying why the edit cannot be made."""
    import nbformat

    from codev_ls.tools._notebook import cell_label, load_notebook

    path = Path(input.notebook_path)
    current = load_current(path, ctx.bridge.read_buffer(path))
    if current.text is None:
        raise InputError(f"Notebook does not exist: {path}.")
    check_fresh(ctx.session, current, action="edit")
    nb = load_notebook(current.text, str(path))
    cells = nb.cells
    index = _find_cell(cells, input)
    mode = input.edit_mode
    if mode == "insert":
        if input.cell_index is not None:
            at = input.cell_index
            if at > len(cells):
                raise InputError(
                    f"cell_index {at} is past the end: the notebook has {len(cells)} cells "
                    f"(insert at {len(cells)} to append)."
                )
        else:
            at = 0 if index is None else index + 1
        if input.cell_type == "markdown":
            cell = nbformat.v4.new_markdown_cell(input.new_source)
        elif input.cell_type == "raw":
            cell = nbformat.v4.new_raw_cell(input.new_source)
        else:
            cell = nbformat.v4.new_code_cell(input.new_source)
        if (nb.nbformat, nb.nbformat_minor) < (4, 5):
            cell.pop("id", None)  # ids are not allowed before nbformat 4.5
        else:
            # nbformat draws a random id; the plan is made for the prompt and again for
            # the call, so the id must follow from the input or the two would differ.
            cell["id"] = _new_cell_id(cells, current.text, at, input)
        cells.insert(at, cell)
        label = cell_label(cell, at)
        summary = f"inserted {input.cell_type} cell {label} at index {at}"
        cell_diff = unified_diff(None, input.new_source + "\n", f"cell {label}")
        index = at
    else:
        assert index is not None
        if index >= len(cells):
            raise InputError(
                f"cell_index {index} is past the end: the notebook has {len(cells)} cells "
                f"(indices 0–{len(cells) - 1})."
            )
        cell = cells[index]
        label = cell_label(cell, index)
        old_source = _source(cell)
        if mode == "delete":
            del cells[index]
            summary = f"deleted cell {label} (index {index})"
            cell_diff = unified_diff(old_source + "\n", "", f"cell {label}")
        else:
            new_type = input.cell_type or cell.get("cell_type", "code")
            if new_type != cell.get("cell_type"):
                cell = _converted(cell, new_type)
                cells[index] = cell
            cell["source"] = input.new_source
            if new_type == "code":
                cell["outputs"] = []
                cell["execution_count"] = None
            summary = f"replaced cell {label} (index {index})"
            cell_diff = unified_diff(old_source + "\n", input.new_source + "\n", f"cell {label}")
    new_text = nbformat.writes(nb)
    if current.text.endswith("\n") and not new_text.endswith("\n"):
        new_text += "\n"
    if current.line_ending == "\r\n":
        new_text = new_text.replace("\n", "\r\n")
    rel = display_path(path, ctx.root)
    return PlannedCellEdit(
        current,
        new_text,
        index,
        label,
        summary,
        cell_diff,
        unified_diff(current.text, new_text, rel),
    )


def _new_cell_id(cells: list[Any], text: str, at: int, input: NotebookEditInput) -> str:
    """An id for an inserted cell: the same for the same notebook and input, unique in it."""
    import hashlib

    taken = {str(c.get("id")) for c in cells}
    seed = hashlib.sha256(
        f"{at}\0{input.cell_type}\0{input.new_source}\0".encode() + text.encode("utf-8", "replace")
    ).hexdigest()
    for start in range(0, len(seed) - 8):
        candidate = seed[start : start + 8]
        if candidate not in taken:
            return candidate
    n = 0
    while f"cell-new-{n}" in taken:
        n += 1
    return f"cell-new-{n}"


def _source(cell: Any) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _converted(cell: Any, new_type: str) -> Any:
    import nbformat

    maker = {
        "code": nbformat.v4.new_code_cell,
        "markdown": nbformat.v4.new_markdown_cell,
        "raw": nbformat.v4.new_raw_cell,
    }[new_type]
    new = maker("")
    if "id" in cell:
        new["id"] = cell["id"]
    else:
        new.pop("id", None)
    new["metadata"] = cell.get("metadata", {})
    return new

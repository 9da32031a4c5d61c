"""Jupyter notebooks (nbformat): cells with their sources and outputs, for the model.

Each cell is shown with its id (what NotebookEdit takes), index and type;
text outputs (streams, results, errors with ANSI colours removed) follow
their cell, images in outputs become image blocks. nbformat is imported only
when a notebook is read or edited.
"""

from __future__ import annotations

import base64
import re
from typing import Any

from codev_ls.engine.tool import ToolError

# Per output, text beyond this is cut (the model can re-run or inspect the cell).
MAX_OUTPUT_CHARS = 10_000
# At most this many output images per Read.
MAX_IMAGES = 8

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_IMAGE_MIMES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def load_notebook(text: str, where: str) -> Any:
    """Parse a notebook (any v4 minor; older major versions are converted)."""
    import nbformat

    try:
        return nbformat.reads(text, as_version=4)
    except Exception as exc:
        raise ToolError(f"{where} is not a valid Jupyter notebook ({exc}).") from exc


def cell_label(cell: Any, index: int) -> str:
    """A cell's id, or ``cell-N`` for notebooks older than nbformat 4.5 (no ids)."""
    return str(cell.get("id") or f"cell-{index}")


def render_notebook(nb: Any, where: str, first: int, limit: int | None) -> list[dict[str, Any]]:
    """Content blocks for cells ``first``.. (1-based) of ``nb``, at most ``limit`` of them."""
    cells = nb.get("cells", [])
    total = len(cells)
    language = (nb.get("metadata", {}).get("kernelspec", {}) or {}).get("language") or (
        nb.get("metadata", {}).get("language_info", {}) or {}
    ).get("name", "")
    if total == 0:
        return [
            {
                "type": "text",
                "text": f"<system-reminder>The notebook {where} has no cells.</system-reminder>",
            }
        ]
    if first > total:
        return [
            {
                "type": "text",
                "text": f"<system-reminder>The notebook {where} has {total} cells; offset {first} "
                "is past its end.</system-reminder>",
            }
        ]
    end = total if limit is None else min(total, first - 1 + limit)
    blocks: list[dict[str, Any]] = []
    text: list[str] = [
        f"Notebook {where} ({total} cells{', ' + language if language else ''}); "
        f"cells {first}–{end} (index {first - 1}–{end - 1}):"
    ]
    images = 0
    for index in range(first - 1, end):
        cell = cells[index]
        kind = cell.get("cell_type", "code")
        attrs = f'id="{cell_label(cell, index)}" index={index} type={kind}'
        if kind == "code" and cell.get("execution_count") is not None:
            attrs += f" execution_count={cell['execution_count']}"
        text.append(f"<cell {attrs}>\n{_source(cell)}\n</cell>")
        for out in cell.get("outputs", []) if kind == "code" else []:
            rendered, picture = _output(out)
            if rendered:
                text.append(f"<output>\n{rendered}\n</output>")
            if picture is not None:
                if images < MAX_IMAGES:
                    blocks.append({"type": "text", "text": "\n\n".join(text)})
                    text = [f"(image output of cell index {index})"]
                    blocks.append(picture)
                    images += 1
                else:
                    text.append(
                        "<output>(an image; not shown: too many images in one Read)</output>"
                    )
    if end < total:
        text.append(
            f"(Showing cells {first}–{end} of {total}; use offset/limit to read more cells.)"
        )
    blocks.append({"type": "text", "text": "\n\n".join(text)})
    return blocks


def _source(cell: Any) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _cut(text: str) -> str:
    text = _ANSI.sub("", text).rstrip("\n")
    if len(text) > MAX_OUTPUT_CHARS:
        text = text[:MAX_OUTPUT_CHARS] + f"\n… [output cut: {len(text):,} characters]"
    return text


def _output(out: Any) -> tuple[str, dict[str, Any] | None]:
    """An output's text, and its image as a block (if it has one)."""
    kind = out.get("output_type")
    if kind == "stream":
        name = out.get("name", "stdout")
        body = _cut(_text(out.get("text", "")))
        return (f"[{name}]\n{body}" if name == "stderr" else body), None
    if kind == "error":
        trace = _cut("\n".join(_text(t) for t in out.get("traceback", [])))
        head = f"{out.get('ename', 'Error')}: {out.get('evalue', '')}"
        return (f"{head}\n{trace}" if trace else head), None
    if kind in ("execute_result", "display_data"):
        data = out.get("data", {}) or {}
        picture = None
        for mime in _IMAGE_MIMES:
            if mime in data:
                picture = _image(_text(data[mime]), mime)
                break
        if "text/plain" in data:
            body = _cut(_text(data["text/plain"]))
        elif "text/markdown" in data:
            body = _cut(_text(data["text/markdown"]))
        elif picture is None and data:
            body = f"(output of type {', '.join(sorted(data))} not shown)"
        else:
            body = ""
        return body, picture
    return "", None


def _image(b64: str, mime: str) -> dict[str, Any] | None:
    from codev_ls.tools._images import ImageError, image_block

    try:
        raw = base64.b64decode(b64.replace("\n", ""), validate=False)
        return image_block(raw).block
    except (ImageError, ValueError):
        return None

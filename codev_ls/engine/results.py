"""Large results: saved to the session's data folder, replaced by a preview and the path.

The model gets the head and the tail of a large result and the file's path, so
it can Read or Grep the rest instead of filling its context window.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from codev_ls.engine.files import atomic_write_text
from codev_ls.engine.tool import ContentBlock, ToolResultContent

PREVIEW_HEAD_CHARS = 2_000
PREVIEW_TAIL_CHARS = 1_000


class PersistError(OSError):
    """The result could not be saved (full disk, no permission)."""


@dataclass(slots=True)
class PersistedResult:
    content: ToolResultContent
    path: Path


def content_length(content: ToolResultContent) -> int:
    """Characters of text in a result (images count by their data length)."""
    if isinstance(content, str):
        return len(content)
    total = 0
    for block in content:
        if block.get("type") == "text":
            total += len(str(block.get("text", "")))
        elif block.get("type") == "image":
            continue  # images are sized by the API's own limits, not ours
        else:
            total += len(json.dumps(block, default=str))
    return total


def _as_text(content: ToolResultContent) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") != "image":
            parts.append(json.dumps(block, ensure_ascii=False, default=str))
    return "\n".join(parts)


_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


def make_preview(
    text: str, path: Path, head: int = PREVIEW_HEAD_CHARS, tail: int = PREVIEW_TAIL_CHARS
) -> str:
    """Head and tail of ``text`` with a note saying where the whole is."""
    lines = text.count("\n") + 1
    head_text = text[:head]
    tail_text = text[-tail:] if len(text) > head + tail else ""
    omitted = len(text) - len(head_text) - len(tail_text)
    parts = [
        f"Output too large ({len(text):,} characters, {lines:,} lines). "
        f"The full output was saved to: {path}",
        "Use Read (with offset/limit) or Grep on that file to see the rest.",
        "",
        "Preview (first part):",
        head_text,
    ]
    if tail_text:
        parts += [f"… [{omitted:,} characters omitted] …", "Preview (last part):", tail_text]
    return "\n".join(parts)


def persist_large_result(
    content: ToolResultContent, *, folder: Path, tool_use_id: str, limit: int
) -> PersistedResult | None:
    """Save ``content`` if it is longer than ``limit`` characters; else None.

    Images stay inline (they are not text the model can page through).
    Raises :class:`PersistError` when the file cannot be written.
    """
    if limit <= 0 or content_length(content) <= limit:
        return None
    text = _as_text(content)
    name = _SAFE.sub("_", tool_use_id) or "result"
    path = folder / "tool-results" / f"{name}.txt"
    try:
        atomic_write_text(path, text)
    except OSError as exc:
        raise PersistError(
            f"The result ({len(text):,} characters) was too large to return inline and could "
            f"not be saved to {path}: {exc.strerror or exc}."
        ) from exc
    preview = make_preview(text, path)
    if isinstance(content, list):
        images: list[ContentBlock] = [b for b in content if b.get("type") == "image"]
        return PersistedResult([{"type": "text", "text": preview}, *images], path)
    return PersistedResult(preview, path)

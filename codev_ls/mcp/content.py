"""MCP tool results → the model API's content blocks.

A ``CallToolResult`` holds text, images, audio, embedded resources and
resource links. The model API takes text and image blocks in a tool_result,
so:

- text → a text block;
- image → an image block (base64 source);
- an embedded text resource → a text block naming the resource;
- an embedded binary resource → an image block when it is an image, else the
  bytes are saved to the session's data folder and a text block gives the path
  (the model can Read it; base64 in the context helps nobody);
- audio → saved the same way;
- a resource link → a text block with its URI;
- no content but ``structuredContent`` → its JSON as text.

All-text results collapse to one string, which is what hooks and the editor
show best. This module works on the result as a plain dict (the SDK's
``model_dump(by_alias=True)``), so it needs no SDK import.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import mimetypes
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from codev_ls.engine.files import atomic_write_bytes
from codev_ls.engine.tool import ContentBlock, ToolResultContent

# The image types the model APIs take inline.
INLINE_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})

SaveBlob = Callable[[bytes, str, str], Path]


def map_result_content(
    result: dict[str, Any], *, server: str, save_blob: SaveBlob | None = None
) -> ToolResultContent:
    """The tool_result content for an MCP ``CallToolResult`` (as a dict)."""
    blocks: list[ContentBlock] = []
    for item in result.get("content") or []:
        if isinstance(item, dict):
            blocks.extend(_map_item(item, server, save_blob))
    if not blocks:
        structured = result.get("structuredContent")
        if structured is not None:
            blocks.append({"type": "text", "text": json.dumps(structured, ensure_ascii=False)})
    if all(b["type"] == "text" for b in blocks):
        return "\n".join(str(b["text"]) for b in blocks)
    return blocks


def result_text(result: dict[str, Any]) -> str:
    """The text of a result (for error messages): text items joined, others named."""
    parts = []
    for item in result.get("content") or []:
        if isinstance(item, dict):
            if item.get("type") == "text":
                parts.append(str(item.get("text", "")))
            else:
                parts.append(f"[{item.get('type')}]")
    return "\n".join(parts).strip()


def _map_item(item: dict[str, Any], server: str, save_blob: SaveBlob | None) -> list[ContentBlock]:
    kind = item.get("type")
    if kind == "text":
        return [{"type": "text", "text": str(item.get("text", ""))}]
    if kind == "image":
        return [_image_or_file(item.get("data", ""), item.get("mimeType", ""), "image", save_blob)]
    if kind == "audio":
        return [_saved(item.get("data", ""), item.get("mimeType", ""), "audio", save_blob)]
    if kind == "resource":
        return [_resource(item.get("resource") or {}, server, save_blob)]
    if kind == "resource_link":
        return [_link(item)]
    return [{"type": "text", "text": f"[{kind} content from {server}, not shown]"}]


def _resource(res: dict[str, Any], server: str, save_blob: SaveBlob | None) -> ContentBlock:
    uri = res.get("uri", "")
    mime = res.get("mimeType") or ""
    if "text" in res:
        return {"type": "text", "text": f"[Resource from {server} at {uri}] {res['text']}"}
    if "blob" in res:
        block = _image_or_file(res["blob"], mime, f"resource {uri}", save_blob, name_hint=uri)
        if block["type"] == "image":
            return block
        return {"type": "text", "text": f"[Resource from {server} at {uri}] {block['text']}"}
    return {"type": "text", "text": f"[Resource from {server} at {uri}] (empty)"}


def _link(item: dict[str, Any]) -> ContentBlock:
    parts = [f"[Resource link: {item.get('name') or item.get('uri', '')}] {item.get('uri', '')}"]
    if item.get("mimeType"):
        parts.append(f"({item['mimeType']})")
    if item.get("description"):
        parts.append(f"— {item['description']}")
    return {"type": "text", "text": " ".join(parts)}


def _image_or_file(
    data: str, mime: str, what: str, save_blob: SaveBlob | None, name_hint: str = ""
) -> ContentBlock:
    if mime.lower() in INLINE_IMAGE_TYPES and _decodes(data):
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": mime.lower(), "data": data},
        }
    return _saved(data, mime, what, save_blob, name_hint)


def _saved(
    data: str, mime: str, what: str, save_blob: SaveBlob | None, name_hint: str = ""
) -> ContentBlock:
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return {"type": "text", "text": f"[{what} ({mime or 'unknown type'}): invalid base64 data]"}
    label = f"{what} ({mime or 'unknown type'}, {len(raw):,} bytes)"
    if save_blob is None:
        return {"type": "text", "text": f"[{label}, not shown]"}
    try:
        path = save_blob(raw, mime, name_hint)
    except OSError as exc:
        return {"type": "text", "text": f"[{label}: could not be saved: {exc}]"}
    return {"type": "text", "text": f"[{label} saved to {path}]"}


def _decodes(data: str) -> bool:
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def blob_saver(folder: Path) -> SaveBlob:
    """A :data:`SaveBlob` writing into ``folder`` (named by content hash, type's extension)."""

    def save(raw: bytes, mime: str, name_hint: str) -> Path:
        ext = _extension(mime)
        stem = _UNSAFE.sub("_", name_hint.rsplit("/", 1)[-1])[:60].strip("._")
        digest = hashlib.sha256(raw).hexdigest()[:12]
        name = f"{stem}-{digest}" if stem else digest
        if ext and not name.endswith(ext):
            name += ext
        path = folder / name
        atomic_write_bytes(path, raw)
        return path

    return save


def _extension(mime: str) -> str | None:
    """A file extension for a MIME type: the system's table, else the plain subtype."""
    kind = mime.split(";")[0].strip().lower()
    if not kind:
        return None
    ext = mimetypes.guess_extension(kind)
    if ext:
        return ext
    subtype = kind.rpartition("/")[2].removeprefix("x-")
    return f".{subtype}" if re.fullmatch(r"[a-z0-9]{1,8}", subtype) else None

"""Markdown files with YAML front matter: skills (``SKILL.md``) and agent types (``agents/*.md``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class FrontMatterError(ValueError):
    """The front matter is not valid YAML (the message names the file)."""


@dataclass(slots=True)
class Document:
    path: Path
    meta: dict[str, Any] = field(default_factory=dict)
    body: str = ""


def parse(text: str, path: Path) -> Document:
    """Split ``---`` front matter from the body; a file without one is all body."""
    if not text.startswith("---"):
        return Document(path, {}, text.strip())
    lines = text.splitlines()
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        return Document(path, {}, text.strip())
    import yaml

    try:
        meta = yaml.safe_load("\n".join(lines[1:end])) or {}
    except yaml.YAMLError as exc:
        raise FrontMatterError(f"{path}: the front matter is not valid YAML: {exc}") from exc
    if not isinstance(meta, dict):
        raise FrontMatterError(f"{path}: the front matter must be a mapping of keys to values")
    return Document(path, meta, "\n".join(lines[end + 1 :]).strip())


def read(path: Path) -> Document:
    return parse(path.read_text(encoding="utf-8", errors="replace"), path)


def as_list(value: Any) -> list[str] | None:
    """A list of names from ``a, b`` or a YAML list; None when not given."""
    if value is None:
        return None
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    return [str(value)]

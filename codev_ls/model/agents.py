"""Sub-agent types: the built-in general-purpose one plus ``.codev/agents/*.md``.

An agent file is Markdown with front matter::

    ---
    name: reviewer
    description: Reviews a change for bugs and style
    tools: Read, Grep, Glob          # optional: default all tools
    model: haiku                     # optional: sonnet / opus / haiku / inherit / a model id
    permissionMode: plan             # optional: never more permissive than the caller's
    ---
    You are a careful code reviewer...   (the body is the agent's role prompt)

Files in the workspace (``<root>/.codev/agents``) win over the user's
(``~/.codev/agents``), which win over the built-in one of the same name.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from codev_ls.engine.config import config_dir
from codev_ls.model import frontmatter
from codev_ls.permissions.types import PermissionMode, parse_mode

GENERAL_PURPOSE = "general-purpose"

# Least to most permissive: a sub-agent's mode is clamped to its caller's.
MODE_ORDER: tuple[PermissionMode, ...] = (
    "plan",
    "default",
    "acceptEdits",
    "auto",
    "bypassPermissions",
)


@dataclass(slots=True)
class AgentType:
    name: str
    description: str
    prompt: str
    tools: list[str] | None = None  # None: every tool the caller has
    model: str | None = None
    permission_mode: PermissionMode | None = None
    source: str = "builtin"


BUILTIN = AgentType(
    name=GENERAL_PURPOSE,
    description=(
        "General-purpose agent for researching complex questions, searching for code, and "
        "carrying out multi-step tasks on its own."
    ),
    prompt=(
        "You are a general-purpose agent. Search broadly when you do not know where something "
        "lives; read the relevant files; make the changes asked for, if any; verify them. "
        "Your final message is your report."
    ),
)


def clamp_mode(requested: PermissionMode | None, parent: PermissionMode) -> PermissionMode:
    """The sub-agent's mode: the requested one unless it is more permissive than the parent's."""
    if requested is None:
        return parent
    if MODE_ORDER.index(requested) > MODE_ORDER.index(parent):
        return parent
    return requested


def agent_dirs(root: Path) -> list[tuple[Path, str]]:
    return [(root / ".codev" / "agents", "project"), (config_dir() / "agents", "user")]


def find_agent_types(root: Path) -> tuple[dict[str, AgentType], list[str]]:
    """(agent types by name, problems with files that were skipped)."""
    types: dict[str, AgentType] = {}
    problems: list[str] = []
    for folder, source in agent_dirs(root):
        try:
            files = sorted(folder.glob("*.md"))
        except OSError:
            continue
        for path in files:
            try:
                doc = frontmatter.read(path)
            except (OSError, frontmatter.FrontMatterError) as exc:
                problems.append(str(exc))
                continue
            name = str(doc.meta.get("name") or path.stem).strip()
            if not name or name in types:
                continue
            raw_mode = doc.meta.get("permissionMode", doc.meta.get("permission_mode"))
            mode = parse_mode(raw_mode) if raw_mode is not None else None
            if raw_mode is not None and mode is None:
                problems.append(f"{path}: unknown permissionMode {raw_mode!r}; ignored")
            tools = frontmatter.as_list(doc.meta.get("tools"))
            if tools is not None and ("*" in tools or not tools):
                tools = None
            model = doc.meta.get("model")
            types[name] = AgentType(
                name=name,
                description=str(doc.meta.get("description") or "").strip(),
                prompt=doc.body,
                tools=tools,
                model=str(model).strip() if model else None,
                permission_mode=mode,
                source=source,
            )
    types.setdefault(GENERAL_PURPOSE, BUILTIN)
    return types, problems

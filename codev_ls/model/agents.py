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

# How permissive each mode is, as a partial order (not a line). A mode allows what every
# mode below it allows, and more:
#
#                bypassPermissions
#                  /           \
#          acceptEdits         auto
#                  \           /
#                    default
#                       |
#                     plan
#
# acceptEdits and auto are *incomparable*: acceptEdits approves every file edit without
# asking (but asks about commands); auto lets the classifier approve commands and edits,
# and the classifier may refuse an edit that acceptEdits would have let through. So a
# child of an auto parent may be auto/default/plan, and a child of acceptEdits may be
# acceptEdits/default/plan — never the other one, which would approve something the
# parent's mode would not.
MODES_BELOW: dict[PermissionMode, frozenset[PermissionMode]] = {
    "plan": frozenset({"plan"}),
    "default": frozenset({"plan", "default"}),
    "acceptEdits": frozenset({"plan", "default", "acceptEdits"}),
    "auto": frozenset({"plan", "default", "auto"}),
    "bypassPermissions": frozenset({"plan", "default", "acceptEdits", "auto", "bypassPermissions"}),
}


def mode_allowed_under(child: PermissionMode, parent: PermissionMode) -> bool:
    """Whether ``child`` is no more permissive than ``parent`` in any respect."""
    return child in MODES_BELOW[parent]


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
    """The sub-agent's mode: the requested one when the parent's allows it, else the most
    permissive mode below both (the parent's own when ``requested`` is above it; ``default``
    when they are acceptEdits and auto, which each allow something the other does not)."""
    if requested is None:
        return parent
    if mode_allowed_under(requested, parent):
        return requested
    common = MODES_BELOW[requested] & MODES_BELOW[parent]
    # In this lattice the common lower modes always have a greatest one.
    return max(common, key=lambda m: len(MODES_BELOW[m]))


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

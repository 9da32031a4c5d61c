"""The system prompt: who the assistant is, its tools' prompts, the workspace, the project's rules.

Built from each offered tool's ``prompt()`` (deferred tools are listed by name
only), facts about the workspace (root, platform, date, git), and the
project's instructions in ``CODEV.md`` / ``AGENTS.md`` when present. The text
is stable between requests of a session (prompt caching), except when the
permission mode changes.
"""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from codev_ls.engine.context import Session
    from codev_ls.engine.tool import Tool

INSTRUCTION_FILES = ("CODEV.md", "AGENTS.md", ".codev/CODEV.md")
MAX_INSTRUCTIONS_CHARS = 40_000

INTRO = """\
You are Codev, an AI coding assistant working inside the user's editor through the Codev \
language server. You help with software engineering tasks: reading and changing code, running \
commands, finding information. Use the tools to act; do not guess file contents. Be concise: \
the editor shows your text as you write it. Before editing a file, read it. Prefer small, \
targeted edits. When a tool use is rejected, do not try the same thing again: ask the user or \
take another approach. When you are done, say briefly what you did."""

PLAN_MODE_NOTE = """\
# Plan mode
Plan mode is on: the user wants a plan before any change. Only read-only tools run now. \
Explore the code, then present your plan with ExitPlanMode for the user to approve. Do not \
edit files or run commands that change anything until the plan is approved."""

SUBAGENT_NOTE = """\
# You are a sub-agent
Another agent started you for the task below. Work on your own with the tools you have; you \
cannot ask the user questions. When you are done, answer with a final report: what you found \
or changed, with file paths. That report is all the other agent will see."""


def tool_prompt(tool: Tool, session: Session | None) -> str:
    dynamic = getattr(tool, "prompt_for", None)
    try:
        if dynamic is not None and session is not None:
            return str(dynamic(session))
        return tool.prompt()
    except Exception:
        return tool.search_hint or tool.name


def workspace_facts(root: Path, cwd: Path | None = None) -> str:
    lines = [
        f"- Workspace root: {root}",
        f"- Working directory: {cwd or root}",
        f"- Platform: {platform.system()} {platform.release()}",
        f"- Shell: {os.environ.get('SHELL', '/bin/sh')}",
        f"- Today's date: {datetime.date.today().isoformat()}",
    ]
    git = _git_facts(root)
    lines.append(f"- Git repository: {git}" if git else "- Git repository: no")
    return "\n".join(lines)


def _git_facts(root: Path) -> str | None:
    if not (root / ".git").exists():
        return None
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--abbrev-ref", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "yes"
    branch = proc.stdout.strip()
    return f"yes, branch {branch}" if proc.returncode == 0 and branch else "yes"


def project_instructions(root: Path) -> str:
    """``CODEV.md`` / ``AGENTS.md`` of the workspace, cut to a sane length."""
    parts = []
    for name in INSTRUCTION_FILES:
        path = root / name
        try:
            if path.is_file():
                text = path.read_text(encoding="utf-8", errors="replace").strip()
                if text:
                    parts.append(f"Contents of {path}:\n\n{text}")
        except OSError:
            continue
    joined = "\n\n".join(parts)
    if len(joined) > MAX_INSTRUCTIONS_CHARS:
        joined = joined[:MAX_INSTRUCTIONS_CHARS] + "\n… (cut: the instructions are too long)"
    return joined


def build_system_prompt(
    session: Session,
    tools: Sequence[Tool],
    *,
    deferred: Sequence[str] = (),
    mode: str = "default",
    agent_prompt: str | None = None,
) -> str:
    """The whole system prompt for one request of ``session``."""
    sections = [INTRO]
    if agent_prompt is not None:
        sections.append(SUBAGENT_NOTE)
        if agent_prompt.strip():
            sections.append(f"# Your role\n{agent_prompt.strip()}")
    hidden = set(deferred)
    shown = [t for t in sorted(tools, key=lambda t: t.name) if t.name not in hidden]
    if shown:
        tool_parts = [f"## {t.name}\n{tool_prompt(t, session).strip()}" for t in shown]
        sections.append("# Tools\n\n" + "\n\n".join(tool_parts))
    if deferred:
        sections.append(
            "# Deferred tools\nThese tools exist but their schemas were not sent. Load one with "
            'ToolSearch (query "select:Name", or keywords) before calling it:\n'
            + "\n".join(f"- {name}" for name in sorted(deferred))
        )
    sections.append("# Environment\n" + workspace_facts(session.root, session.cwd))
    instructions = project_instructions(session.root)
    if instructions:
        sections.append(
            "# Project instructions\nThe user's instructions for this project. They override "
            "the defaults above.\n\n" + instructions
        )
    if mode == "plan":
        sections.append(PLAN_MODE_NOTE)
    return "\n\n".join(sections)

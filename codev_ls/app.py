"""Wiring: one place that builds a fully equipped Engine for the server and the CLI.

Each feature that needs set-up (settings, hooks, the audit log, background
tasks, MCP servers, the model) adds its step here, so the LSP server, the
terminal runner and the tests get the same engine.
"""

from __future__ import annotations

from pathlib import Path

from codev_ls.bridge import EditorBridge
from codev_ls.engine.runtime import Engine
from codev_ls.mcp.manager import attach_mcp
from codev_ls.permissions.types import PermissionMode


def build_engine(
    root: Path | str,
    bridge: EditorBridge,
    *,
    mode: PermissionMode | None = None,
    start_mcp: bool = True,
) -> Engine:
    """An Engine for ``root`` with every configured feature attached.

    ``start_mcp=False`` attaches the MCP manager without starting servers (the
    terminal runner starts them only for an ``mcp__`` tool).
    """
    engine = Engine(root, bridge, mode=mode or "default")
    # MCP servers start in the background; their tools join engine.mcp_tools when ready.
    attach_mcp(engine, start=start_mcp)
    return engine

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
    from codev_ls.engine.secrets import install_log_redaction

    install_log_redaction()  # API keys never reach a log, whoever logs
    engine = Engine(root, bridge, mode=mode or "default")
    attach_permissions(engine, explicit_mode=mode is not None)
    # MCP servers start in the background; their tools join engine.mcp_tools when ready.
    attach_mcp(engine, start=start_mcp)
    from codev_ls.model.service import attach_model

    attach_model(engine)
    attach_session_data_cleanup(engine)
    return engine


def attach_session_data_cleanup(engine: Engine) -> None:
    """Old session data folders (saved outputs, task logs) go, in the background."""
    from codev_ls.engine.config import config_dir
    from codev_ls.engine.session_store import start_session_data_cleanup

    base = engine.data_root or (config_dir() / "sessions")
    start_session_data_cleanup(base, config_dir(), frozenset({engine.session.id}))


def attach_permissions(engine: Engine, *, explicit_mode: bool = False) -> None:
    """Settings files (rules, defaultMode, hooks), command hooks and the audit log."""
    from codev_ls.engine.hooks import CommandHookRunner
    from codev_ls.permissions.audit import audit_decision
    from codev_ls.permissions.settings import SettingsManager

    def known_tools() -> frozenset[str]:
        from codev_ls.engine.registry import get_all_base_tools
        from codev_ls.permissions.rules import READ_RULE_TOOLS, WRITE_RULE_TOOLS

        tools = engine.base_tools if engine.base_tools is not None else get_all_base_tools()
        names = {n for t in tools for n in (t.name, *t.aliases)}
        return frozenset(names) | READ_RULE_TOOLS | WRITE_RULE_TOOLS

    settings = SettingsManager(
        engine.root, report=engine.bridge.show_message, known_tools=known_tools
    )
    settings.attach(engine.permission_context, set_mode=not explicit_mode)
    engine.services["settings"] = settings
    engine.hooks = CommandHookRunner(settings)
    engine.audit = audit_decision

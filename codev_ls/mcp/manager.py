"""The MCP manager: every configured server's connection, behind one Engine service.

:func:`attach_mcp` is the one call ``app.build_engine`` makes. It reads the
configuration (cheap: two small JSON files), registers the manager as
``engine.services["mcp"]`` with its clean-up on ``engine.on_close``, and
starts each server in a background task — so ``build_engine`` returns at once
and the language server answers while servers start. When a server's tools
are listed (or it stops), ``engine.mcp_tools`` is rebuilt from the servers
that are ready, and deferral behind ToolSearch is decided again.

Problems reach the user once each: a bad config file, and each server that
fails to start, crashes or stops answering (``bridge.show_message``). The
state of every server is in :meth:`McpManager.status` (``codev/mcpStatus``).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codev_ls.mcp.config import McpConfig, load_mcp_config
from codev_ls.mcp.connection import McpConnection, Timeouts
from codev_ls.mcp.deferral import apply_deferral

if TYPE_CHECKING:
    from codev_ls.engine.runtime import Engine
    from codev_ls.engine.tool import Tool

log = logging.getLogger(__name__)

SERVICE = "mcp"


class McpManager:
    """All MCP connections of one engine."""

    def __init__(
        self,
        engine: Engine,
        config: McpConfig,
        *,
        timeouts: Timeouts | None = None,
        log_dir: Path | None = None,
    ) -> None:
        from codev_ls import __version__

        self.engine = engine
        self.config = config
        self.timeouts = timeouts or Timeouts.from_env()
        # The servers' stderr goes here (created only when there are servers).
        self.log_dir = log_dir or (
            engine.session.data_dir / "mcp-logs" if config.servers else Path(".")
        )
        self.deferral: dict[str, Any] = {"deferred": False}
        self._reported: set[str] = set()
        self._started = False
        self._closed = False
        self.connections: dict[str, McpConnection] = {
            server.name: McpConnection(
                server,
                timeouts=self.timeouts,
                log_dir=self.log_dir,
                on_change=self._on_change,
                report=self._report,
                client_version=__version__,
            )
            for server in config.servers
        }

    # ---------------------------------------------------------------- lifecycle

    def start(self) -> bool:
        """Start every server in the background; False when no event loop runs yet."""
        if self._started or self._closed:
            return self._started
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return False
        self._started = True
        for problem in self.config.problems:
            self._report_once(
                f"file:{problem.path}",
                "error",
                f"MCP configuration {problem.path} {problem.message}; its servers are not started.",
            )
        for conn in self.connections.values():
            conn.start()
        return True

    async def wait_ready(self, limit_s: float | None = None) -> None:
        """Wait until no server is starting (each got ready or failed), at most ``limit_s``."""
        if not self._started:
            self.start()
        limit = limit_s if limit_s is not None else self.timeouts.startup_s + 5
        await asyncio.gather(*(c.wait_settled(limit) for c in self.connections.values()))

    async def aclose(self) -> None:
        """Stop every server (on engine close); idempotent."""
        if self._closed:
            return
        self._closed = True
        await asyncio.gather(*(c.stop() for c in self.connections.values()), return_exceptions=True)
        self.engine.mcp_tools = []

    # ---------------------------------------------------------------- views

    def tools(self) -> list[Tool]:
        """The tools of every ready server, in config order."""
        tools: list[Tool] = []
        for conn in self.connections.values():
            if conn.state == "ready":
                tools.extend(conn.tools)
        return tools

    def status(self) -> dict[str, Any]:
        """``codev/mcpStatus``: each server's state (and the reason when it failed)."""
        return {
            "servers": [c.status() for c in self.connections.values()],
            "problems": [{"path": str(p.path), "message": p.message} for p in self.config.problems],
            "deferred": bool(self.deferral.get("deferred")),
        }

    # ---------------------------------------------------------------- callbacks

    def _on_change(self, conn: McpConnection) -> None:
        if self._closed and conn.state != "stopped":
            return
        self.engine.mcp_tools = self.tools()
        try:
            self.deferral = apply_deferral(self.engine)
        except Exception:
            log.exception("deciding MCP tool deferral failed")

    def _report(self, conn: McpConnection, level: str, message: str) -> None:
        if self._closed:
            return
        self._report_once(f"server:{conn.name}", level, message)

    def _report_once(self, key: str, level: str, message: str) -> None:
        log.info("%s", message)  # the user sees it through the bridge
        if key in self._reported:
            return
        self._reported.add(key)
        try:
            self.engine.bridge.show_message(level, message)  # type: ignore[arg-type]
        except Exception:
            log.exception("could not show an MCP message to the user")


def attach_mcp(
    engine: Engine, *, timeouts: Timeouts | None = None, start: bool = True
) -> McpManager:
    """Read the MCP configuration of ``engine.root``, attach the manager, start the servers.

    Without a running event loop (or with ``start=False``) the servers start on
    the first :meth:`McpManager.wait_ready` or :meth:`McpManager.start`.
    """
    manager = McpManager(engine, load_mcp_config(engine.root), timeouts=timeouts)
    engine.services[SERVICE] = manager
    engine.on_close(manager.aclose)
    if start:
        manager.start()
    return manager


def get_manager(engine: Engine) -> McpManager | None:
    manager = engine.services.get(SERVICE)
    return manager if isinstance(manager, McpManager) else None

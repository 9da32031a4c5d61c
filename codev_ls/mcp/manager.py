"""The MCP manager: every configured server's connection, behind one Engine service.

:func:`attach_mcp` is the one call ``app.build_engine`` makes. It reads the
configuration (cheap: two small JSON files), registers the manager as
``engine.services["mcp"]`` with its clean-up on ``engine.on_close``, and
starts each server in a background task — so ``build_engine`` returns at once
and the language server answers while servers start. When a server's tools
are listed (or it stops), ``engine.mcp_tools`` is rebuilt from the servers
that are ready, and deferral behind ToolSearch is decided again.

A server from the project's ``.mcp.json`` starts only when it is approved
(``approval``: saved approvals, user settings); about one that is not, the
user is asked through the bridge — in the background, one server at a time,
while everything else goes on — and it starts when allowed. Until then it is
``needs-approval``; a rejected one is ``disabled``; neither is ever spawned.

Problems reach the user once each: a bad config file, and each server that
fails to start, crashes or stops answering (``bridge.show_message``). The
state of every server is in :meth:`McpManager.status` (``codev/mcpStatus``).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codev_ls.mcp.config import BrokenServer, HttpServer, McpConfig, StdioServer, load_mcp_config
from codev_ls.mcp.connection import McpConnection, Timeouts
from codev_ls.mcp.deferral import apply_deferral

if TYPE_CHECKING:
    from codev_ls.engine.runtime import Engine
    from codev_ls.engine.tool import Tool
    from codev_ls.mcp.approval import Verdict

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
        self._approval_task: asyncio.Task[None] | None = None
        # Servers whose approval question is open right now.
        self._asking: set[str] = set()
        self._verdicts: dict[str, Verdict] = {}
        self._own_settings: Any = None
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
        pending = self._hold_unapproved()
        for conn in self.connections.values():
            if conn.state not in ("needs-approval", "disabled"):
                conn.start()
        if pending:
            self._approval_task = asyncio.get_running_loop().create_task(
                self._ask_approvals(pending), name="mcp-approvals"
            )
        return True

    async def wait_ready(
        self, limit_s: float | None = None, *, approval_limit_s: float | None = None
    ) -> None:
        """Wait until no server is starting (each got ready or failed), at most ``limit_s``.

        Questions about unapproved project servers are waited for first (the
        user is being asked: no limit unless ``approval_limit_s``).
        """
        await self.wait_approvals(approval_limit_s)
        limit = limit_s if limit_s is not None else self.timeouts.startup_s + 5
        await asyncio.gather(*(c.wait_settled(limit) for c in self.connections.values()))

    async def wait_approvals(self, limit_s: float | None = None) -> None:
        """Wait until every question about a project server is answered (or ``limit_s``)."""
        if not self._started:
            self.start()
        task = self._approval_task
        if task is not None and not task.done():
            await asyncio.wait({task}, timeout=limit_s)

    async def aclose(self) -> None:
        """Stop every server (on engine close); idempotent."""
        if self._closed:
            return
        self._closed = True
        task = self._approval_task
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait({task}, timeout=self.timeouts.stop_s)
        await asyncio.gather(*(c.stop() for c in self.connections.values()), return_exceptions=True)
        self.engine.mcp_tools = []

    # ---------------------------------------------------------------- approval

    def _settings(self) -> Any:
        """The engine's settings manager (one is made when the engine has none)."""
        from codev_ls.permissions.settings import SettingsManager

        settings = self.engine.services.get("settings")
        if isinstance(settings, SettingsManager):
            return settings
        if self._own_settings is None:
            self._own_settings = SettingsManager(
                self.engine.root, report=self.engine.bridge.show_message
            )
        return self._own_settings

    def _hold_unapproved(self) -> list[McpConnection]:
        """Hold back the project's servers that are not approved; those to ask about."""
        from codev_ls.mcp import approval

        project = [
            c
            for c in self.connections.values()
            if c.config.origin == "project" and not isinstance(c.config, BrokenServer)
        ]
        if not project:
            return []
        try:
            settings = self._settings()
            settings.refresh()
            approvals = approval.read_approvals((f.origin, f.path, f.data) for f in settings.files)
        except Exception:  # unsure whether they are approved: ask
            log.exception("reading the MCP server approvals failed")
            approvals = approval.Approvals()
        for warning in approvals.warnings:
            self._report_once(f"approval:{warning}", "warning", f"Codev settings: {warning}.")
        key = approval.load_key() if approvals.hashes else None
        pending: list[McpConnection] = []
        for conn in project:
            verdict = approval.judge(conn.config, approvals, key, self.engine.root)  # type: ignore[arg-type]
            if verdict.state == "approved":
                conn.approval = verdict.reason
            elif verdict.state == "disabled":
                conn.hold("disabled", verdict.reason)
            else:
                conn.hold(
                    "needs-approval",
                    f"waiting for your answer: {verdict.reason} (a project's servers start "
                    "only when you allow them)",
                )
                self._verdicts[conn.name] = verdict
                pending.append(conn)
        return pending

    async def _ask_approvals(self, pending: list[McpConnection]) -> None:
        """Ask about each unapproved server in turn; start those the user allows."""
        for conn in pending:
            if self._closed:
                return
            try:
                await self._ask_approval(conn)
            except asyncio.CancelledError:
                raise
            except Exception:  # a bug here must not leave the server half-decided
                log.exception("asking about MCP server %s failed", conn.name)
                conn.hold("needs-approval", "the question could not be asked; not started")

    async def ask_again(self, name: str) -> tuple[dict[str, Any], str]:
        """Ask the user again about a held-back project server (``codev/mcpApprove``).

        A dismissed question otherwise waits for the workspace to open again, and a
        rejected server stays out until its name is removed from the settings: the
        user asks to be asked, and the answer is handled as at start-up. Returns the
        server's status line and a message saying what happened.
        """
        from codev_ls.mcp import approval

        conn = self.connections.get(name)
        if conn is None:
            known = ", ".join(self.connections) or "none"
            raise KeyError(f"there is no MCP server named {name!r} (servers: {known})")
        if conn.state not in ("needs-approval", "disabled") or conn.config.origin != "project":
            return conn.status(), (
                f"MCP server {name} is {conn.state}: only a project's server that is waiting "
                "for approval or was rejected can be asked about again"
            )
        if name in self._asking:
            return conn.status(), f"the question about MCP server {name} is open already"
        was = conn.state
        self._verdicts[name] = approval.Verdict(
            "ask",
            "you asked to be asked again"
            + (
                " (you had rejected it; Allow once starts it this time only)"
                if was == "disabled"
                else ""
            ),
        )
        await self._ask_approval(conn)
        if conn.state in ("needs-approval", "disabled"):
            return conn.status(), f"MCP server {name} was not started: {conn.reason}"
        return conn.status(), f"MCP server {name} is starting: {conn.approval}"

    async def _ask_approval(self, conn: McpConnection) -> None:
        self._asking.add(conn.name)
        try:
            await self._ask_and_apply(conn)
        finally:
            self._asking.discard(conn.name)

    async def _ask_and_apply(self, conn: McpConnection) -> None:
        from codev_ls.bridge import PermissionAnswer
        from codev_ls.mcp import approval

        server = conn.config
        assert isinstance(server, StdioServer | HttpServer)
        request = approval.approval_request(server, self._verdicts[conn.name])
        try:
            answer = await self.engine.bridge.ask_permission(request)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the editor failed to ask: nothing is remembered
            log.warning("the question about MCP server %s got no answer: %s", conn.name, exc)
            answer = PermissionAnswer("reject", dismissed=True)
        if self._closed:
            return
        log.info("MCP server %s: the user answered %s", conn.name, answer)
        if answer.choice in ("allow_once", "allow_session"):
            conn.approval = "allowed by you, this time (Allow once)"
            conn.start()
        elif answer.choice == "allow_always":
            error = approval.save_approval(self._settings(), self.engine.root, server)
            if error is None:
                conn.approval = "approved by you (Always allow, saved in settings.local.json)"
            else:
                conn.approval = "allowed by you, this time (the approval could not be saved)"
                self._report_once(f"save:{conn.name}", "error", f"Codev: {error}.")
            conn.start()
        elif answer.dismissed:
            conn.hold(
                "needs-approval",
                "not started: the question was dismissed; you will be asked again when the "
                "workspace opens next (or now, through the codev/mcpApprove request or the "
                "codev.mcpApprove command)",
            )
        else:
            error = approval.save_rejection(self._settings(), server)
            if error is None:
                path = self._settings().local_path
                conn.hold(
                    "disabled",
                    f"rejected by you (saved in {approval.DISABLED} in {path}; remove it "
                    "there to be asked again)",
                )
            else:
                self._report_once(f"save:{conn.name}", "error", f"Codev: {error}.")
                conn.hold("disabled", "rejected by you, this time (the answer could not be saved)")

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
        # One key per server *and level*: the first "restarting" warning must not hide the
        # final "failed"/"gave up" error. At most two messages per server, then.
        self._report_once(f"server:{conn.name}:{level}", level, message)

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

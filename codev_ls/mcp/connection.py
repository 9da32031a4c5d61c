"""One MCP server's connection: start, list tools, call, restart on crash, stop.

Each server runs in its own asyncio task, which holds the SDK's transport and
``ClientSession`` contexts for the whole life of one connection (anyio
requires a context to be left in the task that entered it). Tool calls come
from other tasks and use the session directly; the SDK correlates replies,
delivers progress, and on cancellation of the calling task sends the MCP
``notifications/cancelled`` for the request.

States (``codev/mcpStatus``)::

    starting ──► ready ──(EOF / stops answering)──► starting (restart, backoff) ──► ready …
       │                                                 │
       └──(spawn error, exit, timeout)──► failed ◄───────┘ (too many restarts in a row)
    any ──(stop)──► stopped

    needs-approval ──(the user allows it)──► starting …     (a project's server, not approved)
    disabled                                                (rejected: never started)

A server that cannot start is not retried (a wrong command or a missing
dependency does not fix itself); one that was working and dies is restarted
with exponential backoff. Failures are reported once per server through the
manager's ``report`` callback; the reason stays in :attr:`McpConnection.error`.

The ``mcp`` SDK is imported on first use, in a worker thread: importing it
takes about a second, which must neither delay the server's start nor block
its event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

from codev_ls.engine.tool import Progress, ProgressCallback, ToolError
from codev_ls.mcp.config import BrokenServer, HttpServer, ServerConfig, StdioServer
from codev_ls.mcp.tool import McpTool, normalize_server_name

log = logging.getLogger(__name__)

ServerState = Literal["starting", "ready", "failed", "stopped", "needs-approval", "disabled"]
# States of a server that was never started (a project server not approved, or rejected).
HELD_STATES = ("needs-approval", "disabled")

# JSON-RPC error codes the SDK uses for its own failures (mcp_types.jsonrpc).
CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001

MAX_TOOL_PAGES = 50


@dataclass(slots=True)
class Timeouts:
    """Time limits of a connection, in seconds (env ``MCP_TIMEOUT``/``MCP_TOOL_TIMEOUT`` in ms)."""

    startup_s: float = 30.0
    tool_s: float = 600.0
    backoff_base_s: float = 1.0
    backoff_max_s: float = 30.0
    max_restarts: int = 5
    stop_s: float = 8.0
    # After a timed-out call: how long a ping may take before the server counts as hung.
    ping_s: float = 10.0

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Timeouts:
        env = os.environ if environ is None else environ
        t = cls()
        t.startup_s = _env_ms(env, "MCP_TIMEOUT", t.startup_s)
        t.tool_s = _env_ms(env, "MCP_TOOL_TIMEOUT", t.tool_s)
        return t


def _env_ms(env: Any, key: str, default: float) -> float:
    try:
        value = float(env.get(key, ""))
    except ValueError:
        return default
    return value / 1000.0 if value > 0 else default


# --------------------------------------------------------------------------- the SDK, lazily

_SDK: SimpleNamespace | None = None


def _import_sdk() -> SimpleNamespace:
    import anyio
    import httpx2
    import mcp_types
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.exceptions import MCPError

    return SimpleNamespace(
        anyio=anyio,
        httpx2=httpx2,
        types=mcp_types,
        ClientSession=ClientSession,
        StdioServerParameters=StdioServerParameters,
        stdio_client=stdio_client,
        streamable_http_client=streamable_http_client,
        MCPError=MCPError,
    )


async def load_sdk() -> SimpleNamespace:
    """The SDK's pieces, imported once, off the event loop."""
    global _SDK
    if _SDK is None:
        _SDK = await asyncio.to_thread(_import_sdk)
    return _SDK


# --------------------------------------------------------------------------- helpers


class _WatchedStream:
    """The transport's read stream, calling ``on_end`` when it ends (the server went away).

    The SDK's dispatcher ends quietly on EOF; this is how the connection task
    learns that a stdio server exited without waiting for the next call.
    """

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except Exception:
            self._on_end()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _WatchedStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self._inner.__anext__()
        except (StopAsyncIteration, Exception):
            self._on_end()
            raise

    async def __aenter__(self) -> _WatchedStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        return await self._inner.__aexit__(*exc)


def describe_error(exc: BaseException) -> str:
    """A one-line reason for a failed start or a lost connection, for the user."""
    if isinstance(exc, BaseExceptionGroup):
        inner = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        if inner:
            return describe_error(inner[0])
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    if isinstance(exc, PermissionError):
        return f"command not executable: {exc.filename or exc}"
    if isinstance(exc, TimeoutError):
        return str(exc) or "timed out"
    code = getattr(exc, "code", None)
    message = getattr(exc, "message", None)
    if isinstance(code, int) and isinstance(message, str):
        if code == CONNECTION_CLOSED:
            return "the server closed the connection"
        return f"{message} (error {code})"
    name = type(exc).__name__
    text = str(exc).strip()
    if "ConnectError" in name or "Connect" in name:
        return f"cannot connect: {text or name}"
    if "HTTPStatusError" in name:
        return f"HTTP error: {text}"
    return f"{name}: {text}" if text else name


# --------------------------------------------------------------------------- the connection


class McpConnection:
    """One configured MCP server and, while it runs, its session and tools."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        timeouts: Timeouts,
        log_dir: Path,
        on_change: Callable[[McpConnection], None],
        report: Callable[[McpConnection, str, str], None],
        client_version: str = "0",
    ) -> None:
        self.config = config
        self.name = config.name
        self.timeouts = timeouts
        self.startup_s = config.startup_timeout_s or timeouts.startup_s
        self.tool_s = config.timeout_s or timeouts.tool_s
        self.log_path = log_dir / f"{normalize_server_name(config.name)}.log"
        self._on_change = on_change
        self._report = report
        self._client_version = client_version
        self.state: ServerState = "starting"
        self.error: str | None = None
        # Why a held server is not running (needs-approval / disabled), for the user.
        self.reason: str | None = None
        # How a project server came to be allowed to start (codev/mcpStatus says).
        self.approval: str | None = None
        self.restarts = 0
        self.server_info: dict[str, Any] | None = None
        self.tools: list[McpTool] = []
        self.started_at: float | None = None
        self._session: Any = None
        self._changed = asyncio.Event()
        self._stop = asyncio.Event()
        self._broken: asyncio.Event | None = None
        self._broken_reason = ""
        self._became_ready = False
        self._http_error = ""
        self._task: asyncio.Task[None] | None = None
        self._side_tasks: set[asyncio.Task[Any]] = set()

    # ---------------------------------------------------------------- state

    def _set_state(self, state: ServerState, error: str | None = None) -> None:
        self.state = state
        if error is not None or state == "ready":
            self.error = error
        if state != "ready":
            self._session = None
            self.tools = []
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()
        try:
            self._on_change(self)
        except Exception:
            log.exception("MCP state change handler failed")

    def status(self) -> dict[str, Any]:
        """This server's line in ``codev/mcpStatus``."""
        info: dict[str, Any] = {
            "name": self.name,
            "state": self.state,
            "transport": self.config.transport,
            "origin": self.config.origin,
            "tools": sorted(t.name for t in self.tools),
            "restarts": self.restarts,
        }
        target = self.config.describe()
        if target:
            info["target"] = target
        if self.error:
            info["error"] = self.error
        if self.reason and self.state in HELD_STATES:
            info["reason"] = self.reason
        if self.approval:
            info["approval"] = self.approval
        if self.server_info:
            info["serverInfo"] = self.server_info
        return info

    async def wait_settled(self, limit_s: float) -> None:
        """Wait until the server is no longer starting (or ``limit_s`` seconds pass)."""
        deadline = time.monotonic() + limit_s
        while self.state == "starting":
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), remaining)

    # ---------------------------------------------------------------- lifecycle

    def hold(self, state: ServerState, reason: str) -> None:
        """Keep the server from starting (``needs-approval`` or ``disabled``), saying why."""
        self.reason = reason
        self._set_state(state)

    def start(self) -> None:
        """Start the connection task (needs a running event loop)."""
        if self._task is not None:
            return
        self.reason = None
        if self.state in HELD_STATES:
            self._set_state("starting")
        if isinstance(self.config, BrokenServer):
            self._fail(self.config.reason, "cannot be started")
            return
        self._task = asyncio.get_running_loop().create_task(
            self._run(), name=f"mcp-server:{self.name}"
        )

    async def stop(self) -> None:
        """Stop the server: a graceful close first, then cancellation; never hangs."""
        self._stop.set()
        for side in list(self._side_tasks):
            side.cancel()
        task = self._task
        if task is not None and not task.done():
            if self.state != "ready":
                # Starting (perhaps hanging in initialize) or waiting to restart: nothing to
                # close gracefully; cancelling makes the SDK stop the process at once.
                task.cancel()
            done, _ = await asyncio.wait({task}, timeout=self.timeouts.stop_s)
            if not done:
                task.cancel()
                await asyncio.wait({task}, timeout=self.timeouts.stop_s)
        if self.state not in ("failed", *HELD_STATES):
            self._set_state("stopped")

    def _fail(self, reason: str, what: str) -> None:
        self._set_state("failed", reason)
        self._report(
            self,
            "error",
            f"MCP server {self.name} {what}: {reason}. Its tools are left out "
            "(codev/mcpStatus shows the state of every server).",
        )

    async def _run(self) -> None:
        ever_ready = False
        failures = 0
        try:
            while not self._stop.is_set():
                if self.state != "starting":
                    self._set_state("starting")
                self._became_ready = False
                try:
                    reason = await self._lifetime()
                except (asyncio.CancelledError, KeyboardInterrupt, SystemExit):
                    raise
                except BaseException as exc:  # a connection's failure never leaves this task
                    reason = describe_error(exc)
                    if not isinstance(exc, Exception):
                        log.debug("MCP server %s: %r", self.name, exc)
                if self._stop.is_set():
                    break
                reason = self._with_details(reason)
                if not ever_ready and not self._became_ready:
                    self._fail(reason, "failed to start")
                    return
                if self._became_ready:
                    ever_ready = True
                    failures = 0
                failures += 1
                if failures > self.timeouts.max_restarts:
                    self._fail(
                        f"{reason} (gave up after {self.timeouts.max_restarts} restarts in a row)",
                        "keeps failing",
                    )
                    return
                self.restarts += 1
                self._set_state("starting", reason)
                self._report(
                    self,
                    "warning",
                    f"MCP server {self.name} stopped ({reason}); restarting it. "
                    "Its tools are left out until it is back.",
                )
                delay = min(
                    self.timeouts.backoff_base_s * 2 ** (failures - 1), self.timeouts.backoff_max_s
                )
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), delay)
        finally:
            if self.state not in ("failed", "stopped"):
                self._set_state("stopped")

    async def _lifetime(self) -> str:
        """One connection, from spawn to its end; returns why it ended."""
        sdk = await load_sdk()
        ended = asyncio.Event()
        self._broken = asyncio.Event()
        self._broken_reason = ""
        async with contextlib.AsyncExitStack() as stack:
            read, write = await stack.enter_async_context(self._transport(sdk, stack))
            session = await stack.enter_async_context(
                sdk.ClientSession(
                    _WatchedStream(read, ended.set),
                    write,
                    message_handler=self._on_message,
                    client_info=sdk.types.Implementation(
                        name="codev-ls", version=self._client_version
                    ),
                )
            )
            try:
                with sdk.anyio.fail_after(self.startup_s):
                    init = await session.initialize()
                    specs = await self._list_tools(sdk, session)
            except TimeoutError as exc:
                raise TimeoutError(
                    f"no answer to initialize / tools/list within {self.startup_s:g} s"
                ) from exc
            self.server_info = _dump(getattr(init, "server_info", None))
            self._session = session
            self.tools = self._make_tools(specs)
            self.started_at = time.monotonic()
            self._became_ready = True
            self._set_state("ready")
            waits = {
                asyncio.ensure_future(self._stop.wait()): "stop",
                asyncio.ensure_future(ended.wait()): "the server closed the connection",
                asyncio.ensure_future(self._broken.wait()): "broken",
            }
            try:
                done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for fut in waits:
                    fut.cancel()
            what = waits[next(iter(done))]
            if what == "broken":
                what = self._broken_reason
            self._session = None
            if what != "stop":
                self._set_state("starting")
            return what

    def _transport(self, sdk: SimpleNamespace, stack: contextlib.AsyncExitStack) -> Any:
        config = self.config
        if isinstance(config, StdioServer):
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            errlog = stack.enter_context(open(self.log_path, "w", encoding="utf-8"))  # noqa: SIM115
            params = sdk.StdioServerParameters(
                command=config.command,
                args=list(config.args),
                env=dict(config.env) or None,
                cwd=str(config.cwd) if config.cwd else None,
            )
            return sdk.stdio_client(params, errlog=errlog)
        if isinstance(config, HttpServer):
            self._http_error = ""

            async def on_response(response: Any) -> None:
                # The SDK reports a failed POST only as "an error response": keep the status.
                if response.status_code >= 400:
                    self._http_error = f"HTTP {response.status_code} {response.reason_phrase}"

            client = sdk.httpx2.AsyncClient(
                headers=dict(config.headers),
                timeout=sdk.httpx2.Timeout(30.0, read=300.0),
                event_hooks={"response": [on_response]},
            )
            stack.push_async_callback(client.aclose)
            return sdk.streamable_http_client(config.url, http_client=client)
        raise RuntimeError(f"cannot start {config!r}")

    async def _list_tools(self, sdk: SimpleNamespace, session: Any) -> list[dict[str, Any]]:
        specs: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(MAX_TOOL_PAGES):
            params = sdk.types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            specs.extend(_dump(t) for t in page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return specs

    def _make_tools(self, specs: list[dict[str, Any]]) -> list[McpTool]:
        tools: dict[str, McpTool] = {}
        for spec in specs:
            if not isinstance(spec.get("name"), str):
                continue
            tool = McpTool(self, spec)
            if tool.name in tools:
                log.warning("MCP server %s lists %s twice; keeping the first", self.name, tool.name)
                continue
            tools[tool.name] = tool
        return list(tools.values())

    async def _on_message(self, message: Any) -> None:
        """Server notifications: a changed tool list is fetched again."""
        if isinstance(message, Exception):
            log.debug("MCP server %s transport error: %r", self.name, message)
            return
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            self._spawn(self._refresh_tools())

    async def _refresh_tools(self) -> None:
        session = self._session
        if session is None:
            return
        try:
            sdk = await load_sdk()
            specs = await asyncio.wait_for(self._list_tools(sdk, session), self.startup_s)
        except Exception as exc:
            log.warning("MCP server %s: listing tools again failed: %s", self.name, exc)
            return
        if session is self._session and self.state == "ready":
            self.tools = self._make_tools(specs)
            self._set_state("ready")

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._side_tasks.add(task)
        task.add_done_callback(self._side_tasks.discard)

    def _with_details(self, reason: str) -> str:
        """The reason, with the server's last stderr lines or the HTTP status it answered."""
        if isinstance(self.config, HttpServer):
            if self._http_error and self._http_error not in reason:
                return f"{reason} ({self._http_error})"
            return reason
        tail = stderr_tail(self.log_path)
        return f"{reason}; its stderr ends with: {tail}" if tail else reason

    # ---------------------------------------------------------------- calls

    async def _session_for_call(self, tool: str) -> Any:
        if self.state == "starting":
            await self.wait_settled(self.startup_s)
        session = self._session
        if self.state == "ready" and session is not None:
            return session
        detail = self.error or (self.reason if self.state in HELD_STATES else None)
        why = f": {detail}" if detail else ""
        if self.state == "starting":
            raise ToolError(
                f"The MCP server {self.name} is not ready (still starting after "
                f"{self.startup_s:g} s){why}, so {tool} could not be called. Try again later."
            )
        raise ToolError(
            f"The MCP server {self.name} is not running ({self.state}{why}), so {tool} "
            "cannot be called."
        )

    async def call_tool(
        self, tool: str, arguments: dict[str, Any], on_progress: ProgressCallback
    ) -> dict[str, Any]:
        """Call ``tool``; the ``CallToolResult`` as a dict, or :class:`ToolError`."""
        session = await self._session_for_call(tool)
        sdk = await load_sdk()

        async def progress(value: float, total: float | None, message: str | None) -> None:
            on_progress(_progress(value, total, message))

        try:
            result = await session.call_tool(
                tool,
                arguments,
                read_timeout_seconds=self.tool_s,
                progress_callback=progress,
            )
        except sdk.MCPError as exc:
            raise self._call_error(tool, exc, session) from exc
        except (sdk.anyio.ClosedResourceError, sdk.anyio.BrokenResourceError) as exc:
            raise ToolError(
                f"The MCP server {self.name} went away while {tool} was running. "
                "It is being restarted."
            ) from exc
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            raise ToolError(
                f"Calling {tool} on the MCP server {self.name} failed: {describe_error(exc)}"
            ) from exc
        return _dump(result)

    def _call_error(self, tool: str, exc: Any, session: Any) -> ToolError:
        code = getattr(exc, "code", None)
        if code == REQUEST_TIMEOUT:
            self._spawn(self._check_alive(session))
            return ToolError(
                f"The MCP server {self.name} did not answer {tool} within {self.tool_s:g} s; "
                "the call was cancelled."
            )
        if code == CONNECTION_CLOSED:
            self._mark_broken(session, "the server closed the connection")
            tail = stderr_tail(self.log_path) if isinstance(self.config, StdioServer) else ""
            extra = f" Its stderr ends with: {tail}" if tail else ""
            return ToolError(
                f"The MCP server {self.name} closed the connection while {tool} was running "
                f"({exc.message}). It is being restarted.{extra}"
            )
        return ToolError(f"The MCP server {self.name} refused the call to {tool}: {exc.message}")

    async def _check_alive(self, session: Any) -> None:
        """After a timed-out call: a server that does not even answer a ping is restarted."""
        try:
            await asyncio.wait_for(session.send_ping(), self.timeouts.ping_s)
        except asyncio.CancelledError:
            raise
        except Exception:
            self._mark_broken(
                session, f"it stopped answering (no reply to a ping in {self.timeouts.ping_s:g} s)"
            )

    def _mark_broken(self, session: Any, reason: str) -> None:
        """End the connection of ``session`` (if still current): its tools leave at once.

        The connection task restarts the server; until it is back, calls wait
        for it (up to the startup timeout) instead of using the dead session.
        """
        if session is not self._session or self._broken is None:
            return
        self._broken_reason = reason
        self._broken.set()
        self._set_state("starting", reason)


def _progress(value: float, total: float | None, message: str | None) -> Progress:
    percentage = None
    if total:
        percentage = max(0, min(100, round(100 * value / total)))
    text = message or (f"{value:g}/{total:g}" if total else f"{value:g}")
    data: dict[str, Any] = {"progress": value}
    if total is not None:
        data["total"] = total
    return Progress(type="MCPProgress", message=text, percentage=percentage, data=data)


def _dump(model: Any) -> dict[str, Any]:
    if model is None:
        return {}
    if isinstance(model, dict):
        return model
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def stderr_tail(path: Path, max_lines: int = 2, max_chars: int = 400) -> str:
    """The last lines a server wrote to stderr (the usual place for its reason to die)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - 4096))
            data = fh.read().decode("utf-8", "replace")
    except OSError:
        return ""
    lines = [line.strip() for line in data.splitlines() if line.strip()]
    text = " | ".join(lines[-max_lines:])
    return text[-max_chars:]

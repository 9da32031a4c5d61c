"""The Codev language server's state: the workspace, the engine, the runs in flight.

:class:`CodevLanguageServer` is the pygls ``LanguageServer`` the handlers in
``server.py`` call into. It builds one :class:`~codev_ls.engine.runtime.Engine`
with ``app.build_engine`` (after ``initialize`` has been answered: the cold
start pays for pygls only), runs tool uses as tasks it can interrupt, applies
settings, and shuts down cleanly — also when the editor just goes away.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import logging
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcServerNotInitialized
from pygls.lsp.server import LanguageServer

from codev_ls import __version__
from codev_ls.lsp_bridge import LspBridge
from codev_ls.lsp_params import InvalidParams, check_mode, tool_info
from codev_ls.lsp_protocol import (
    CHAT_EVENT,
    CodevProtocol,
    ProgressToken,
    current_command_token,
    make_converter,
)

if TYPE_CHECKING:
    from codev_ls.chat import ChatRequest
    from codev_ls.engine.runtime import Engine
    from codev_ls.permissions.types import PermissionMode

log = logging.getLogger(__name__)

SETTINGS_SECTION = "codev"
# How long runs get to end on their own once the editor is gone.
LOST_EDITOR_GRACE = 0.2
# How long shutdown waits for interrupted runs to finish their clean-up.
SHUTDOWN_GRACE = 10.0


class CodevLanguageServer(LanguageServer):
    """The server's state: the workspace, the engine, the runs in flight."""

    def __init__(self) -> None:
        super().__init__(
            "codev-ls",
            __version__,
            protocol_cls=CodevProtocol,
            converter_factory=make_converter,
        )
        self.bridge = LspBridge(self)
        self.bridge.interrupt = self.interrupt
        self.root: Path | None = None
        self.mode: PermissionMode | None = None
        self._engine_task: asyncio.Future[Engine] | None = None
        self._runs: dict[str, asyncio.Future[Any]] = {}
        self._chats: set[asyncio.Future[Any]] = set()
        self._closing: asyncio.Future[None] | None = None
        # Set by `exit`: 0 after a shutdown request, 1 without (LSP's rule).
        self.exit_code = 0

    # ------------------------------------------------------------------ set-up

    def setup(self, params: types.InitializeParams) -> None:
        """Workspace root, permission mode and the editor's capabilities, from initialize."""
        self.root, warning = workspace_root(params)
        if warning:
            self.bridge.show_message("warning", warning)
        self.bridge.configure(params.capabilities, params.client_info)
        options = params.initialization_options
        if isinstance(options, dict):
            section = options.get(SETTINGS_SECTION)
            value = options.get("permissionMode")
            if value is None and isinstance(section, dict):
                value = section.get("permissionMode")
            self._take_mode(value, "initializationOptions")
        elif options is not None:
            self.bridge.show_message(
                "warning", "Codev: initializationOptions must be an object; ignored."
            )

    def _take_mode(self, value: Any, origin: str) -> PermissionMode | None:
        """Set the mode from a setting; a bad value is reported and ignored.

        An empty string is "not set" (VS Code's default): the settings files decide.
        """
        if value is None or value == "":
            return None
        try:
            mode = check_mode(value, origin)
        except InvalidParams as exc:
            self.bridge.show_message("warning", f"Codev: {exc}. The permission mode is unchanged.")
            return None
        self.mode = mode
        engine = self._built_engine()
        if engine is not None and mode is not None:
            engine.set_mode(mode)
        return mode

    def start_engine(self) -> None:
        """Build the engine in the background (after initialize has been answered)."""
        if self._engine_task is None:
            self._engine_task = asyncio.ensure_future(self._build_engine())

    async def engine(self) -> Engine:
        """The engine, built on first need."""
        if self.root is None:
            raise JsonRpcServerNotInitialized("The server is not initialized yet")
        self.start_engine()
        assert self._engine_task is not None
        return await asyncio.shield(self._engine_task)

    def _built_engine(self) -> Engine | None:
        task = self._engine_task
        if task is None or not task.done() or task.cancelled() or task.exception():
            return None
        return task.result()

    async def _build_engine(self) -> Engine:
        assert self.root is not None
        # The import is the heavy part (pydantic, the tools): keep the loop answering.
        app = await asyncio.to_thread(importlib.import_module, "codev_ls.app")
        try:
            engine = app.build_engine(self.root, self.bridge, mode=self.mode)
            if inspect.isawaitable(engine):
                engine = await engine
        except Exception as exc:
            log.exception("setting up the engine failed")
            self.bridge.show_message(
                "error",
                f"Codev: setting up failed ({type(exc).__name__}: {exc}); "
                "running with the defaults.",
            )
            from codev_ls.engine.runtime import Engine

            engine = Engine(self.root, self.bridge, mode=self.mode or "default")
        if self.mode is not None:
            engine.set_mode(self.mode)
        return engine

    async def apply_settings(self, settings: Any) -> None:
        """``workspace/didChangeConfiguration``: the ``codev`` section (pulled if not pushed)."""
        section = None
        if isinstance(settings, dict):
            section = settings.get(SETTINGS_SECTION)
            if section is None and "permissionMode" in settings:
                section = settings
        if section is None and self._client_has_configuration():
            try:
                items = await self.workspace_configuration_async(
                    types.ConfigurationParams(
                        items=[types.ConfigurationItem(section=SETTINGS_SECTION)]
                    )
                )
                section = items[0] if items else None
            except Exception as exc:
                log.info("workspace/configuration failed: %s", exc)
        if isinstance(section, dict):
            self._take_mode(section.get("permissionMode"), "the codev settings")
        elif section is not None:
            self.bridge.show_message(
                "warning", "Codev: the `codev` settings must be an object; ignored."
            )

    def _client_has_configuration(self) -> bool:
        caps = self.client_capabilities
        return bool(caps and caps.workspace and caps.workspace.configuration)

    # ------------------------------------------------------------------ requests

    async def list_tools(self) -> dict[str, Any]:
        engine = await self.engine()
        return {"tools": [tool_info(t) for t in engine.tool_pool()]}

    async def mcp_status(self) -> dict[str, Any]:
        """Each MCP server's state (starting, ready, failed, stopped, needs-approval, disabled)."""
        from codev_ls.mcp.manager import get_manager

        manager = get_manager(await self.engine())
        if manager is None:
            return {"servers": [], "problems": [], "deferred": False}
        return manager.status()

    async def mcp_approve(self, name: str) -> dict[str, Any]:
        """Ask the user again about a held-back project MCP server; its state after."""
        from codev_ls.lsp_params import InvalidParams
        from codev_ls.mcp.manager import get_manager

        manager = get_manager(await self.engine())
        if manager is None:
            raise InvalidParams(f"there is no MCP server named {name!r} (no servers configured)")
        try:
            server, message = await manager.ask_again(name)
        except KeyError as exc:
            raise InvalidParams(str(exc.args[0])) from exc
        return {"server": server, "message": message}

    async def permission_mode(self, mode: PermissionMode | None) -> dict[str, Any]:
        engine = await self.engine()
        if mode is not None:
            self.mode = mode
            engine.set_mode(mode)
        return {"mode": engine.mode}

    async def run_tool(
        self,
        name: str,
        tool_input: Any,
        *,
        tool_use_id: str | None = None,
        token: ProgressToken | None = None,
    ) -> dict[str, Any]:
        """One tool use through the engine; a cancelled request ends it as ``interrupted``."""
        from codev_ls.engine.runtime import new_tool_use_id

        engine = await self.engine()
        tid = tool_use_id or new_tool_use_id()
        if tid in self._runs:
            raise InvalidParams(f"the tool use {tid} is already running; use a new toolUseId")
        if token is not None:
            self.bridge.use_client_token(tid, token)
        run = asyncio.ensure_future(engine.run_tool(name, tool_input, tool_use_id=tid))
        self._runs[tid] = run
        run.add_done_callback(lambda _f: self._runs.pop(tid, None))
        try:
            outcome = await asyncio.shield(run)
        except asyncio.CancelledError:
            # $/cancelRequest (or shutdown): interrupt the run and answer with its outcome.
            self.interrupt(tid)
            outcome = await _settle(run)
        finally:
            self.bridge.use_client_token(tid, None)
        if outcome is None:
            return interrupted_outcome(tid, name)
        return outcome.to_protocol()

    def interrupt(self, tool_use_id: str) -> int:
        """Interrupt one run: its abort signal (tools clean up), then its task."""
        engine = self._built_engine()
        count = engine.cancel(tool_use_id) if engine is not None else 0
        run = self._runs.get(tool_use_id)
        if run is not None and not run.done():
            run.cancel()
            count = max(count, 1)
        return count

    def cancel(self, *, tool_use_id: str | None, session_id: str | None) -> int:
        """``codev/cancel``: one run, one chat session's turn, or (neither given) everything."""
        from codev_ls.chat import cancel_chats

        count = 0
        engine = self._built_engine()
        if tool_use_id is not None:
            count += self.interrupt(tool_use_id)
        if session_id is not None and engine is not None:
            count += cancel_chats(engine, session_id)
        if tool_use_id is None and session_id is None:
            if engine is not None:
                count += cancel_chats(engine, None)
            ids = set(self._runs) | (set(engine._running) if engine is not None else set())
            for tid in ids:
                count += self.interrupt(tid)
        return count

    async def chat(self, request: ChatRequest) -> dict[str, Any]:
        """One chat turn; a cancelled request ends the turn cleanly and answers with it."""
        from codev_ls.chat import cancel_chats, run_chat

        engine = await self.engine()
        if request.work_done_token is None:
            request.work_done_token = current_command_token()

        def emit(event: dict[str, Any]) -> None:
            try:
                self.protocol.notify(CHAT_EVENT, event)
            except Exception:
                log.debug("chat event not sent", exc_info=True)

        task = asyncio.ensure_future(run_chat(engine, request, emit))
        self._chats.add(task)
        task.add_done_callback(self._chats.discard)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            # run_chat fills in the session id as soon as it knows it.
            if request.session_id is not None and cancel_chats(engine, request.session_id):
                result = await _settle(task)
                if result is not None:
                    return result
            task.cancel()
            raise

    # ------------------------------------------------------------------ shutdown

    async def aclose(self) -> None:
        """End running commands, run the engine's clean-ups, finish pending writes."""
        if self._closing is not None:
            await asyncio.shield(self._closing)
            return
        self._closing = asyncio.get_running_loop().create_future()
        try:
            for chat in list(self._chats):
                chat.cancel()
            for tid in list(self._runs):
                self.interrupt(tid)
            engine = self._built_engine()
            if engine is not None:
                await engine.aclose()
            pending = [f for f in [*self._runs.values(), *self._chats] if not f.done()]
            if pending:
                await asyncio.wait(pending, timeout=SHUTDOWN_GRACE)
            await self.bridge.drain()
        except Exception:
            log.exception("shutting down failed")
        finally:
            self._closing.set_result(None)

    # ------------------------------------------------------------------ transport

    def start_io(self, stdin: Any = None, stdout: Any = None) -> None:
        """Serve on stdio; when the editor goes away, interrupt and clean up first.

        stdin is read through the event loop, not pygls' reader thread: a thread
        blocked in ``readline`` would keep the process alive after ``exit``.
        """
        from pygls.io_ import StdoutWriter, run_async

        self._stop_event = threading.Event()
        stdin = stdin or sys.stdin.buffer
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))

        async def main() -> None:
            try:
                await run_async(
                    stop_event=self._stop_event,
                    reader=await self._stdin_reader(stdin),
                    protocol=self.protocol,
                    logger=log,
                    error_handler=self.report_server_error,
                )
            finally:
                self.bridge.connection_lost()
                # A question the editor can no longer answer ends its run as an
                # (audited) rejection: give those runs a moment before interrupting.
                waiting = [f for f in [*self._runs.values(), *self._chats] if not f.done()]
                if waiting:
                    await asyncio.wait(waiting, timeout=LOST_EDITOR_GRACE)
                await self.aclose()

        try:
            asyncio.run(main())
        except BrokenPipeError:
            log.error("the connection to the editor is lost; shutting down")
        except asyncio.IncompleteReadError:
            log.error("the editor closed the connection in the middle of a message")
        except KeyboardInterrupt:
            pass
        except SystemExit as exc:  # the `exit` notification
            self.exit_code = exc.code if isinstance(exc.code, int) else 0
        finally:
            self.shutdown()

    async def _stdin_reader(self, stdin: Any) -> Any:
        """An asyncio reader of stdin (a pipe); pygls' threaded reader otherwise (a tty, a file)."""
        from pygls.io_ import StdinAsyncReader

        try:
            if not stdin.isatty():
                reader = asyncio.StreamReader(limit=1 << 24)
                loop = asyncio.get_running_loop()
                await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
                return reader
        except (OSError, ValueError, NotImplementedError, AttributeError):
            log.debug("stdin is not a pipe; reading it in a thread")
        return StdinAsyncReader(stdin, self.thread_pool)

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Protocol trouble goes to the log (stderr, window/logMessage), not to pop-ups.

        Errors of requests are already in their responses: those are only logged at
        debug level.
        """
        from pygls.exceptions import FeatureRequestError

        if source is FeatureRequestError:
            log.debug("request failed: %s", error)
            return
        log.error("%s: %s", getattr(source, "__name__", source), error)


async def _settle(run: asyncio.Future[Any]) -> Any:
    """The outcome of an interrupted run (None when it never started)."""
    try:
        return await asyncio.shield(run)
    except asyncio.CancelledError:
        if run.done() and not run.cancelled():
            return run.result()
        if run.cancelled():
            return None
        raise


def interrupted_outcome(tool_use_id: str, name: str) -> dict[str, Any]:
    from codev_ls.engine.outcome import INTERRUPTED_MESSAGE

    return {
        "toolUseId": tool_use_id,
        "toolName": name,
        "status": "interrupted",
        "content": INTERRUPTED_MESSAGE,
        "isError": False,
    }


def workspace_root(params: types.InitializeParams) -> tuple[Path, str | None]:
    """The first workspace folder, else rootUri, else rootPath, else the current folder."""
    from pygls.uris import to_fs_path

    candidates: list[str] = [f.uri for f in params.workspace_folders or []]
    if params.root_uri:
        candidates.append(params.root_uri)
    for uri in candidates:
        path = to_fs_path(uri)
        if path:
            return Path(path), None
    if params.root_path:
        return Path(params.root_path), None
    if candidates:
        return (
            Path.cwd(),
            f"Codev: the workspace {candidates[0]} is not a local folder; using {Path.cwd()}.",
        )
    return Path.cwd(), None

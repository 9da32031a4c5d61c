"""The Codev language server: the LSP handlers, one per method, over pygls 2.

Each handler parses its params (``lsp_params``; malformed → ``InvalidParams``)
and calls :class:`~codev_ls.lsp_host.CodevLanguageServer`, which hosts the
engine behind the LSP bridge (``lsp_bridge``). The JSON-RPC details pygls
gets wrong for this server are handled in ``lsp_protocol``. Every handler that
waits is ``async``: sync or thread handlers deadlock when they wait on the
editor (``PYGLS_NOTES.md``).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams

from codev_ls.lsp_host import CodevLanguageServer
from codev_ls.lsp_params import (
    InvalidParams,
    parse_cancel,
    parse_chat,
    parse_chat_args,
    parse_explain,
    parse_mode_args,
    parse_mode_params,
    parse_no_params,
    parse_run_tool,
    parse_run_tool_args,
    parse_server_name,
)
from codev_ls.lsp_protocol import (
    CANCEL,
    CHANGES,
    CHAT,
    EXPLAIN_PERMISSION,
    LIST_TOOLS,
    MCP_APPROVE,
    MCP_STATUS,
    PERMISSION_MODE,
    RUN_TOOL,
    UNDO_CHANGE,
    current_command_token,
)

log = logging.getLogger(__name__)


def _guard(method: str):  # type: ignore[no-untyped-def]
    """Turn malformed params into InvalidParams and bugs into a short internal error."""

    def wrap(fn):  # type: ignore[no-untyped-def]
        async def handler(ls: CodevLanguageServer, *args: Any) -> Any:
            try:
                return await fn(ls, *args)
            except InvalidParams as exc:
                raise JsonRpcInvalidParams(str(exc)) from exc
            except (JsonRpcException, asyncio.CancelledError):
                raise
            except Exception as exc:
                log.exception("%s failed", method)
                raise JsonRpcInternalError(f"{method} failed: {type(exc).__name__}: {exc}") from exc

        handler.__name__ = fn.__name__
        handler.__doc__ = fn.__doc__
        return handler

    return wrap


SERVER = CodevLanguageServer()


@SERVER.feature(types.INITIALIZE)
async def initialize(ls: CodevLanguageServer, params: types.InitializeParams) -> None:
    """Learn the workspace root, the permission mode and what the editor can do."""
    ls.setup(params)


@SERVER.feature(types.INITIALIZED)
def initialized(ls: CodevLanguageServer, params: types.InitializedParams) -> None:
    """The session is up: release queued messages and build the engine.

    Sync on purpose: an async handler runs later, after messages already read.
    """
    ls.bridge.set_ready()
    ls.start_engine()


@SERVER.feature(types.SHUTDOWN)
async def shutdown(ls: CodevLanguageServer, params: None) -> None:
    """End running commands and finish pending writes."""
    await ls.aclose()


@SERVER.feature(types.EXIT)
async def exit_(ls: CodevLanguageServer, params: None) -> None:
    """Exit without a shutdown first: clean up all the same."""
    await ls.aclose()


@SERVER.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(
    ls: CodevLanguageServer, params: types.DidChangeConfigurationParams
) -> None:
    """Apply the ``codev`` settings section (the permission mode)."""
    await ls.apply_settings(params.settings)


@SERVER.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: CodevLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    """A buffer opened (pygls keeps its text)."""
    ls.bridge.document_event(params.text_document.uri)


@SERVER.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: CodevLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    """A buffer changed (pygls applied the change)."""
    ls.bridge.document_event(params.text_document.uri)


@SERVER.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: CodevLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
    """A buffer was saved (it is no longer dirty)."""
    ls.bridge.document_event(params.text_document.uri)


@SERVER.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: CodevLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
    """A buffer closed: reads go to the disk again."""
    ls.bridge.document_event(params.text_document.uri)


@SERVER.feature(LIST_TOOLS)
@_guard(LIST_TOOLS)
async def list_tools(ls: CodevLanguageServer, params: Any) -> dict[str, Any]:
    """The tools the model sees, as ToolInfo, sorted by name."""
    parse_no_params(params, LIST_TOOLS)
    return await ls.list_tools()


@SERVER.feature(RUN_TOOL)
@_guard(RUN_TOOL)
async def run_tool(ls: CodevLanguageServer, params: Any) -> dict[str, Any]:
    """Run one tool use; the result is its ToolOutcome."""
    req = parse_run_tool(params)
    return await ls.run_tool(
        req.name, req.input, tool_use_id=req.tool_use_id, token=req.work_done_token
    )


@SERVER.feature(PERMISSION_MODE)
@_guard(PERMISSION_MODE)
async def permission_mode(ls: CodevLanguageServer, params: Any) -> dict[str, Any]:
    """Set the permission mode when given; answer the current one."""
    return await ls.permission_mode(parse_mode_params(params))


@SERVER.feature(EXPLAIN_PERMISSION)
@_guard(EXPLAIN_PERMISSION)
async def explain_permission(ls: CodevLanguageServer, params: Any) -> dict[str, Any]:
    """What would decide a tool use, and why, without running it."""
    from codev_ls.permissions.explain import explain_permission as explain

    req = parse_explain(params)
    return await explain(await ls.engine(), req.name, req.input, mode=req.mode)


@SERVER.feature(CHAT)
@_guard(CHAT)
async def chat(ls: CodevLanguageServer, params: Any) -> dict[str, Any]:
    """One chat turn, streaming codev/chatEvent."""
    return await ls.chat(parse_chat(params))


@SERVER.feature(CANCEL)
@_guard(CANCEL)
async def cancel(ls: CodevLanguageServer, params: Any) -> dict[str, Any]:
    """Interrupt a run (toolUseId), a chat (sessionId), or everything."""
    req = parse_cancel(params)
    return {"cancelled": ls.cancel(tool_use_id=req.tool_use_id, session_id=req.session_id)}


@SERVER.feature(MCP_STATUS)
@_guard(MCP_STATUS)
async def mcp_status(ls: CodevLanguageServer, params: Any) -> dict[str, Any]:
    """Each MCP server's state: starting, ready, failed, stopped, needs-approval, disabled."""
    parse_no_params(params, MCP_STATUS)
    return await ls.mcp_status()


@SERVER.feature(MCP_APPROVE)
@_guard(MCP_APPROVE)
async def mcp_approve(ls: CodevLanguageServer, params: Any) -> dict[str, Any]:
    """Ask again about a project MCP server that was dismissed or rejected."""
    return await ls.mcp_approve(parse_server_name(params))


@SERVER.feature(CHANGES)
@_guard(CHANGES)
async def changes(ls: CodevLanguageServer, params: Any) -> dict[str, Any]:
    """The changes the tools made in a session, oldest first, for review."""
    from codev_ls.tools._changes import changes_request

    try:
        return await changes_request(await ls.engine(), params)
    except ValueError as exc:
        raise InvalidParams(str(exc)) from exc


@SERVER.feature(UNDO_CHANGE)
@_guard(UNDO_CHANGE)
async def undo_change(ls: CodevLanguageServer, params: Any) -> dict[str, Any]:
    """Undo one change (the latest by default) through the editor, like an edit."""
    from codev_ls.tools._changes import undo_request

    try:
        return await undo_request(await ls.engine(), params)
    except ValueError as exc:
        raise InvalidParams(str(exc)) from exc


@SERVER.command("codev.changes")
@_guard("codev.changes")
async def changes_command(ls: CodevLanguageServer, *args: Any) -> dict[str, Any]:
    """``codev.changes [{sessionId?}]``: as codev/changes."""
    return await changes(ls, list(args))


@SERVER.command("codev.undoChange")
@_guard("codev.undoChange")
async def undo_change_command(ls: CodevLanguageServer, *args: Any) -> dict[str, Any]:
    """``codev.undoChange [{sessionId?, index? | toolUseId?}]``: as codev/undoChange."""
    return await undo_change(ls, list(args))


@SERVER.command("codev.listTools")
@_guard("codev.listTools")
async def list_tools_command(ls: CodevLanguageServer, *args: Any) -> dict[str, Any]:
    """``codev.listTools``: as codev/listTools."""
    return await ls.list_tools()


@SERVER.command("codev.runTool")
@_guard("codev.runTool")
async def run_tool_command(ls: CodevLanguageServer, *args: Any) -> dict[str, Any]:
    """``codev.runTool [name, input]``: as codev/runTool."""
    req = parse_run_tool_args(args)
    token = req.work_done_token if req.work_done_token is not None else current_command_token()
    return await ls.run_tool(req.name, req.input, tool_use_id=req.tool_use_id, token=token)


@SERVER.command("codev.permissionMode")
@_guard("codev.permissionMode")
async def permission_mode_command(ls: CodevLanguageServer, *args: Any) -> dict[str, Any]:
    """``codev.permissionMode [mode]``: as codev/permissionMode."""
    return await ls.permission_mode(parse_mode_args(args))


@SERVER.command("codev.mcpStatus")
@_guard("codev.mcpStatus")
async def mcp_status_command(ls: CodevLanguageServer, *args: Any) -> dict[str, Any]:
    """``codev.mcpStatus``: as codev/mcpStatus."""
    return await ls.mcp_status()


@SERVER.command("codev.mcpApprove")
@_guard("codev.mcpApprove")
async def mcp_approve_command(ls: CodevLanguageServer, *args: Any) -> dict[str, Any]:
    """``codev.mcpApprove [name]``: as codev/mcpApprove."""
    return await ls.mcp_approve(parse_server_name(args, "codev.mcpApprove"))


@SERVER.command("codev.chat")
@_guard("codev.chat")
async def chat_command(ls: CodevLanguageServer, *args: Any) -> dict[str, Any]:
    """``codev.chat [prompt]``: as codev/chat."""
    return await ls.chat(parse_chat_args(args))


# ---------------------------------------------------------------------- logging, entry point


class _LspLogHandler(logging.Handler):
    """Forwards Codev's own log records to the editor as ``window/logMessage``."""

    _busy = threading.local()

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(self._busy, "on", False) or not SERVER.bridge.ready:
            return
        self._busy.on = True
        try:
            level = (
                "error"
                if record.levelno >= logging.ERROR
                else "warning"
                if record.levelno >= logging.WARNING
                else "info"
            )
            kind = {
                "error": types.MessageType.Error,
                "warning": types.MessageType.Warning,
                "info": types.MessageType.Info,
            }[level]
            SERVER.window_log_message(
                types.LogMessageParams(type=kind, message=self.format(record))
            )
        except Exception:
            pass
        finally:
            self._busy.on = False


class _ExpectedRequestErrors(logging.Filter):
    """pygls logs every error answer with a traceback; malformed params and cancelled
    requests are the client's business (they are in the answer): keep stderr readable."""

    _QUIET = frozenset({-32602, -32601, -32800, -32002})

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, JsonRpcException) and exc.code in self._QUIET:
            return logging.getLogger("codev_ls").isEnabledFor(logging.DEBUG)
        return True


def serve(tcp: tuple[str, int] | None = None) -> None:
    """Run the language server on stdio (or TCP, for debugging) until the editor leaves."""
    handler = _LspLogHandler()
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logging.getLogger("codev_ls").addHandler(handler)
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_ExpectedRequestErrors())
    if tcp is not None:
        SERVER.start_tcp(*tcp)
    else:
        SERVER.start_io()
    if SERVER.exit_code:
        raise SystemExit(SERVER.exit_code)

"""The JSON-RPC layer under the Codev server: pygls' LSP protocol, made sturdier.

- Custom methods' params and results stay plain JSON: pygls would turn them
  into namedtuples (renaming keyword-like keys), and a tool input holding a
  ``"jsonrpc"`` key would be taken for a message of its own, because pygls
  structures every object of a message through ``json.loads``' object hook.
  Here a message is structured once, whole, at the top.
- A request whose params do not fit its LSP type gets an ``InvalidParams``
  answer (pygls drops it unanswered, and the editor waits forever).
- ``workspace/executeCommand`` runs the command in the request's own task, so
  ``$/cancelRequest`` reaches it (pygls cancels only a wrapper), and hands it
  the request's ``workDoneToken``; the capabilities say commands report progress
  and list the ``codev/*`` methods under ``experimental.codev``.
"""

from __future__ import annotations

import contextvars
import logging
from typing import Any

import attrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.protocol import LanguageServerProtocol, default_converter, lsp_method
from pygls.protocol.json_rpc import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
)

log = logging.getLogger(__name__)

LIST_TOOLS = "codev/listTools"
RUN_TOOL = "codev/runTool"
PERMISSION_MODE = "codev/permissionMode"
CHAT = "codev/chat"
CANCEL = "codev/cancel"
CHAT_EVENT = "codev/chatEvent"
MCP_STATUS = "codev/mcpStatus"
MCP_APPROVE = "codev/mcpApprove"
EXPLAIN_PERMISSION = "codev/explainPermission"
CHANGES = "codev/changes"
UNDO_CHANGE = "codev/undoChange"
CUSTOM_METHODS = (
    LIST_TOOLS,
    RUN_TOOL,
    PERMISSION_MODE,
    CHAT,
    CANCEL,
    MCP_STATUS,
    MCP_APPROVE,
    EXPLAIN_PERMISSION,
    CHANGES,
    UNDO_CHANGE,
)
COMMANDS = (
    "codev.listTools",
    "codev.runTool",
    "codev.permissionMode",
    "codev.chat",
    "codev.mcpStatus",
    "codev.mcpApprove",
    "codev.changes",
    "codev.undoChange",
)

ProgressToken = int | str

_EXEC_PARAMS: contextvars.ContextVar[types.ExecuteCommandParams | None] = contextvars.ContextVar(
    "codev_execute_command_params", default=None
)


def _plain_message(obj: dict[str, Any], cls: type) -> Any:
    """Build a generic JSON-RPC message keeping ``params``/``result`` as plain JSON."""
    return cls(**{f.name: obj.get(f.name) for f in attrs.fields(cls)})


def make_converter() -> Any:
    """pygls' converter, but custom methods' params and results stay dicts."""
    converter = default_converter()
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(cls, _plain_message)
    return converter


class CodevProtocol(LanguageServerProtocol):
    """pygls' LSP protocol with sturdier message handling and an async executeCommand."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        # Used as json.loads' object_hook, i.e. for *every* object in a message: a tool
        # input holding a "jsonrpc" key must stay an object. Messages are structured
        # once, whole, in handle_message.
        return data

    def handle_message(self, message: Any) -> None:
        if isinstance(message, dict):
            try:
                message = super().structure_message(message)
            except JsonRpcException as exc:
                self._reply_malformed(message, exc)
                return
        if isinstance(message, dict) or not hasattr(message, "jsonrpc"):
            self._reply_malformed(
                message if isinstance(message, dict) else {},
                JsonRpcInvalidRequest("Invalid Request: not a JSON-RPC 2.0 message"),
            )
            return
        # pygls drops these two kinds of request unanswered; the editor would wait forever.
        if message.jsonrpc != "2.0":
            self._refuse(
                message, f'Invalid Request: "jsonrpc" must be "2.0", not {message.jsonrpc!r}'
            )
            return
        if self._shutdown and getattr(message, "method", None) != types.EXIT:
            self._refuse(message, "Invalid Request: the server is shutting down (after `shutdown`)")
            return
        super().handle_message(message)

    def _refuse(self, message: Any, text: str) -> None:
        """Answer a request (not a notification or response) with InvalidRequest."""
        msg_id, method = getattr(message, "id", None), getattr(message, "method", None)
        log.warning("refused %r: %s", method, text)
        if _is_id(msg_id) and method is not None:
            self._send_response(msg_id, error=JsonRpcInvalidRequest(text).to_response_error())

    def _reply_malformed(self, raw: dict[str, Any], exc: JsonRpcException) -> None:
        msg_id = raw.get("id")
        method = raw.get("method")
        cause = exc.__cause__
        detail = f" ({str(cause).splitlines()[0][:300]})" if cause else ""
        log.warning("malformed message %r: %s%s", method, exc.message, detail)
        if _is_id(msg_id) and method is not None:
            error = type(exc)(f"{exc.message}: the params of {method} are malformed{detail}")
            self._send_response(msg_id, error=error.to_response_error())

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Any:
        """pygls' initialize, then the capabilities pygls cannot express."""
        result = yield from super().lsp_initialize(params)
        from codev_ls.lsp_documents import use_lsp_documents

        use_lsp_documents(self._workspace)
        caps = result.capabilities
        if caps.execute_command_provider is not None:
            caps.execute_command_provider.work_done_progress = True
        caps.experimental = {
            "codev": {"version": 1, "methods": list(CUSTOM_METHODS), "commands": list(COMMANDS)}
        }
        return result

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    async def lsp_workspace__execute_command(self, params: types.ExecuteCommandParams) -> Any:
        """Run a command in this request's own task (so $/cancelRequest reaches it)."""
        handler = self.fm.commands.get(params.command)
        if handler is None:
            raise JsonRpcInvalidParams(
                f"Unknown command {params.command!r}; this server offers {', '.join(COMMANDS)}"
            )
        _EXEC_PARAMS.set(params)
        return await handler(*(params.arguments or ()))


def _is_id(value: Any) -> bool:
    return isinstance(value, int | str) and not isinstance(value, bool)


def current_command_token() -> ProgressToken | None:
    """The ``workDoneToken`` of the ``workspace/executeCommand`` being handled."""
    params = _EXEC_PARAMS.get()
    return params.work_done_token if params is not None else None

"""The ``codev/*`` requests' params and results, checked at the LSP boundary.

Params arrive as plain JSON (the server keeps custom params as dicts). Each
``parse_*`` function turns them into a small typed value or raises
:class:`InvalidParams` with a message naming what is wrong — the server
answers those with JSON-RPC ``InvalidParams`` (-32602). A request that is
well formed but names an unknown tool or a bad tool input is *not* an
InvalidParams: the engine answers it with an ``error`` outcome.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from codev_ls.chat import ChatRequest
    from codev_ls.engine.tool import Tool
    from codev_ls.permissions.types import PermissionMode

ProgressToken = int | str

# Longest id or name accepted (ids are echoed back in outcomes and logs).
_MAX_ID = 200


class InvalidParams(ValueError):
    """The request's params are malformed (answered with -32602)."""


@dataclass(slots=True)
class RunToolParams:
    name: str
    input: Any
    tool_use_id: str | None = None
    work_done_token: ProgressToken | None = None


@dataclass(slots=True)
class CancelParams:
    session_id: str | None = None
    tool_use_id: str | None = None


def _object(params: Any, method: str) -> dict[str, Any]:
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise InvalidParams(f"{method} takes an object as params, got {_kind(params)}")
    return params


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def _opt_id(data: dict[str, Any], key: str, method: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value or len(value) > _MAX_ID or "\x00" in value:
        raise InvalidParams(
            f"{method}: `{key}` must be a non-empty string of at most {_MAX_ID} characters"
        )
    return value


def _opt_token(data: dict[str, Any], method: str) -> ProgressToken | None:
    token = data.get("workDoneToken")
    if token is None:
        return None
    if isinstance(token, bool) or not isinstance(token, int | str):
        raise InvalidParams(f"{method}: `workDoneToken` must be a string or an integer")
    return token


def parse_run_tool(params: Any) -> RunToolParams:
    method = "codev/runTool"
    data = _object(params, method)
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise InvalidParams(f"{method}: `name` (the tool's name) is required and must be a string")
    if len(name) > _MAX_ID:
        raise InvalidParams(f"{method}: `name` is longer than {_MAX_ID} characters")
    return RunToolParams(
        name=name,
        # Any JSON: a non-object input is the tool's error (an outcome), not a malformed request.
        input=data.get("input", {}),
        tool_use_id=_opt_id(data, "toolUseId", method),
        work_done_token=_opt_token(data, method),
    )


def parse_run_tool_args(args: tuple[Any, ...]) -> RunToolParams:
    """``codev.runTool`` arguments: ``[name, input]`` (or one object like codev/runTool's)."""
    if len(args) == 1 and isinstance(args[0], dict):
        return parse_run_tool(args[0])
    if not 1 <= len(args) <= 2:
        raise InvalidParams(f"codev.runTool takes the arguments [name, input], got {len(args)}")
    return parse_run_tool({"name": args[0], "input": args[1] if len(args) > 1 else {}})


@dataclass(frozen=True, slots=True)
class ExplainParams:
    name: str
    input: Any
    mode: PermissionMode | None


def parse_explain(params: Any) -> ExplainParams:
    """``codev/explainPermission``: ``{name, input?, mode?}``."""
    method = "codev/explainPermission"
    data = _object(params, method)
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise InvalidParams(f"{method}: `name` (the tool's name) is required and must be a string")
    return ExplainParams(name, data.get("input", {}), check_mode(data.get("mode"), method))


def parse_mode_params(params: Any, method: str = "codev/permissionMode") -> PermissionMode | None:
    data = _object(params, method)
    return check_mode(data.get("mode"), method)


def check_mode(value: Any, method: str) -> PermissionMode | None:
    if value is None:
        return None
    from codev_ls.permissions.types import PERMISSION_MODES, parse_mode

    mode = parse_mode(value)
    if mode is None:
        raise InvalidParams(
            f"{method}: unknown permission mode {str(value)[:80]!r}; "
            f"choose one of {', '.join(PERMISSION_MODES)}"
        )
    return mode


def parse_mode_args(args: tuple[Any, ...]) -> PermissionMode | None:
    if len(args) > 1:
        raise InvalidParams(f"codev.permissionMode takes the arguments [mode], got {len(args)}")
    if args and isinstance(args[0], dict):
        return parse_mode_params(args[0], "codev.permissionMode")
    return check_mode(args[0] if args else None, "codev.permissionMode")


def parse_chat(params: Any, method: str = "codev/chat") -> ChatRequest:
    from codev_ls.chat import ChatRequest

    data = _object(params, method)
    prompt = data.get("prompt")
    if not isinstance(prompt, str):
        raise InvalidParams(f"{method}: `prompt` is required and must be a string")
    return ChatRequest(
        prompt=prompt,
        session_id=_opt_id(data, "sessionId", method),
        work_done_token=_opt_token(data, method),
    )


def parse_chat_args(args: tuple[Any, ...]) -> ChatRequest:
    if len(args) == 1 and isinstance(args[0], dict):
        return parse_chat(args[0], "codev.chat")
    if not 1 <= len(args) <= 2:
        raise InvalidParams(f"codev.chat takes the arguments [prompt], got {len(args)}")
    data: dict[str, Any] = {"prompt": args[0]}
    if len(args) > 1:
        data["sessionId"] = args[1]
    return parse_chat(data, "codev.chat")


def parse_cancel(params: Any) -> CancelParams:
    method = "codev/cancel"
    data = _object(params, method)
    return CancelParams(
        session_id=_opt_id(data, "sessionId", method),
        tool_use_id=_opt_id(data, "toolUseId", method),
    )


def parse_server_name(params: Any, method: str = "codev/mcpApprove") -> str:
    """``{"name": server}`` (or, from executeCommand, ``[server]``)."""
    if isinstance(params, (list, tuple)):
        if len(params) == 1 and isinstance(params[0], dict):
            params = params[0]
        elif len(params) == 1:
            params = {"name": params[0]}
        else:
            raise InvalidParams(f"{method} takes the arguments [name], got {len(params)}")
    data = _object(params, method)
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise InvalidParams(f"{method}: `name` (the MCP server's name) is required")
    if len(name) > _MAX_ID:
        raise InvalidParams(f"{method}: `name` is longer than {_MAX_ID} characters")
    return name


def parse_no_params(params: Any, method: str) -> None:
    _object(params, method)


# ---------------------------------------------------------------------- results


def tool_info(tool: Tool) -> dict[str, Any]:
    """PROTOCOL.md's ``ToolInfo``. Traits are asked without an input: a tool whose
    answer depends on the input says so by failing, and then the safe value is given."""
    return {
        "name": tool.name,
        "aliases": list(tool.aliases),
        "description": _safe(tool.description, ""),
        "searchHint": tool.search_hint,
        "inputSchema": _safe(tool.input_schema, {"type": "object"}),
        "readOnly": bool(_safe(lambda: tool.is_read_only(None), False)),
        "concurrencySafe": bool(_safe(lambda: tool.is_concurrency_safe(None), False)),
        "destructive": bool(_safe(lambda: tool.is_destructive(None), False)),
        "deferred": bool(tool.should_defer),
        "source": tool.source,
    }


def _safe(fn: Callable[[], Any], default: Any) -> Any:
    try:
        return fn()
    except Exception:
        return default

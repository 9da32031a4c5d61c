"""A fake of the Anthropic Messages API (``POST /v1/messages``), streaming only.

Speaks the documented wire format: SSE events ``message_start``,
``content_block_start`` (text / tool_use), ``content_block_delta``
(``text_delta``, ``input_json_delta``), ``content_block_stop``,
``message_delta`` (``stop_reason``, usage), ``message_stop``, ``ping`` and
``error``; HTTP errors as ``{"type": "error", "error": {"type", "message"}}``
with ``retry-after`` where the API sends it (429 rate_limit_error, 529
overloaded_error), 401 authentication_error for a wrong ``x-api-key``. Every
request body is checked against the public request schema
(:mod:`tests.fakes.api_schemas`); an invalid one gets the API's 400
invalid_request_error and is listed in ``problems``.
"""

from __future__ import annotations

import itertools
import json
import uuid
from typing import Any

from tests.fakes._http import SSE, Drop, Hold, HttpReply, Recorded, ScriptedServer, sse_frame
from tests.fakes.api_schemas import anthropic_request_problems

API_KEY = "sk-ant-test-key-0123456789"

_ids = itertools.count(1)


def _msg_id() -> str:
    return f"msg_{next(_ids):04d}{uuid.uuid4().hex[:8]}"


def tool_id() -> str:
    return f"toolu_{uuid.uuid4().hex[:20]}"


class FakeAnthropic(ScriptedServer):
    def __init__(self, api_key: str = API_KEY) -> None:
        super().__init__()
        self.api_key = api_key

    def auth_error(self, rec: Recorded) -> HttpReply | None:
        if rec.path.rstrip("/") != "/v1/messages":
            return HttpReply(
                404, _error("not_found_error", f"Not found: {rec.path}"), {"request-id": "req_x"}
            )
        if rec.headers.get("x-api-key") != self.api_key:
            return HttpReply(401, _error("authentication_error", "invalid x-api-key"))
        if not rec.headers.get("anthropic-version"):
            return HttpReply(400, _error("invalid_request_error", "anthropic-version required"))
        return None

    def validate(self, rec: Recorded) -> list[str]:
        return anthropic_request_problems(rec.body)

    def invalid_reply(self, problems: list[str]) -> HttpReply:
        return HttpReply(400, _error("invalid_request_error", "; ".join(problems)))

    def empty_reply(self) -> HttpReply:
        return HttpReply(500, _error("api_error", "fake: no scripted reply left"))


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


# --------------------------------------------------------------------------- replies


def rate_limited(retry_after: str | None = "0") -> HttpReply:
    headers = {"retry-after": retry_after} if retry_after is not None else {}
    return HttpReply(429, _error("rate_limit_error", "Number of requests exceeded"), headers)


def overloaded(retry_after: str | None = None) -> HttpReply:
    headers = {"retry-after": retry_after} if retry_after is not None else {}
    return HttpReply(529, _error("overloaded_error", "Overloaded"), headers)


def unauthorized() -> HttpReply:
    return HttpReply(401, _error("authentication_error", "invalid x-api-key"))


def reply(
    *parts: str | tuple[str, dict[str, Any]] | Hold | Drop,
    stop_reason: str | None = None,
    model: str = "claude-sonnet-4-5",
    usage: dict[str, int] | None = None,
    delay: float = 0.0,
    error: tuple[str, str] | None = None,
    ping: bool = True,
) -> SSE:
    """A streamed assistant message.

    ``parts`` in order: a ``str`` is a text block (streamed in a few deltas), a
    ``(name, input)`` pair a tool_use block (its JSON streamed in pieces), a
    ``Hold`` pauses the stream there, a ``Drop`` cuts it. ``error`` ends the
    stream with an ``error`` event instead of the message's end.
    """
    u = {
        "input_tokens": 25,
        "output_tokens": 1,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    if usage:
        u.update(usage)
    frames: list[str | Hold | Drop] = [
        sse_frame(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": _msg_id(),
                    "type": "message",
                    "role": "assistant",
                    "content": [],
                    "model": model,
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": u,
                },
            },
        )
    ]
    if ping:
        frames.append(sse_frame("ping", {"type": "ping"}))
    has_tools = False
    index = 0
    for part in parts:
        if isinstance(part, Hold | Drop):
            frames.append(part)
            continue
        if isinstance(part, str):
            frames.append(
                sse_frame(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
            )
            for chunk in _chunks(part, 3):
                frames.append(
                    sse_frame(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": "text_delta", "text": chunk},
                        },
                    )
                )
        else:
            has_tools = True
            name, tool_input = part
            tool_input = dict(tool_input) if isinstance(tool_input, dict) else tool_input
            uid = tool_input.pop("__id__", None) if isinstance(tool_input, dict) else None
            frames.append(
                sse_frame(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {
                            "type": "tool_use",
                            "id": uid or tool_id(),
                            "name": name,
                            "input": {},
                        },
                    },
                )
            )
            raw = tool_input if isinstance(tool_input, str) else json.dumps(tool_input)
            frames.append(
                sse_frame(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": ""},
                    },
                )
            )
            for chunk in _chunks(raw, 3):
                frames.append(
                    sse_frame(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": "input_json_delta", "partial_json": chunk},
                        },
                    )
                )
        frames.append(
            sse_frame("content_block_stop", {"type": "content_block_stop", "index": index})
        )
        index += 1
    if error is not None:
        frames.append(sse_frame("error", _error(*error)))
        return SSE(frames, delay=delay)
    frames.append(
        sse_frame(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": stop_reason or ("tool_use" if has_tools else "end_turn"),
                    "stop_sequence": None,
                },
                "usage": {"output_tokens": 15},
            },
        )
    )
    frames.append(sse_frame("message_stop", {"type": "message_stop"}))
    return SSE(frames, delay=delay)


def _chunks(text: str, n: int) -> list[str]:
    if not text:
        return []
    size = max(1, -(-len(text) // n))
    return [text[i : i + size] for i in range(0, len(text), size)]


# --------------------------------------------------------------------------- reading requests


def last_user_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    content = body["messages"][-1]["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def tool_results(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The tool_result blocks of the last message, by tool_use id."""
    return {b["tool_use_id"]: b for b in last_user_blocks(body) if b.get("type") == "tool_result"}


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content", "")
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["name"] for t in body.get("tools", [])]


def system_text(body: dict[str, Any]) -> str:
    system = body.get("system", "")
    return system if isinstance(system, str) else "".join(b["text"] for b in system)

"""A fake of the OpenAI Chat Completions API (``POST /v1/chat/completions``), streaming.

Speaks the documented wire format: ``data: {"object": "chat.completion.chunk",
"choices": [{"index": 0, "delta": {"role", "content" | "tool_calls": [{"index",
"id", "type", "function": {"name", "arguments"}}]}, "finish_reason"}]}`` frames,
a usage chunk (``choices: []``) when ``stream_options.include_usage`` is asked,
then ``data: [DONE]``. Errors are ``{"error": {"message", "type", "param",
"code"}}`` with the HTTP status (429 with ``retry-after``, 401
invalid_api_key); a mid-stream error is a ``data: {"error": {...}}`` frame.
Request bodies are checked against the public schema.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from tests.fakes._http import SSE, Drop, Hold, HttpReply, Recorded, ScriptedServer, sse_frame
from tests.fakes.api_schemas import openai_request_problems

API_KEY = "sk-openai-test-key-0123456789"


class FakeOpenAI(ScriptedServer):
    def __init__(self, api_key: str = API_KEY) -> None:
        super().__init__()
        self.api_key = api_key

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def auth_error(self, rec: Recorded) -> HttpReply | None:
        if rec.path.rstrip("/") != "/v1/chat/completions":
            return HttpReply(404, _error("invalid_request_error", f"Unknown path {rec.path}"))
        if rec.headers.get("authorization") != f"Bearer {self.api_key}":
            return unauthorized()
        return None

    def validate(self, rec: Recorded) -> list[str]:
        return openai_request_problems(rec.body)

    def invalid_reply(self, problems: list[str]) -> HttpReply:
        return HttpReply(400, _error("invalid_request_error", "; ".join(problems)))

    def empty_reply(self) -> HttpReply:
        return HttpReply(500, _error("server_error", "fake: no scripted reply left"))


def _error(kind: str, message: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def rate_limited(retry_after: str | None = "0") -> HttpReply:
    headers = {"retry-after": retry_after} if retry_after is not None else {}
    return HttpReply(429, _error("requests", "Rate limit reached", "rate_limit_exceeded"), headers)


def server_error(status: int = 503) -> HttpReply:
    return HttpReply(status, _error("server_error", "The server is overloaded"))


def unauthorized() -> HttpReply:
    return HttpReply(
        401,
        _error(
            "invalid_request_error",
            "Incorrect API key provided: sk-wron*****************1234.",
            "invalid_api_key",
        ),
    )


def reply(
    *parts: str | tuple[str, dict[str, Any]] | Hold | Drop,
    finish_reason: str | None = None,
    usage: bool = True,
    delay: float = 0.0,
    error: str | None = None,
    model: str = "gpt-test",
) -> SSE:
    """A streamed assistant message: text ``str`` parts, ``(name, input)`` tool calls."""
    cid = f"chatcmpl-{uuid.uuid4().hex[:12]}"
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        return sse_frame(
            None,
            {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [
                    {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
                ],
            },
        )

    frames: list[str | Hold | Drop] = [chunk({"role": "assistant", "content": ""})]
    tool_index = 0
    for part in parts:
        if isinstance(part, Hold | Drop):
            frames.append(part)
        elif isinstance(part, str):
            size = max(1, -(-len(part) // 3))
            for i in range(0, len(part), size):
                frames.append(chunk({"content": part[i : i + size]}))
        else:
            name, tool_input = part
            tool_input = dict(tool_input)
            call_id = tool_input.pop("__id__", None) or f"call_{uuid.uuid4().hex[:20]}"
            args = json.dumps(tool_input)
            frames.append(
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": tool_index,
                                "id": call_id,
                                "type": "function",
                                "function": {"name": name, "arguments": ""},
                            }
                        ]
                    }
                )
            )
            size = max(1, -(-len(args) // 3))
            for i in range(0, len(args), size):
                frames.append(
                    chunk(
                        {
                            "tool_calls": [
                                {"index": tool_index, "function": {"arguments": args[i : i + size]}}
                            ]
                        }
                    )
                )
            tool_index += 1
    if error is not None:
        frames.append(sse_frame(None, _error("server_error", error)))
        return SSE(frames, delay=delay)
    frames.append(chunk({}, finish_reason or ("tool_calls" if tool_index else "stop")))
    if usage:
        frames.append(
            sse_frame(
                None,
                {
                    "id": cid,
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": model,
                    "choices": [],
                    "usage": {"prompt_tokens": 30, "completion_tokens": 12, "total_tokens": 42},
                },
            )
        )
    frames.append("data: [DONE]\n\n")
    return SSE(frames, delay=delay)


def tool_messages(body: dict[str, Any]) -> dict[str, str]:
    """Tool messages after the last assistant message with tool calls, by tool_call_id."""
    messages = body["messages"]
    last = max(
        (i for i, m in enumerate(messages) if m["role"] == "assistant" and m.get("tool_calls")),
        default=len(messages),
    )
    return {m["tool_call_id"]: m["content"] for m in messages[last + 1 :] if m["role"] == "tool"}


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]

"""A fake of the OpenAI Chat Completions API (``POST /v1/chat/completions``), streaming.

Speaks the documented wire format: ``data: {"object": "chat.completion.chunk",
"choices": [{"index": 0, "delta": {"role", "content" | "tool_calls": [{"index",
"id", "type", "function": {"name", "arguments"}}]}, "finish_reason"}]}`` frames,
then ``data: [DONE]``. Usage follows the request, as the API reference says:
only when ``stream_options.include_usage`` is true, every chunk carries
``"usage": null`` and one last chunk (``choices: []``) the ``usage``; without
it no chunk has a ``usage`` field. A scripted reply is therefore rendered
per request (:class:`ChunkStream`). Errors are ``{"error": {"message", "type", "param",
"code"}}`` with the HTTP status (429 with ``retry-after``, 401
invalid_api_key); a mid-stream error is a ``data: {"error": {...}}`` frame.
Request bodies are checked against the public schema.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from tests.fakes._http import SSE, Drop, Hold, HttpReply, Recorded, ScriptedServer, sse_frame
from tests.fakes.api_schemas import openai_request_problems

API_KEY = "sk-openai-test-key-0123456789"


@dataclass
class ChunkStream(SSE):
    """A scripted stream whose chunks (dicts) are rendered for the request that gets it.

    ``usage`` is what the server reports when the request asks for it (None: a
    server that never reports usage).
    """

    usage: dict[str, Any] | None = None
    # The id, created and model of the usage chunk (the same as the other chunks').
    meta: dict[str, Any] = field(default_factory=dict)

    def render(self, include_usage: bool) -> SSE:
        frames: list[str | Hold | Drop] = []
        for frame in self.frames:
            if isinstance(frame, dict):
                chunk = {**frame, "usage": None} if include_usage else frame
                frames.append(sse_frame(None, chunk))
            else:
                frames.append(frame)
        if frames and frames[-1] == DONE:
            frames.pop()
            if include_usage and self.usage is not None:
                chunk = {**self.meta, "choices": [], "usage": self.usage}
                frames.append(sse_frame(None, chunk))
            frames.append(DONE)
        return SSE(frames, delay=self.delay, headers=self.headers)


DONE = "data: [DONE]\n\n"


class FakeOpenAI(ScriptedServer):
    def __init__(self, api_key: str = API_KEY) -> None:
        super().__init__()
        self.api_key = api_key

    def _next(self, rec: Recorded) -> HttpReply | SSE:
        reply = super()._next(rec)
        if isinstance(reply, ChunkStream):
            options = rec.body.get("stream_options") if isinstance(rec.body, dict) else None
            include = isinstance(options, dict) and options.get("include_usage") is True
            return reply.render(include)
        return reply

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
) -> ChunkStream:
    """A streamed assistant message: text ``str`` parts, ``(name, input)`` tool calls.

    ``usage=False``: a server that sends no usage chunk even when asked.
    """
    cid = f"chatcmpl-{uuid.uuid4().hex[:12]}"
    created = int(time.time())
    meta = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            **meta,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }

    frames: list[Any] = [chunk({"role": "assistant", "content": ""})]
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
        return ChunkStream(frames, delay=delay)
    frames.append(chunk({}, finish_reason or ("tool_calls" if tool_index else "stop")))
    frames.append(DONE)
    return ChunkStream(
        frames,
        delay=delay,
        usage={"prompt_tokens": 30, "completion_tokens": 12, "total_tokens": 42} if usage else None,
        meta=meta,
    )


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

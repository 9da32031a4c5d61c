"""OpenAI-compatible Chat Completions, streaming tool calls, through the official ``openai`` SDK.

Works with OpenAI and with the many servers that speak the same API (Ollama,
vLLM, DeepSeek, Qwen...). History is kept in the Anthropic block shape; this
module converts it: ``tool_use`` blocks become ``tool_calls``, each
``tool_result`` a ``{"role": "tool", "tool_call_id"}`` message.

Images: Chat Completions takes images only in *user* messages (``tool``
messages hold text), as ``{"type": "image_url", "image_url": {"url":
"data:<mime>;base64,..."}}`` content parts. So a tool result's images (Read of
a picture, an MCP tool's screenshot) are moved into one user message right
after that round's tool messages, and the tool message says where they went.
Text-only servers (many local models) refuse image parts:
``CODEV_OPENAI_IMAGES=0`` replaces them by a note instead.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

from codev_ls.model.config import ModelConfig
from codev_ls.model.errors import ModelRetryableError
from codev_ls.model.providers.anthropic import INVALID_JSON_KEY, parse_tool_input
from codev_ls.model.providers.base import map_sdk_error
from codev_ls.model.types import (
    Block,
    Message,
    MessageComplete,
    ModelRequest,
    StreamEvent,
    TextDelta,
    ToolUseStart,
    Usage,
)

FINISH_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


class OpenAIProvider:
    def __init__(self, config: ModelConfig) -> None:
        self.config = config
        self._client: Any = None
        self.label = "the OpenAI API" if not config.base_url else "the OpenAI-compatible endpoint"

    def _get_client(self) -> Any:
        if self._client is None:
            import httpx
            import openai

            self._client = openai.AsyncOpenAI(
                api_key=self.config.api_key,
                base_url=self.config.base_url,
                max_retries=0,
                timeout=httpx.Timeout(self.config.timeout, connect=self.config.connect_timeout),
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": request.model,
            "messages": to_openai_messages(
                request.system, request.messages, images=self.config.openai_images
            ),
        }
        # OpenAI itself wants max_completion_tokens; compatible servers know max_tokens.
        key = "max_tokens" if self.config.base_url else "max_completion_tokens"
        params[key] = request.max_tokens
        if request.tools:
            params["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.input_schema,
                    },
                }
                for t in sorted(request.tools, key=lambda t: t.name)
            ]
        if self.config.stream_usage:
            params["stream_options"] = {"include_usage": True}
        return params

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        client = self._get_client()
        params = self.build_params(request)
        try:
            stream = await client.chat.completions.create(**params, stream=True)
        except Exception as exc:
            raise map_sdk_error(exc, self.label, "OPENAI_API_KEY", self.config.api_key) from exc
        text_parts: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        finish: str | None = None
        usage = Usage()
        try:
            async for chunk in stream:
                if getattr(chunk, "usage", None) is not None:
                    u = chunk.usage
                    cached = 0
                    details = getattr(u, "prompt_tokens_details", None)
                    if details is not None:
                        cached = getattr(details, "cached_tokens", 0) or 0
                    usage.input_tokens = (u.prompt_tokens or 0) - cached
                    usage.cache_read_input_tokens = cached
                    usage.output_tokens = u.completion_tokens or 0
                for choice in chunk.choices or []:
                    delta = choice.delta
                    if delta is not None:
                        if delta.content:
                            text_parts.append(delta.content)
                            yield TextDelta(delta.content)
                        for tc in delta.tool_calls or []:
                            idx = tc.index if tc.index is not None else len(calls)
                            call = calls.get(idx)
                            if call is None:
                                call = calls[idx] = {"id": "", "name": "", "arguments": ""}
                            if tc.id:
                                call["id"] = tc.id
                            fn = tc.function
                            if fn is not None:
                                if fn.name:
                                    call["name"] += fn.name
                                if fn.arguments:
                                    call["arguments"] += fn.arguments
                            if call["name"] and not call.get("announced"):
                                call["announced"] = True
                                call["id"] = call["id"] or f"call_{uuid.uuid4().hex[:24]}"
                                yield ToolUseStart(call["id"], call["name"])
                    if choice.finish_reason:
                        finish = choice.finish_reason
        except Exception as exc:
            raise map_sdk_error(exc, self.label, "OPENAI_API_KEY", self.config.api_key) from exc
        finally:
            await stream.close()
        if finish is None:
            raise ModelRetryableError(
                f"The connection to {self.label} was closed before the answer was complete.",
                kind="incomplete_stream",
            )
        content: list[Block] = []
        text = "".join(text_parts)
        if text:
            content.append({"type": "text", "text": text})
        for idx in sorted(calls):
            call = calls[idx]
            content.append(
                {
                    "type": "tool_use",
                    "id": call["id"] or f"call_{uuid.uuid4().hex[:24]}",
                    "name": call["name"],
                    "input": parse_tool_input(call["arguments"]),
                }
            )
        stop = FINISH_REASONS.get(finish or "stop", "other")
        if calls and stop == "end_turn":
            stop = "tool_use"
        yield MessageComplete(content, stop, usage)


TEXT_ONLY_NOTE = "[image omitted: images are turned off for this endpoint (CODEV_OPENAI_IMAGES=0)]"


def image_part(block: Block) -> dict[str, Any] | None:
    """An Anthropic ``image`` block as a Chat Completions ``image_url`` part (None: no image)."""
    source = block.get("source") or {}
    if source.get("type") == "base64" and source.get("data"):
        media = source.get("media_type") or "image/png"
        url = f"data:{media};base64,{source['data']}"
    elif source.get("type") == "url" and source.get("url"):
        url = str(source["url"])
    else:
        return None
    return {"type": "image_url", "image_url": {"url": url}}


class _Images:
    """Image parts collected from one user message, to send after its tool messages."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.parts: list[dict[str, Any]] = []
        self.count = 0

    def add(self, block: Block, label: str | None = None) -> bool:
        """Keep ``block``'s image (when images are on and it has a usable source)."""
        part = image_part(block) if self.enabled else None
        if part is None:
            return False
        self.count += 1
        if label:
            self.parts.append({"type": "text", "text": f"Image {self.count} ({label}):"})
        self.parts.append(part)
        return True

    def stand_in(self, block: Block, owner: str) -> str:
        """The text in place of a non-text block of a tool result (its image moved on)."""
        kind = str(block.get("type"))
        if kind != "image":
            return f"[{kind} omitted]"
        if not self.enabled:
            return TEXT_ONLY_NOTE
        if self.add(block, owner):
            return f"[image {self.count}: sent in the next user message]"
        return "[image omitted: its source could not be sent]"


def _text_of(content: Any, images: _Images, owner: str) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for b in content or []:
        if b.get("type") == "text":
            parts.append(str(b.get("text", "")))
        else:
            parts.append(images.stand_in(b, owner))
    return "\n".join(parts)


def to_openai_messages(
    system: str, messages: list[Message], *, images: bool = True
) -> list[dict[str, Any]]:
    """History (Anthropic block shape) as Chat Completions messages.

    ``images=False`` (text-only servers) replaces every image by a note.
    """
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    for msg in messages:
        content = msg["content"]
        if isinstance(content, str):
            out.append({"role": msg["role"], "content": content})
            continue
        if msg["role"] == "assistant":
            text = "".join(b.get("text", "") for b in content if b.get("type") == "text")
            calls = [
                {
                    "id": b["id"],
                    "type": "function",
                    "function": {
                        "name": b["name"],
                        "arguments": json.dumps(
                            {} if INVALID_JSON_KEY in b.get("input", {}) else b.get("input", {}),
                            ensure_ascii=False,
                        ),
                    },
                }
                for b in content
                if b.get("type") == "tool_use"
            ]
            item: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                item["tool_calls"] = calls
            if text or calls:
                out.append(item)
            continue
        collected = _Images(images)
        texts: list[str] = []
        for b in content:
            kind = b.get("type")
            if kind == "tool_result":
                owner = f"from the result of tool call {b['tool_use_id']}"
                body = _text_of(b.get("content", ""), collected, owner) or "(no output)"
                if b.get("is_error"):
                    body = f"Error: {body}"
                out.append({"role": "tool", "tool_call_id": b["tool_use_id"], "content": body})
            elif kind == "text":
                if str(b.get("text", "")).strip():
                    texts.append(str(b["text"]))
            elif kind == "image" and collected.add(b):
                continue
            else:
                texts.append(collected.stand_in(b, "from the user"))
        # After the tool messages: Chat Completions wants each tool call answered first.
        if collected.parts:
            parts = list(collected.parts)
            if texts:
                parts.append({"type": "text", "text": "\n\n".join(texts)})
            out.append({"role": "user", "content": parts})
        elif texts:
            out.append({"role": "user", "content": "\n\n".join(texts)})
    return out

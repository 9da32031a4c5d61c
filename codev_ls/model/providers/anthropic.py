"""The Anthropic Messages API, streaming, through the official ``anthropic`` SDK.

Prompt caching: the system prompt, the tool list (sent sorted by name, so it
is byte-stable between turns) and the last message each carry a
``cache_control: {"type": "ephemeral"}`` marker — three of the four
breakpoints the API allows.
"""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator
from typing import Any

from codev_ls.model.config import ModelConfig
from codev_ls.model.errors import ModelRetryableError
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

CACHE_MARKER = {"type": "ephemeral"}
INVALID_JSON_KEY = "__codev_invalid_json__"


class AnthropicProvider:
    label = "the Anthropic API"

    def __init__(self, config: ModelConfig) -> None:
        self.config = config
        self._client: Any = None

    def _get_client(self) -> Any:
        if self._client is None:
            import anthropic
            import httpx

            self._client = anthropic.AsyncAnthropic(
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

    # ---------------------------------------------------------------- request

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        """The request body (without ``stream``) as the Messages API takes it."""
        params: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens,
            "messages": prepare_messages(request.messages, cache=request.cache),
        }
        if request.system:
            system: dict[str, Any] = {"type": "text", "text": request.system}
            if request.cache:
                system["cache_control"] = dict(CACHE_MARKER)
            params["system"] = [system]
        if request.tools:
            tools = [
                {"name": t.name, "description": t.description, "input_schema": t.input_schema}
                for t in sorted(request.tools, key=lambda t: t.name)
            ]
            if request.cache:
                tools[-1]["cache_control"] = dict(CACHE_MARKER)
            params["tools"] = tools
        return params

    # ---------------------------------------------------------------- stream

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        client = self._get_client()
        params = self.build_params(request)
        try:
            stream = await client.messages.create(**params, stream=True)
        except Exception as exc:
            raise map_sdk_error(exc, self.label, "ANTHROPIC_API_KEY", self.config.api_key) from exc
        blocks: dict[int, Block] = {}
        partial_json: dict[int, str] = {}
        usage = Usage()
        stop_reason = "end_turn"
        complete = False
        try:
            async for event in stream:
                kind = event.type
                if kind == "message_start":
                    u = event.message.usage
                    usage.input_tokens = u.input_tokens or 0
                    usage.cache_creation_input_tokens = (
                        getattr(u, "cache_creation_input_tokens", 0) or 0
                    )
                    usage.cache_read_input_tokens = getattr(u, "cache_read_input_tokens", 0) or 0
                    usage.output_tokens = u.output_tokens or 0
                elif kind == "content_block_start":
                    cb = event.content_block
                    if cb.type == "text":
                        blocks[event.index] = {"type": "text", "text": cb.text or ""}
                        if cb.text:
                            yield TextDelta(cb.text)
                    elif cb.type == "tool_use":
                        blocks[event.index] = {
                            "type": "tool_use",
                            "id": cb.id,
                            "name": cb.name,
                            "input": {},
                        }
                        partial_json[event.index] = ""
                        yield ToolUseStart(cb.id, cb.name)
                elif kind == "content_block_delta":
                    delta = event.delta
                    block = blocks.get(event.index)
                    if block is None:
                        continue
                    if delta.type == "text_delta":
                        block["text"] += delta.text
                        yield TextDelta(delta.text)
                    elif delta.type == "input_json_delta":
                        partial_json[event.index] += delta.partial_json
                elif kind == "content_block_stop":
                    block = blocks.get(event.index)
                    if block is not None and block["type"] == "tool_use":
                        block["input"] = parse_tool_input(partial_json.pop(event.index, ""))
                elif kind == "message_delta":
                    if event.delta.stop_reason:
                        stop_reason = event.delta.stop_reason
                    if event.usage is not None and event.usage.output_tokens is not None:
                        usage.output_tokens = event.usage.output_tokens
                elif kind == "message_stop":
                    complete = True
                    break
        except Exception as exc:
            raise map_sdk_error(exc, self.label, "ANTHROPIC_API_KEY", self.config.api_key) from exc
        finally:
            await stream.close()
        if not complete:
            raise ModelRetryableError(
                f"The connection to {self.label} was closed before the answer was complete.",
                kind="incomplete_stream",
            )
        content = [
            blocks[i]
            for i in sorted(blocks)
            if not (blocks[i]["type"] == "text" and not blocks[i]["text"])
        ]
        yield MessageComplete(content, stop_reason, usage)


def parse_tool_input(raw: str) -> dict[str, Any]:
    """A tool_use input from its streamed JSON; invalid JSON is kept for an error outcome."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return {INVALID_JSON_KEY: raw}
    return value if isinstance(value, dict) else {INVALID_JSON_KEY: raw}


def prepare_messages(messages: list[Message], *, cache: bool) -> list[Message]:
    """History as the API takes it: content as blocks, roles alternating, a cache marker last."""
    out: list[Message] = []
    for msg in messages:
        content = msg["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        blocks = [_clean_block(b) for b in blocks if not _empty_text(b)]
        if not blocks:
            continue
        if out and out[-1]["role"] == msg["role"]:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": msg["role"], "content": blocks})
    for msg in out:
        # tool_result blocks must come first in a user message.
        if msg["role"] == "user":
            results = [b for b in msg["content"] if b.get("type") == "tool_result"]
            others = [b for b in msg["content"] if b.get("type") != "tool_result"]
            msg["content"] = results + others
    if cache and out and out[-1]["content"]:
        out[-1]["content"][-1]["cache_control"] = dict(CACHE_MARKER)
    return out


def _empty_text(block: Block) -> bool:
    return block.get("type") == "text" and not str(block.get("text", "")).strip()


def _clean_block(block: Block) -> Block:
    block = copy.deepcopy(block)
    block.pop("cache_control", None)
    if block.get("type") == "tool_use" and INVALID_JSON_KEY in block.get("input", {}):
        block["input"] = {}
    if block.get("type") == "tool_result" and block.get("content") == "":
        block["content"] = "(no output)"
    return block

"""Request-body checks for the model API fakes, after the public API references.

JSON Schemas cover the shapes (Anthropic Messages ``POST /v1/messages``: tools
with ``name``/``description``/``input_schema``, content blocks, ``cache_control:
{"type": "ephemeral"}``; OpenAI Chat Completions ``POST /chat/completions``:
``tools`` of ``{"type": "function", "function": {...}}``, messages by role), and
a few rules no schema can say: each ``tool_use`` answered by a ``tool_result``
with its id in the very next user message (tool results first), at most four
cache breakpoints, each OpenAI ``tool_calls`` id answered by a ``tool`` message
before the next turn, ``arguments`` being JSON text, images only in user
messages as ``image_url`` parts whose data URLs hold base64 PNG/JPEG/GIF/WEBP.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

import jsonschema

TOOL_NAME = r"^[a-zA-Z0-9_-]{1,128}$"

_CACHE = {
    "type": "object",
    "properties": {"type": {"const": "ephemeral"}, "ttl": {"enum": ["5m", "1h"]}},
    "required": ["type"],
    "additionalProperties": False,
}

_TEXT = {
    "type": "object",
    "properties": {
        "type": {"const": "text"},
        "text": {"type": "string", "minLength": 1},
        "cache_control": _CACHE,
        "citations": {},
    },
    "required": ["type", "text"],
    "additionalProperties": False,
}

_IMAGE = {
    "type": "object",
    "properties": {
        "type": {"const": "image"},
        "source": {"type": "object", "required": ["type"]},
        "cache_control": _CACHE,
    },
    "required": ["type", "source"],
    "additionalProperties": False,
}

_TOOL_USE = {
    "type": "object",
    "properties": {
        "type": {"const": "tool_use"},
        "id": {"type": "string", "pattern": r"^[a-zA-Z0-9_-]+$"},
        "name": {"type": "string", "pattern": TOOL_NAME},
        "input": {"type": "object"},
        "cache_control": _CACHE,
    },
    "required": ["type", "id", "name", "input"],
    "additionalProperties": False,
}

_TOOL_RESULT = {
    "type": "object",
    "properties": {
        "type": {"const": "tool_result"},
        "tool_use_id": {"type": "string"},
        "content": {
            "anyOf": [
                {"type": "string"},
                {"type": "array", "items": {"anyOf": [_TEXT, _IMAGE]}},
            ]
        },
        "is_error": {"type": "boolean"},
        "cache_control": _CACHE,
    },
    "required": ["type", "tool_use_id"],
    "additionalProperties": False,
}

ANTHROPIC_REQUEST = {
    "type": "object",
    "properties": {
        "model": {"type": "string", "minLength": 1},
        "max_tokens": {"type": "integer", "minimum": 1},
        "stream": {"type": "boolean"},
        "system": {
            "anyOf": [{"type": "string"}, {"type": "array", "items": _TEXT}],
        },
        "messages": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "role": {"enum": ["user", "assistant"]},
                    "content": {
                        "anyOf": [
                            {"type": "string", "minLength": 1},
                            {
                                "type": "array",
                                "items": {"anyOf": [_TEXT, _IMAGE, _TOOL_USE, _TOOL_RESULT]},
                            },
                        ]
                    },
                },
                "required": ["role", "content"],
                "additionalProperties": False,
            },
        },
        "tools": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "pattern": TOOL_NAME},
                    "description": {"type": "string"},
                    "input_schema": {
                        "type": "object",
                        "properties": {"type": {"const": "object"}},
                        "required": ["type"],
                    },
                    "cache_control": _CACHE,
                },
                "required": ["name", "input_schema"],
                "additionalProperties": False,
            },
        },
        "tool_choice": {"type": "object"},
        "temperature": {"type": "number"},
        "metadata": {"type": "object"},
        "stop_sequences": {"type": "array"},
    },
    "required": ["model", "max_tokens", "messages"],
    "additionalProperties": False,
}


def _schema_problems(schema: dict[str, Any], body: Any) -> list[str]:
    validator = jsonschema.Draft202012Validator(schema)
    problems = []
    for err in sorted(validator.iter_errors(body), key=lambda e: list(e.absolute_path))[:10]:
        where = "/".join(str(p) for p in err.absolute_path) or "(body)"
        problems.append(f"{where}: {err.message[:300]}")
    return problems


def anthropic_request_problems(body: Any) -> list[str]:
    """What is wrong with a Messages API request body (empty when it is valid)."""
    problems = _schema_problems(ANTHROPIC_REQUEST, body)
    if problems:
        return problems
    # Tool names unique.
    names = [t["name"] for t in body.get("tools", [])]
    if len(names) != len(set(names)):
        problems.append("tools: tool names must be unique")
    # Input schemas must themselves be valid JSON Schemas.
    for tool in body.get("tools", []):
        try:
            jsonschema.Draft202012Validator.check_schema(tool["input_schema"])
        except jsonschema.SchemaError as exc:
            problems.append(f"tools/{tool['name']}: invalid input_schema: {exc.message}")
    # At most 4 cache breakpoints.
    marks = 0
    system = body.get("system")
    if isinstance(system, list):
        marks += sum(1 for b in system if "cache_control" in b)
    marks += sum(1 for t in body.get("tools", []) if "cache_control" in t)
    for msg in body["messages"]:
        if isinstance(msg["content"], list):
            marks += sum(1 for b in msg["content"] if "cache_control" in b)
    if marks > 4:
        problems.append(f"A maximum of 4 blocks with cache_control may be provided. Found {marks}.")
    # Conversation rules.
    messages = body["messages"]
    if messages[0]["role"] != "user":
        problems.append("messages: the first message must use the user role")
    seen_ids: set[str] = set()
    for i, msg in enumerate(messages):
        blocks = msg["content"] if isinstance(msg["content"], list) else []
        if not blocks and not isinstance(msg["content"], str):
            problems.append(f"messages/{i}: content must not be empty")
        if msg["role"] == "assistant":
            if any(b["type"] == "tool_result" for b in blocks):
                problems.append(f"messages/{i}: tool_result blocks belong in user messages")
            uses = [b["id"] for b in blocks if b["type"] == "tool_use"]
            for uid in uses:
                if uid in seen_ids:
                    problems.append(f"messages/{i}: tool_use id {uid} is not unique")
                seen_ids.add(uid)
            if uses:
                nxt = messages[i + 1] if i + 1 < len(messages) else None
                if nxt is None or nxt["role"] != "user" or isinstance(nxt["content"], str):
                    problems.append(
                        f"messages/{i}: tool_use ids {uses} were found without tool_result "
                        "blocks immediately after"
                    )
                    continue
                nblocks = nxt["content"]
                results = [b["tool_use_id"] for b in nblocks if b["type"] == "tool_result"]
                missing = [u for u in uses if u not in results]
                if missing:
                    problems.append(
                        f"messages/{i + 1}: tool_use ids {missing} have no tool_result "
                        "in the next message"
                    )
                first_other = next(
                    (k for k, b in enumerate(nblocks) if b["type"] != "tool_result"), len(nblocks)
                )
                if any(b["type"] == "tool_result" for b in nblocks[first_other:]):
                    problems.append(f"messages/{i + 1}: tool_result blocks must come first")
        else:
            results = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
            if results:
                prev = messages[i - 1] if i > 0 else None
                prev_blocks = prev["content"] if prev and isinstance(prev["content"], list) else []
                prev_ids = {b["id"] for b in prev_blocks if b["type"] == "tool_use"}
                stray = [r for r in results if r not in prev_ids]
                if prev is None or prev["role"] != "assistant" or stray:
                    problems.append(
                        f"messages/{i}: unexpected tool_use_id found in tool_result blocks: "
                        f"{stray or results}. Each tool_result block must have a corresponding "
                        "tool_use block in the previous message."
                    )
    return problems


# Chat Completions content parts (ChatCompletionRequestUserMessageContentPart).
_OA_TEXT_PART = {
    "type": "object",
    "properties": {"type": {"const": "text"}, "text": {"type": "string"}},
    "required": ["type", "text"],
    "additionalProperties": False,
}

_OA_IMAGE_PART = {
    "type": "object",
    "properties": {
        "type": {"const": "image_url"},
        "image_url": {
            "type": "object",
            "properties": {
                "url": {"type": "string", "minLength": 1},
                "detail": {"enum": ["auto", "low", "high"]},
            },
            "required": ["url"],
            "additionalProperties": False,
        },
    },
    "required": ["type", "image_url"],
    "additionalProperties": False,
}

_OA_AUDIO_PART = {
    "type": "object",
    "properties": {
        "type": {"const": "input_audio"},
        "input_audio": {
            "type": "object",
            "properties": {"data": {"type": "string"}, "format": {"enum": ["wav", "mp3"]}},
            "required": ["data", "format"],
            "additionalProperties": False,
        },
    },
    "required": ["type", "input_audio"],
    "additionalProperties": False,
}

_OA_FILE_PART = {
    "type": "object",
    "properties": {
        "type": {"const": "file"},
        "file": {
            "type": "object",
            "properties": {
                "file_data": {"type": "string"},
                "file_id": {"type": "string"},
                "filename": {"type": "string"},
            },
            "additionalProperties": False,
        },
    },
    "required": ["type", "file"],
    "additionalProperties": False,
}

# The image types the vision models take (PNG, JPEG, WEBP, non-animated GIF).
OPENAI_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")

OPENAI_REQUEST = {
    "type": "object",
    "properties": {
        "model": {"type": "string", "minLength": 1},
        "stream": {"type": "boolean"},
        "stream_options": {
            "type": "object",
            "properties": {"include_usage": {"type": "boolean"}},
            "additionalProperties": False,
        },
        "max_tokens": {"type": "integer", "minimum": 1},
        "max_completion_tokens": {"type": "integer", "minimum": 1},
        "temperature": {"type": "number"},
        "tool_choice": {},
        "parallel_tool_calls": {"type": "boolean"},
        "messages": {
            "type": "array",
            "minItems": 1,
            "items": {
                "oneOf": [
                    {
                        "type": "object",
                        "properties": {
                            "role": {"enum": ["system", "developer"]},
                            "content": {"type": "string"},
                            "name": {"type": "string"},
                        },
                        "required": ["role", "content"],
                        "additionalProperties": False,
                    },
                    {
                        "type": "object",
                        "properties": {
                            "role": {"const": "user"},
                            "content": {
                                "anyOf": [
                                    {"type": "string"},
                                    {
                                        "type": "array",
                                        "minItems": 1,
                                        "items": {
                                            "oneOf": [
                                                _OA_TEXT_PART,
                                                _OA_IMAGE_PART,
                                                _OA_AUDIO_PART,
                                                _OA_FILE_PART,
                                            ]
                                        },
                                    },
                                ]
                            },
                            "name": {"type": "string"},
                        },
                        "required": ["role", "content"],
                        "additionalProperties": False,
                    },
                    {
                        "type": "object",
                        "properties": {
                            "role": {"const": "assistant"},
                            "content": {"type": ["string", "null"]},
                            "tool_calls": {
                                "type": "array",
                                "minItems": 1,
                                "items": {
                                    "type": "object",
                                    "properties": {
                                        "id": {"type": "string", "minLength": 1},
                                        "type": {"const": "function"},
                                        "function": {
                                            "type": "object",
                                            "properties": {
                                                "name": {"type": "string", "pattern": TOOL_NAME},
                                                "arguments": {"type": "string"},
                                            },
                                            "required": ["name", "arguments"],
                                            "additionalProperties": False,
                                        },
                                    },
                                    "required": ["id", "type", "function"],
                                    "additionalProperties": False,
                                },
                            },
                        },
                        "required": ["role"],
                        "additionalProperties": False,
                    },
                    {
                        "type": "object",
                        "properties": {
                            "role": {"const": "tool"},
                            # Tool messages take text only (images go in a user message).
                            "content": {
                                "anyOf": [
                                    {"type": "string"},
                                    {"type": "array", "minItems": 1, "items": _OA_TEXT_PART},
                                ]
                            },
                            "tool_call_id": {"type": "string", "minLength": 1},
                        },
                        "required": ["role", "content", "tool_call_id"],
                        "additionalProperties": False,
                    },
                ]
            },
        },
        "tools": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "type": {"const": "function"},
                    "function": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string", "pattern": r"^[a-zA-Z0-9_-]{1,64}$"},
                            "description": {"type": "string"},
                            "parameters": {"type": "object"},
                            "strict": {"type": ["boolean", "null"]},
                        },
                        "required": ["name"],
                        "additionalProperties": False,
                    },
                },
                "required": ["type", "function"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["model", "messages"],
    "additionalProperties": False,
}


def openai_request_problems(body: Any) -> list[str]:
    """What is wrong with a Chat Completions request body (empty when it is valid)."""
    problems = _schema_problems(OPENAI_REQUEST, body)
    if problems:
        return problems
    pending: list[str] = []
    answered_for: set[str] = set()
    for i, msg in enumerate(body["messages"]):
        role = msg["role"]
        if role == "tool":
            if msg["tool_call_id"] not in pending:
                problems.append(
                    f"messages/{i}: messages with role 'tool' must be a response to a preceding "
                    "message with 'tool_calls'"
                )
            else:
                pending.remove(msg["tool_call_id"])
                answered_for.add(msg["tool_call_id"])
            continue
        if pending:
            problems.append(
                f"messages/{i}: an assistant message with 'tool_calls' must be followed by tool "
                f"messages responding to each 'tool_call_id'. Missing: {pending}"
            )
            pending = []
        if role == "assistant":
            if msg.get("content") is None and not msg.get("tool_calls"):
                problems.append(f"messages/{i}: assistant content or tool_calls is required")
            for call in msg.get("tool_calls", []):
                try:
                    json.loads(call["function"]["arguments"] or "{}")
                except json.JSONDecodeError:
                    problems.append(f"messages/{i}: tool call arguments are not JSON")
                pending.append(call["id"])
    if pending:
        problems.append(f"messages: tool_calls {pending} were never answered by tool messages")
    for i, msg in enumerate(body["messages"]):
        if msg["role"] == "user" and isinstance(msg["content"], list):
            for k, part in enumerate(msg["content"]):
                if part["type"] == "image_url":
                    problem = _image_url_problem(part["image_url"]["url"])
                    if problem:
                        problems.append(f"messages/{i}/content/{k}/image_url: {problem}")
    for tool in body.get("tools", []):
        params = tool["function"].get("parameters")
        if params is not None:
            try:
                jsonschema.Draft202012Validator.check_schema(params)
            except jsonschema.SchemaError as exc:
                problems.append(
                    f"tools/{tool['function']['name']}: invalid parameters: {exc.message}"
                )
    return problems


def _image_url_problem(url: str) -> str | None:
    """What is wrong with an ``image_url`` (an http(s) URL or a base64 data URL of an image)."""
    if url.startswith(("https://", "http://")):
        return None
    if not url.startswith("data:"):
        return "Invalid image URL: it must be an http(s) URL or a data URL."
    head, sep, data = url[5:].partition(",")
    media, _, encoding = head.partition(";")
    if not sep or encoding != "base64":
        return "Invalid image URL: a data URL must be 'data:<mime type>;base64,<data>'."
    if media not in OPENAI_IMAGE_TYPES:
        return f"Invalid MIME type {media!r}: supported are {', '.join(OPENAI_IMAGE_TYPES)}."
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return "Invalid base64 image data."
    if not data:
        return "The image data is empty."
    return None

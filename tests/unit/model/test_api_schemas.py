"""The request checks of the fakes catch what the real APIs refuse."""

from __future__ import annotations

from typing import Any

from tests.fakes.api_schemas import anthropic_request_problems, openai_request_problems

TOOL = {"name": "Read", "description": "r", "input_schema": {"type": "object"}}


def anth(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"model": "m", "max_tokens": 10, "messages": messages, "tools": [TOOL], **extra}


USE = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}


def test_valid_anthropic_exchange() -> None:
    body = anth(
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [USE]},
            {"role": "user", "content": [RESULT, {"type": "text", "text": "go on"}]},
        ]
    )
    assert anthropic_request_problems(body) == []


def test_anthropic_pairing_order_and_markers() -> None:
    missing = anth([{"role": "user", "content": "hi"}, {"role": "assistant", "content": [USE]}])
    assert any("without tool_result" in p for p in anthropic_request_problems(missing))
    stray = anth([{"role": "user", "content": [RESULT]}])
    assert any("unexpected tool_use_id" in p for p in anthropic_request_problems(stray))
    order = anth(
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [USE]},
            {"role": "user", "content": [{"type": "text", "text": "x"}, RESULT]},
        ]
    )
    assert any("must come first" in p for p in anthropic_request_problems(order))
    mark = {"type": "ephemeral"}
    many = anth(
        [{"role": "user", "content": [{"type": "text", "text": "a", "cache_control": mark}] * 5}]
    )
    assert any("maximum of 4" in p for p in anthropic_request_problems(many))
    bad_marker = anth(
        [
            {
                "role": "user",
                "content": [{"type": "text", "text": "a", "cache_control": {"type": "x"}}],
            }
        ]
    )
    assert anthropic_request_problems(bad_marker)
    empty_text = anth([{"role": "user", "content": [{"type": "text", "text": ""}]}])
    assert anthropic_request_problems(empty_text)
    bad_tool = anth(
        [{"role": "user", "content": "hi"}], tools=[{"name": "a b", "input_schema": {}}]
    )
    assert anthropic_request_problems(bad_tool)


def test_openai_tool_call_pairing() -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "Read", "arguments": "{}"}}
    good = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": "x"},
        ],
    }
    assert openai_request_problems(good) == []
    unanswered = {**good, "messages": [*good["messages"][:2], {"role": "user", "content": "x"}]}
    assert any("Missing" in p for p in openai_request_problems(unanswered))
    stray = {**good, "messages": [{"role": "tool", "tool_call_id": "call_9", "content": "x"}]}
    assert any("preceding" in p for p in openai_request_problems(stray))
    bad_args = {
        **good,
        "messages": [
            good["messages"][0],
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{**call, "function": {"name": "Read", "arguments": "{"}}],
            },
            good["messages"][2],
        ],
    }
    assert any("not JSON" in p for p in openai_request_problems(bad_args))


PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def test_openai_images_only_in_user_messages_as_valid_data_urls() -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "Read", "arguments": "{}"}}
    image = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}}
    head = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
    ]
    good = {
        "model": "m",
        "messages": [
            *head,
            {"role": "tool", "tool_call_id": "call_1", "content": "[image 1: below]"},
            {"role": "user", "content": [{"type": "text", "text": "Image 1:"}, image]},
        ],
    }
    assert openai_request_problems(good) == []
    in_tool = {
        "model": "m",
        "messages": [*head, {"role": "tool", "tool_call_id": "call_1", "content": [image]}],
    }
    assert openai_request_problems(in_tool)

    def with_url(url: str) -> dict[str, Any]:
        part = {"type": "image_url", "image_url": {"url": url}}
        return {"model": "m", "messages": [{"role": "user", "content": [part]}]}

    assert any("MIME" in p for p in openai_request_problems(with_url("data:image/svg;base64,AA==")))
    assert any("base64" in p for p in openai_request_problems(with_url("data:image/png;base64,*")))
    assert any("data URL" in p for p in openai_request_problems(with_url("file:///x.png")))
    anthropic_shape = {
        "model": "m",
        "messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}],
    }
    assert openai_request_problems(anthropic_shape)

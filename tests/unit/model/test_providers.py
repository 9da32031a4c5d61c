"""Providers against the fake APIs: streaming, retries, errors, request bodies."""

from __future__ import annotations

import threading

import pytest

from codev_ls.model.errors import (
    ModelAuthError,
    ModelRequestError,
    ModelRetryableError,
    ModelStreamError,
)
from codev_ls.model.providers import make_provider
from codev_ls.model.providers.base import parse_retry_after, redact, stream_with_retry
from codev_ls.model.types import (
    MessageComplete,
    ModelRequest,
    Retrying,
    TextDelta,
    ToolSpec,
    ToolUseStart,
)
from tests.fakes._http import Drop, Hold
from tests.fakes.harness import FakeModel

READ = ToolSpec(
    "Read",
    "Read a file",
    {"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]},
)
GLOB = ToolSpec(
    "Glob", "Find files", {"type": "object", "properties": {"pattern": {"type": "string"}}}
)


def request(*messages: dict, tools: list[ToolSpec] | None = None) -> ModelRequest:
    msgs = list(messages) or [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    return ModelRequest("test-model", "You are a test.", msgs, tools or [READ, GLOB], 1024)


async def collect(fake: FakeModel, req: ModelRequest, **cfg: str) -> list:
    provider = make_provider(fake.config(**cfg))
    try:
        return [e async for e in stream_with_retry(provider, req)]
    finally:
        await provider.aclose()


async def test_streams_text_and_parallel_tool_calls(fake: FakeModel) -> None:
    fake.push(
        fake.reply("Reading both.", ("Read", {"file_path": "/a"}), ("Glob", {"pattern": "*.py"}))
    )
    events = await collect(fake, request())
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == "Reading both."
    starts = [e.name for e in events if isinstance(e, ToolUseStart)]
    assert starts == ["Read", "Glob"]
    done = events[-1]
    assert isinstance(done, MessageComplete)
    assert done.stop_reason == "tool_use"
    assert [(b["name"], b["input"]) for b in done.tool_uses] == [
        ("Read", {"file_path": "/a"}),
        ("Glob", {"pattern": "*.py"}),
    ]
    assert done.usage.output_tokens > 0


async def test_request_body_has_tools_sorted_and_cache_markers(fake_anthropic: FakeModel) -> None:
    fake_anthropic.push(fake_anthropic.reply("ok"))
    await collect(fake_anthropic, request(tools=[READ, GLOB]))
    body = fake_anthropic.bodies[0]
    assert [t["name"] for t in body["tools"]] == ["Glob", "Read"]
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in body["tools"][0]
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["stream"] is True


@pytest.mark.parametrize("first", ["rate_limited", "overloaded"])
async def test_retries_429_and_529_honouring_retry_after(fake: FakeModel, first: str) -> None:
    fake.push(getattr(fake, first)("0.2"), fake.reply("after the retry"))
    events = await collect(fake, request())
    retries = [e for e in events if isinstance(e, Retrying)]
    assert len(retries) == 1
    assert retries[0].delay == pytest.approx(0.2)
    assert "429" in retries[0].reason or "529" in retries[0].reason or "503" in retries[0].reason
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "after the retry"
    assert len(fake.bodies) == 2
    assert fake.bodies[0] == fake.bodies[1]


async def test_backoff_without_retry_after_then_gives_up(fake: FakeModel) -> None:
    fake.push(*(fake.overloaded() for _ in range(4)))
    provider = make_provider(fake.config())
    got: list = []
    with pytest.raises(ModelRetryableError) as info:
        async for e in stream_with_retry(provider, request()):
            got.append(e)
    await provider.aclose()
    delays = [e.delay for e in got if isinstance(e, Retrying)]
    assert len(delays) == 3  # CODEV_MODEL_MAX_RETRIES=3 in the harness
    assert all(0 <= d <= 0.05 for d in delays)
    assert "gave up after 4 attempts" in info.value.message


async def test_retry_after_longer_than_the_limit_is_reported(fake: FakeModel) -> None:
    fake.push(fake.rate_limited("3600"))
    with pytest.raises(ModelRetryableError) as info:
        await collect(fake, request())
    assert "3600" in info.value.message
    assert len(fake.bodies) == 1


async def test_bad_key_is_a_clear_error_without_the_key(fake: FakeModel) -> None:
    provider = make_provider(
        fake.config(
            ANTHROPIC_API_KEY="sk-ant-wrong-key-123456", OPENAI_API_KEY="sk-wrong-key-1234567"
        )
    )
    with pytest.raises(ModelAuthError) as info:
        async for _ in stream_with_retry(provider, request()):
            pass
    await provider.aclose()
    message = info.value.message
    assert "401" in message and "API key was refused" in message
    assert "sk-" not in message and "wrong-key" not in message
    assert ("ANTHROPIC_API_KEY" if fake.kind == "anthropic" else "OPENAI_API_KEY") in message
    assert len(fake.bodies) == 1  # never retried


async def test_error_event_before_output_is_retried(fake: FakeModel) -> None:
    fake.push(fake.stream_error(), fake.reply("fine now"))
    events = await collect(fake, request())
    assert any(isinstance(e, Retrying) for e in events)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "fine now"


async def test_error_event_after_output_ends_the_stream(fake: FakeModel) -> None:
    fake.push(fake.stream_error("Half an ans"))
    provider = make_provider(fake.config())
    got: list = []
    with pytest.raises(ModelStreamError) as info:
        async for e in stream_with_retry(provider, request()):
            got.append(e)
    await provider.aclose()
    assert "".join(e.text for e in got if isinstance(e, TextDelta)) == "Half an ans"
    assert "cut off" in info.value.message
    assert len(fake.bodies) == 1


async def test_dropped_connection_mid_stream(fake: FakeModel) -> None:
    fake.push(fake.reply("Start", Drop()))
    with pytest.raises((ModelStreamError, ModelRetryableError)):
        await collect(fake, request())


async def test_cancelling_a_held_stream_closes_it(fake: FakeModel) -> None:
    import asyncio

    release = threading.Event()
    fake.push(fake.reply("Before", Hold(release, timeout=10), "after"))
    provider = make_provider(fake.config())
    seen: list = []

    async def consume() -> None:
        async for e in stream_with_retry(provider, request()):
            seen.append(e)

    task = asyncio.ensure_future(consume())
    for _ in range(200):
        if any(isinstance(e, TextDelta) for e in seen):
            break
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    release.set()
    await provider.aclose()
    assert "".join(e.text for e in seen if isinstance(e, TextDelta)) == "Before"


async def test_bad_request_is_not_retried(fake_anthropic: FakeModel) -> None:
    # A tool_result without its tool_use: the fake answers 400 like the real API.
    bad = request(
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "x"}],
        }
    )
    with pytest.raises(ModelRequestError) as info:
        await collect(fake_anthropic, bad)
    assert "400" in info.value.message and "tool_result" in info.value.message
    assert len(fake_anthropic.bodies) == 1
    fake_anthropic.server.problems.clear()  # expected here


async def test_openai_history_conversion_pairs_tool_calls(fake: FakeModel) -> None:
    history = [
        {"role": "user", "content": [{"type": "text", "text": "read it"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Sure."},
                {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/a"}},
                {"type": "tool_use", "id": "toolu_2", "name": "Glob", "input": {"pattern": "*"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "1\tx"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": "<tool_use_error>bad</tool_use_error>",
                    "is_error": True,
                },
            ],
        },
    ]
    fake.push(fake.reply("done"))
    await collect(fake, request(*history))
    body = fake.bodies[0]
    results = fake.results(body)
    assert set(results) == {"toolu_1", "toolu_2"}
    assert fake.result_errors(body) == {"toolu_1": False, "toolu_2": True}


async def test_invalid_tool_json_is_kept_for_an_error(fake_anthropic: FakeModel) -> None:
    from codev_ls.model.providers.anthropic import INVALID_JSON_KEY

    fake_anthropic.push(fake_anthropic.reply(("Read", '{"file_path": ')))  # type: ignore[arg-type]
    events = await collect(fake_anthropic, request())
    done = events[-1]
    assert INVALID_JSON_KEY in done.tool_uses[0]["input"]


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "150", "retry-after": "9"}) == 0.15
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


def test_redact_removes_keys() -> None:
    text = "Incorrect API key provided: sk-abc123456789xyz and my-secret-value"
    out = redact(text, "my-secret-value")
    assert "sk-abc" not in out and "my-secret-value" not in out


PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}}


def image_history() -> list[dict]:
    """A Read whose result is a picture, next to a text-only Glob result."""
    return [
        {"role": "user", "content": [{"type": "text", "text": "look at it"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "call_r", "name": "Read", "input": {"file_path": "/a"}},
                {"type": "tool_use", "id": "call_g", "name": "Glob", "input": {"pattern": "*"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "call_r",
                    "content": [IMAGE, {"type": "text", "text": "Image /a (1×1 image/png)."}],
                },
                {"type": "tool_result", "tool_use_id": "call_g", "content": "a.png"},
                {"type": "text", "text": "what colour is it?"},
            ],
        },
    ]


async def test_openai_images_follow_the_tool_messages_as_image_url_parts() -> None:
    with FakeModel("openai") as fake:
        fake.push(fake.reply("A white pixel."))
        await collect(fake, request(*image_history()))
        assert not fake.problems
    messages = fake.bodies[0]["messages"]
    roles = [m["role"] for m in messages]
    assert roles == ["system", "user", "assistant", "tool", "tool", "user"]
    read_result = messages[3]["content"]
    assert "[image 1: sent in the next user message]" in read_result
    assert "Image /a (1×1 image/png)." in read_result
    parts = messages[5]["content"]
    assert parts[0] == {"type": "text", "text": "Image 1 (from the result of tool call call_r):"}
    assert parts[1] == {
        "type": "image_url",
        "image_url": {"url": f"data:image/png;base64,{PNG_B64}"},
    }
    assert parts[2] == {"type": "text", "text": "what colour is it?"}


async def test_openai_images_off_for_text_only_servers() -> None:
    with FakeModel("openai") as fake:
        fake.push(fake.reply("I cannot see images."))
        await collect(fake, request(*image_history()), CODEV_OPENAI_IMAGES="0")
        assert not fake.problems
    body = fake.bodies[0]
    assert "image_url" not in str(body)
    assert "CODEV_OPENAI_IMAGES=0" in body["messages"][3]["content"]
    assert body["messages"][-1] == {"role": "user", "content": "what colour is it?"}


async def test_anthropic_keeps_images_in_the_tool_result(fake_anthropic: FakeModel) -> None:
    fake_anthropic.push(fake_anthropic.reply("A white pixel."))
    await collect(fake_anthropic, request(*image_history()))
    result = fake_anthropic.bodies[0]["messages"][2]["content"][0]
    assert result["type"] == "tool_result" and result["content"][0]["type"] == "image"


@pytest.mark.parametrize("usage_env", ["1", "0"])
async def test_openai_stream_usage_follows_the_setting(usage_env: str) -> None:
    """Usage is asked for (and counted) by default; CODEV_OPENAI_STREAM_USAGE=0 leaves the
    option out, for servers that refuse it, and the answer still completes."""
    with FakeModel("openai") as fake:
        fake.push(fake.reply("Hi."))
        events = await collect(fake, request(), CODEV_OPENAI_STREAM_USAGE=usage_env)
        assert not fake.problems
    done = events[-1]
    assert isinstance(done, MessageComplete) and done.text == "Hi."
    body = fake.bodies[0]
    if usage_env == "1":
        assert body["stream_options"] == {"include_usage": True}
        assert (done.usage.input_tokens, done.usage.output_tokens) == (30, 12)
    else:
        assert "stream_options" not in body
        assert done.usage.context_tokens == 0


@pytest.mark.parametrize("include_usage", [True, False, None])
def test_the_openai_fake_sends_usage_only_when_asked(include_usage: bool | None) -> None:
    """The fake itself, over HTTP: with include_usage every chunk has "usage": null and a
    last chunk (no choices) the usage; without it no chunk has a usage field."""
    import json

    import httpx

    from tests.fakes import openai_api

    body: dict = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    if include_usage is not None:
        body["stream_options"] = {"include_usage": include_usage}
    with FakeModel("openai") as fake:
        fake.push(fake.reply("Hello there"))
        raw = httpx.post(
            f"{fake.server.base_url}/chat/completions",
            json=body,
            headers={"authorization": f"Bearer {openai_api.API_KEY}"},
        ).text
    lines = [line[6:] for line in raw.splitlines() if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    chunks = [json.loads(line) for line in lines[:-1]]
    if include_usage:
        *content, last = chunks
        assert all("usage" in c and c["usage"] is None for c in content)
        assert last["choices"] == [] and last["usage"]["total_tokens"] == 42
    else:
        assert all("usage" not in c for c in chunks)
        assert all(c["choices"] for c in chunks)

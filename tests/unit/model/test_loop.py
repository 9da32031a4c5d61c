"""The agent loop through Engine + ScriptedBridge against both fake APIs."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from codev_ls.bridge import ScriptedBridge
from codev_ls.engine.tool import ToolResult, build_tool
from codev_ls.model.history import CLEARED_NOTE, SUMMARY_PREFIX, SUMMARY_SYSTEM, conversation_of
from codev_ls.model.service import chat
from tests.fakes import anthropic_api
from tests.fakes._http import Hold
from tests.fakes.harness import FakeModel


def ids_of(rig: Any, kind: str = "toolUse") -> list[str]:
    return [e["toolUseId"] for e in rig.of_type(kind)]


def write_tool() -> Any:
    """A tool that changes things (so it asks): writes a note file in the workspace."""

    async def call(input: dict, ctx: Any, on_progress: Any) -> ToolResult:
        path = ctx.root / input["name"]
        path.write_text(input["text"])
        return ToolResult(f"wrote {path.name}")

    return build_tool(
        name="Note",
        description="Write a note file",
        input_json_schema={
            "type": "object",
            "properties": {"name": {"type": "string"}, "text": {"type": "string"}},
            "required": ["name", "text"],
            "additionalProperties": False,
        },
        call=call,
    )


async def test_multi_step_loop_reads_then_answers(fake: FakeModel, rig: Any) -> None:
    (rig.root / "a.txt").write_text("alpha\nbeta\n")
    fake.push(
        fake.reply("Let me look.", ("Read", {"file_path": str(rig.root / "a.txt")})),
        fake.reply(("Glob", {"pattern": "*.txt"})),
        fake.reply("a.txt says alpha, beta."),
    )
    result = await rig.chat("What is in a.txt?")
    assert result.stop_reason == "end_turn"
    assert result.text.endswith("a.txt says alpha, beta.")
    assert [e["name"] for e in rig.of_type("toolUse")] == ["Read", "Glob"]
    outcomes = rig.of_type("toolResult")
    assert [o["status"] for o in outcomes] == ["success", "success"]
    assert "alpha" in outcomes[0]["content"]
    assert rig.of_type("done") == [{"type": "done", "stopReason": "end_turn"}]
    # The model got each result back, paired with its call.
    assert "alpha" in fake.results(fake.bodies[1])[ids_of(rig)[0]]
    assert str(rig.root / "a.txt") in fake.results(fake.bodies[2])[ids_of(rig)[1]]
    # Text arrived as deltas, in order, before the tool use.
    kinds = [e["type"] for e in rig.events]
    assert kinds.index("text") < kinds.index("toolUse")


async def test_read_of_an_image_reaches_the_model(fake: FakeModel, rig: Any) -> None:
    """A picture read with Read goes to either model as an image, not as a note."""
    import base64
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (4, 3), (200, 30, 30)).save(buf, format="PNG")
    (rig.root / "red.png").write_bytes(buf.getvalue())
    fake.push(
        fake.reply(("Read", {"file_path": str(rig.root / "red.png")})),
        fake.reply("It is a red rectangle."),
    )
    result = await rig.chat("What is in red.png?")
    assert result.stop_reason == "end_turn", result
    body = fake.bodies[1]
    if fake.kind == "anthropic":
        (block,) = anthropic_api.tool_results(body).values()
        image = next(b for b in block["content"] if b["type"] == "image")
        data = image["source"]["data"]
    else:
        last = body["messages"][-1]
        assert last["role"] == "user" and body["messages"][-2]["role"] == "tool"
        url = next(p for p in last["content"] if p["type"] == "image_url")["image_url"]["url"]
        assert url.startswith("data:image/png;base64,")
        data = url.split(",", 1)[1]
    assert Image.open(io.BytesIO(base64.b64decode(data))).size == (4, 3)


async def test_history_carries_over_between_turns(fake: FakeModel, rig: Any) -> None:
    fake.push(fake.reply("Hello!"), fake.reply("You said hi before."))
    first = await rig.chat("hi")
    second = await rig.chat("what did I say?", session_id=first.session_id)
    assert second.session_id == first.session_id
    body = fake.bodies[1]
    texts = [m for m in body["messages"] if m["role"] != "system"]
    assert len(texts) == 3  # user, assistant, user
    assert "what did I say?" in fake.last_user_text(body)


async def test_parallel_tool_calls_run_concurrently(fake: FakeModel, make_rig: Any) -> None:
    both_in = threading.Barrier(2, timeout=5)

    async def call(input: dict, ctx: Any, on_progress: Any) -> ToolResult:
        await asyncio.to_thread(both_in.wait)  # only returns when both calls are running
        return ToolResult(f"probe {input['n']} ok")

    probe = build_tool(
        name="Probe",
        description="A read-only probe",
        input_json_schema={"type": "object", "properties": {"n": {"type": "integer"}}},
        is_read_only=lambda input: True,
        is_concurrency_safe=lambda input: True,
        call=call,
    )
    rig = make_rig(fake, extra_tools=[probe])
    fake.push(fake.reply(("Probe", {"n": 1}), ("Probe", {"n": 2})), fake.reply("both done"))
    result = await rig.chat("probe twice")
    assert result.stop_reason == "end_turn"
    assert [o["content"] for o in rig.of_type("toolResult")] == ["probe 1 ok", "probe 2 ok"]


async def test_rejected_permission_is_reported_to_the_model(fake: FakeModel, make_rig: Any) -> None:
    rig = make_rig(fake, extra_tools=[write_tool()], bridge=ScriptedBridge(answers=["reject"]))
    fake.push(
        fake.reply(("Note", {"name": "n.txt", "text": "x"})),
        fake.reply("Understood, I won't write it."),
    )
    result = await rig.chat("write a note")
    assert result.stop_reason == "end_turn"
    assert not (rig.root / "n.txt").exists()
    assert rig.bridge.requests and rig.bridge.requests[0].tool_name == "Note"
    outcome = rig.of_type("toolResult")[0]
    assert outcome["status"] == "rejected"
    assert outcome["decisionSource"] == "user_reject"
    tid = outcome["toolUseId"]
    assert "rejected" in fake.results(fake.bodies[1])[tid]
    assert fake.result_errors(fake.bodies[1])[tid] is True


async def test_approved_write_runs(fake: FakeModel, make_rig: Any) -> None:
    rig = make_rig(fake, extra_tools=[write_tool()], bridge=ScriptedBridge(answers=["allow_once"]))
    fake.push(fake.reply(("Note", {"name": "n.txt", "text": "hello"})), fake.reply("Written."))
    result = await rig.chat("write a note")
    assert result.stop_reason == "end_turn"
    assert (rig.root / "n.txt").read_text() == "hello"
    assert rig.of_type("toolResult")[0]["decisionSource"] == "user_temporary"


async def test_cancel_mid_tool_ends_the_turn_cleanly(fake: FakeModel, make_rig: Any) -> None:
    started = asyncio.Event()
    cleaned = []

    async def call(input: dict, ctx: Any, on_progress: Any) -> ToolResult:
        started.set()
        try:
            await asyncio.sleep(30)
        finally:
            cleaned.append(True)
        return ToolResult("never")

    slow = build_tool(
        name="Slow",
        description="Takes long",
        input_json_schema={"type": "object"},
        is_read_only=lambda input: True,
        call=call,
    )
    rig = make_rig(fake, extra_tools=[slow])
    fake.push(fake.reply("Working on it.", ("Slow", {})), fake.reply("Ok, stopped."))
    turn = asyncio.ensure_future(rig.chat("go"))
    await asyncio.wait_for(started.wait(), 10)
    sid = next(iter(rig.service._turns))
    assert rig.service.cancel(sid) == 1
    result = await asyncio.wait_for(turn, 10)
    assert result.stop_reason == "cancelled"
    assert result.text == "Working on it."
    assert cleaned == [True]
    assert rig.of_type("toolResult")[0]["status"] == "interrupted"
    assert rig.of_type("done")[-1]["stopReason"] == "cancelled"
    # The history stays valid: the next turn's request passes the schema check.
    again = await rig.chat("never mind", session_id=result.session_id)
    assert again.stop_reason == "end_turn"
    assert "interrupted" in next(iter(fake.results(fake.bodies[1]).values()))


async def test_cancel_mid_stream_keeps_partial_text(fake: FakeModel, rig: Any) -> None:
    release = threading.Event()
    fake.push(fake.reply("Partial ans", Hold(release, 10), "wer"), fake.reply("Next."))
    turn = asyncio.ensure_future(rig.chat("go"))
    for _ in range(1000):
        if "".join(e["delta"] for e in rig.of_type("text")) == "Partial ans":
            break
        await asyncio.sleep(0.01)
    rig.service.cancel()
    result = await asyncio.wait_for(turn, 10)
    release.set()
    assert result.stop_reason == "cancelled"
    assert result.text == "Partial ans"
    again = await rig.chat("continue", session_id=result.session_id)
    assert again.stop_reason == "end_turn"
    msgs = fake.bodies[1]["messages"]
    assert any("interrupted" in str(m) for m in msgs)


async def test_cancelling_the_calling_task_interrupts_the_turn(fake: FakeModel, rig: Any) -> None:
    release = threading.Event()
    fake.push(fake.reply("Hm", Hold(release, 10)))
    turn = asyncio.ensure_future(rig.chat("go"))
    for _ in range(500):
        if rig.of_type("text"):
            break
        await asyncio.sleep(0.01)
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn
    release.set()
    assert rig.of_type("done")[-1]["stopReason"] == "cancelled"
    assert not rig.service._turns


async def test_retries_429_then_529_within_a_turn(fake: FakeModel, rig: Any) -> None:
    fake.push(fake.rate_limited("0"), fake.overloaded("0"), fake.reply("made it"))
    result = await rig.chat("hello")
    assert result.stop_reason == "end_turn"
    assert result.text == "made it"
    statuses = [e["message"] for e in rig.of_type("status")]
    assert sum("Retrying" in s for s in statuses) == 2
    # The whole-turn progress shows the retries too.
    reports = [p.message for p in rig.bridge.progress if p.kind == "report"]
    assert any("Retrying" in r for r in reports)


async def test_stream_error_ends_the_turn_with_an_error(fake: FakeModel, rig: Any) -> None:
    fake.push(fake.stream_error("Half of it", overloaded=False), fake.reply("Recovered."))
    result = await rig.chat("hello")
    assert result.stop_reason == "error"
    assert result.text == "Half of it"
    assert result.error and "cut off" in result.error
    assert rig.of_type("done")[-1]["error"] == result.error
    again = await rig.chat("again", session_id=result.session_id)
    assert again.text == "Recovered."


async def test_bad_key_ends_the_turn_with_a_clear_error(fake: FakeModel, make_rig: Any) -> None:
    rig = make_rig(fake, ANTHROPIC_API_KEY="sk-ant-bad-000000", OPENAI_API_KEY="sk-bad-0000000")
    result = await rig.chat("hello")
    assert result.stop_reason == "error"
    assert "API key was refused" in result.error
    assert "bad-0000" not in result.error


async def test_unknown_tool_and_invalid_json_go_back_as_errors(
    fake_anthropic: FakeModel, make_rig: Any
) -> None:
    fake = fake_anthropic
    rig = make_rig(fake)
    fake.push(
        fake.reply(("Nope", {"x": 1}), ("Read", '{"file_path": ')),  # type: ignore[arg-type]
        fake.reply("I see."),
    )
    result = await rig.chat("go")
    assert result.stop_reason == "end_turn"
    results = list(fake.results(fake.bodies[1]).values())
    assert "No such tool available: Nope" in results[0]
    assert "not valid JSON" in results[1]


async def test_turn_limit(fake: FakeModel, make_rig: Any) -> None:
    rig = make_rig(fake, CODEV_MAX_TURNS="2")
    (rig.root / "f").write_text("x")
    for _ in range(2):
        fake.push(fake.reply(("Read", {"file_path": str(rig.root / "f")})))
    result = await rig.chat("loop forever")
    assert result.stop_reason == "max_turns"
    assert len(fake.bodies) == 2


async def test_busy_session_is_refused(fake: FakeModel, rig: Any) -> None:
    release = threading.Event()
    fake.push(fake.reply("wait", Hold(release, 10), "ed"))
    first = asyncio.ensure_future(rig.chat("one", session_id="s1"))
    for _ in range(500):
        if rig.of_type("text"):
            break
        await asyncio.sleep(0.01)
    second = await rig.chat("two", session_id="s1")
    assert second.stop_reason == "error" and "already running" in second.error
    release.set()
    assert (await first).stop_reason == "end_turn"


async def test_system_prompt_has_tools_workspace_and_project_rules(
    fake: FakeModel, rig: Any
) -> None:
    (rig.root / "CODEV.md").write_text("Always answer in haiku.")
    fake.push(fake.reply("ok"))
    await rig.chat("hi")
    system = fake.system(fake.bodies[0])
    assert "Always answer in haiku." in system
    assert str(rig.root) in system
    assert "## Read" in system and "Reads a file" in system
    assert "Read" in fake.tool_names(fake.bodies[0])


async def test_whole_turn_progress_begins_and_ends(fake: FakeModel, rig: Any) -> None:
    fake.push(fake.reply("ok"))
    await rig.chat("hi")
    turn = [p for p in rig.bridge.progress if p.tool_use_id.startswith("chat_")]
    assert next(p.kind for p in turn) == "begin" and turn[-1].kind == "end"
    assert turn[0].cancel is not None


async def test_cancel_from_the_progress_button(fake: FakeModel, rig: Any) -> None:
    release = threading.Event()
    fake.push(fake.reply("Hm", Hold(release, 10)))
    turn = asyncio.ensure_future(rig.chat("go"))
    for _ in range(500):
        if rig.of_type("text"):
            break
        await asyncio.sleep(0.01)
    begin = next(p for p in rig.bridge.progress if p.kind == "begin")
    begin.cancel()
    result = await asyncio.wait_for(turn, 10)
    release.set()
    assert result.stop_reason == "cancelled"


def history_results(fake: FakeModel, body: dict[str, Any]) -> list[str]:
    """Every tool result in a request's history, in order (as text)."""
    if fake.kind == "anthropic":
        return [
            str(b.get("content"))
            for m in body["messages"]
            for b in m["content"]
            if b.get("type") == "tool_result"
        ]
    return [str(m["content"]) for m in body["messages"] if m["role"] == "tool"]


def tool_descriptions(fake: FakeModel, body: dict[str, Any]) -> list[str]:
    tools = body.get("tools", [])
    if fake.kind == "anthropic":
        return [t["description"] for t in tools]
    return [t["function"]["description"] for t in tools]


async def test_context_is_bounded_clearing_then_summarizing(fake: FakeModel, make_rig: Any) -> None:
    """Both providers: old large tool results are cleared first, then the earlier part is
    summarized by the model; the requests stay valid (tool calls paired) throughout."""
    rig = make_rig(fake)
    big = rig.root / "big.txt"
    big.write_text("\n".join(f"line {i} " + "x" * 40 for i in range(120)))
    fake.push(fake.reply("hi"))
    probe = await rig.chat("hi")
    body = fake.bodies[0]
    overhead = (
        len(fake.system(body)) + sum(len(d) + 200 for d in tool_descriptions(fake, body))
    ) // 4
    result_tokens = len(big.read_text()) // 4
    # Two reads take ~70% of the window: the older one gets cleared, no summary yet.
    rig.service.config.context_window = int((overhead + 2 * result_tokens) / 0.7)
    fake.push(
        fake.reply(("Read", {"file_path": str(big)})),
        fake.reply(("Read", {"file_path": str(big)})),
        fake.reply("Read it twice."),
    )
    first = await rig.chat("read big.txt twice", session_id=probe.session_id)
    assert first.stop_reason == "end_turn"
    third = fake.bodies[3]
    results = history_results(fake, third)
    assert len(results) == 2
    assert results[0] == CLEARED_NOTE and results[1] != CLEARED_NOTE
    assert not any(SUMMARY_PREFIX in str(m) for m in third["messages"])
    # A long prompt fills the window: the earlier part is summarized by the model.
    fake.push(fake.reply("SUMMARY: big.txt was read twice."), fake.reply("Still here."))
    long_prompt = "please consider " + "y" * (rig.service.config.context_window * 4)
    second = await rig.chat(long_prompt, session_id=first.session_id)
    assert second.stop_reason == "end_turn"
    summary_req = fake.bodies[4]
    assert "tools" not in summary_req
    assert fake.system(summary_req) == SUMMARY_SYSTEM
    assert "big.txt" in str(summary_req["messages"])
    last = fake.bodies[5]
    history = [m for m in last["messages"] if m["role"] != "system"]
    assert SUMMARY_PREFIX in str(history[0])
    assert "SUMMARY: big.txt was read twice." in str(history[0])
    assert "y" * 100 in str(history[-1])
    assert conversation_of(rig.engine.sessions[first.session_id]).summaries == 1
    if fake.kind == "anthropic":
        marks = str(last).count("cache_control")
        assert marks == 3  # system, tool list, last message: within the API's four


async def test_complete_for_tools(fake: FakeModel, rig: Any) -> None:
    fake.push(fake.reply("The page is about cats."))
    text = await rig.service.complete("Apply the prompt.", "Page: cats cats", max_tokens=100)
    assert text == "The page is about cats."
    body = fake.bodies[0]
    assert body.get("tools") is None


async def test_chat_without_a_model_says_how_to_configure(workspace: Path) -> None:
    from codev_ls.app import build_engine

    engine = build_engine(workspace, ScriptedBridge())
    assert "model" not in engine.services
    result = await chat(engine, "hello")
    assert result.stop_reason == "error"
    assert "ANTHROPIC_API_KEY" in result.error and "CODEV_PROVIDER=openai" in result.error
    await engine.aclose()

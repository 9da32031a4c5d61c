"""codev/chat over LSP against a local fake of the Anthropic Messages API: events carry the
session, tools run through the editor, the turn's progress uses the client's token, cancel."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.e2e.conftest import StartEditor
from tests.e2e.editor import EditorClient
from tests.fakes._http import Hold
from tests.fakes.harness import FakeModel

pytestmark = pytest.mark.asyncio


async def _wait_for(predicate: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


async def _chat_editor(start_editor: StartEditor, fake: FakeModel, preset: str) -> EditorClient:
    return await start_editor(preset, env=fake.env)


async def test_a_chat_turn_streams_events_and_runs_tools(
    start_editor: StartEditor, fake_anthropic: FakeModel, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("the answer is 42\n")
    client = await _chat_editor(start_editor, fake_anthropic, "neovim@v0.11.0")
    fake_anthropic.push(
        fake_anthropic.reply(("Read", {"file_path": str(workspace / "notes.txt")})),
        fake_anthropic.reply("The file says 42."),
    )
    client.progress_reports["turn"] = []
    result = await client.request(
        "codev/chat", {"prompt": "what is in notes.txt?", "workDoneToken": "turn"}
    )
    assert result["stopReason"] == "end_turn", result
    assert "42" in result["text"]
    sid = result["sessionId"]
    kinds = [e["type"] for e in client.chat_events]
    assert kinds[0] == "toolUse" and "toolResult" in kinds and kinds[-1] == "done"
    assert all(e["sessionId"] == sid for e in client.chat_events)
    tool_result = next(e for e in client.chat_events if e["type"] == "toolResult")
    assert tool_result["status"] == "success" and "42" in str(tool_result["content"])
    # The whole turn is one progress bar, on the client's token.
    reports = client.progress_reports["turn"]
    assert isinstance(reports[0], types.WorkDoneProgressBegin)
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    # The next turn continues the session (its history goes with the request).
    fake_anthropic.push(fake_anthropic.reply("Still 42."))
    again = await client.command("codev.chat", "and now?", sid)
    assert again["sessionId"] == sid and again["text"] == "Still 42."
    assert len(fake_anthropic.bodies[-1]["messages"]) > 1


async def test_cancel_ends_the_turn_cleanly(
    start_editor: StartEditor, fake_anthropic: FakeModel
) -> None:
    client = await _chat_editor(start_editor, fake_anthropic, "visual-studio-code")
    release = threading.Event()
    fake_anthropic.push(fake_anthropic.reply("Thinking", Hold(release, 30), " done."))
    task = client.request_task("codev/chat", {"prompt": "slow", "sessionId": "s-cancel"})
    await _wait_for(lambda: any(e["type"] == "text" for e in client.chat_events))
    try:
        assert (await client.request("codev/cancel", {"sessionId": "s-cancel"}))["cancelled"] == 1
        result = await asyncio.wait_for(task, 20)
    finally:
        release.set()
    assert result["sessionId"] == "s-cancel"
    assert result["stopReason"] == "cancelled"
    assert client.chat_events[-1]["type"] == "done"


async def test_cancel_request_ends_the_turn_with_its_result(
    start_editor: StartEditor, fake_anthropic: FakeModel
) -> None:
    client = await _chat_editor(start_editor, fake_anthropic, "visual-studio-code")
    release = threading.Event()
    fake_anthropic.push(fake_anthropic.reply("Hm", Hold(release, 30)))
    task = client.request_task("codev/chat", {"prompt": "slow"}, msg_id="chat-1")
    await _wait_for(lambda: any(e["type"] == "text" for e in client.chat_events))
    try:
        client.cancel_request("chat-1")
        result = await asyncio.wait_for(task, 20)
    finally:
        release.set()
    assert result["stopReason"] == "cancelled"

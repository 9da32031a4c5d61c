"""codev/chat end to end: the real server over stdio, a scripted editor, fake model APIs.

The fakes (tests/fakes/anthropic_api.py, openai_api.py) are real HTTP servers
in this process speaking the documented streaming wire formats; each checks
every request body against the public schemas (tool definitions, tool_result
pairing, cache markers) and the fixtures assert that none was invalid.
"""

from __future__ import annotations

import asyncio
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.e2e.conftest import StartEditor
from tests.e2e.editor import EditorClient
from tests.fakes._http import Hold
from tests.fakes.harness import FakeModel


@pytest.fixture(params=["anthropic", "openai"])
def model(request: pytest.FixtureRequest) -> Iterator[FakeModel]:
    with FakeModel(request.param) as fake:
        yield fake
    assert not fake.problems, f"invalid request bodies: {fake.problems}"


@pytest.fixture
def claude() -> Iterator[FakeModel]:
    with FakeModel("anthropic") as fake:
        yield fake
    assert not fake.problems, f"invalid request bodies: {fake.problems}"


async def chat(editor: EditorClient, prompt: str, **params: Any) -> dict[str, Any]:
    return await editor.request("codev/chat", {"prompt": prompt, **params})


def events(editor: EditorClient, session_id: str, kind: str | None = None) -> list[dict[str, Any]]:
    return [
        e
        for e in editor.chat_events
        if e.get("sessionId") == session_id and (kind is None or e["type"] == kind)
    ]


async def wait_for(predicate: Any, timeout: float = 20.0) -> None:
    for _ in range(int(timeout / 0.02)):
        if predicate():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("timed out waiting")


# --------------------------------------------------------------------------- the loop


@pytest.mark.parametrize(
    ("kind", "preset"), [("anthropic", "visual-studio-code"), ("openai", "neovim@v0.11.0")]
)
async def test_multi_step_read_edit_bash(
    start_editor: StartEditor, workspace: Path, kind: str, preset: str
) -> None:
    with FakeModel(kind) as model:
        await _multi_step(model, start_editor, workspace, preset)
    assert not model.problems


async def _multi_step(
    model: FakeModel, start_editor: StartEditor, workspace: Path, preset: str
) -> None:
    app = workspace / "app.py"
    app.write_text("print('hello')\n")
    model.push(
        model.reply("Reading app.py.", ("Read", {"file_path": str(app)})),
        model.reply(
            (
                "Edit",
                {"file_path": str(app), "old_string": "hello", "new_string": "goodbye"},
            )
        ),
        model.reply(("Bash", {"command": f"python3 {app}", "description": "run it"})),
        model.reply("It now prints goodbye."),
    )
    editor = await start_editor(preset, env=model.env)
    result = await chat(editor, "Make app.py say goodbye and run it.")
    assert result["stopReason"] == "end_turn", result
    assert result["text"].endswith("It now prints goodbye.")
    sid = result["sessionId"]
    assert app.read_text() == "print('goodbye')\n"
    uses = [e["name"] for e in events(editor, sid, "toolUse")]
    assert uses == ["Read", "Edit", "Bash"]
    outcomes = events(editor, sid, "toolResult")
    assert [o["status"] for o in outcomes] == ["success", "success", "success"]
    assert "goodbye" in outcomes[2]["content"]
    assert events(editor, sid, "done") == [
        {"sessionId": sid, "type": "done", "stopReason": "end_turn"}
    ]
    deltas = "".join(e["delta"] for e in events(editor, sid, "text"))
    assert deltas.startswith("Reading app.py.")
    # The edit was approved in the editor: a prompt (Neovim) or the annotated preview (VS Code).
    titles = [p.message for p in editor.prompts]
    if preset == "visual-studio-code":
        assert not any(t.startswith("Edit") for t in titles)
    else:
        assert any("Edit" in t for t in titles)
    assert any("Bash" in t for t in titles)
    # The model saw the Bash output.
    bash_id = events(editor, sid, "toolUse")[2]["toolUseId"]
    assert "goodbye" in model.results(model.bodies[3])[bash_id]


async def test_parallel_reads_and_a_rejected_write(
    model: FakeModel, start_editor: StartEditor, workspace: Path
) -> None:
    claude = model  # either API: the same loop, the same outcomes
    (workspace / "a.txt").write_text("A\n")
    (workspace / "b.txt").write_text("B\n")
    claude.push(
        claude.reply(
            ("Read", {"file_path": str(workspace / "a.txt")}),
            ("Read", {"file_path": str(workspace / "b.txt")}),
            ("Write", {"file_path": str(workspace / "c.txt"), "content": "AB\n"}),
        ),
        claude.reply("You rejected the write."),
        claude.reply("Yes, the same session."),
    )
    editor = await start_editor("neovim@v0.11.0", env=claude.env)
    editor.prompt_answer = "Reject"
    result = await chat(editor, "combine them")
    sid = result["sessionId"]
    statuses = [o["status"] for o in events(editor, sid, "toolResult")]
    assert statuses == ["success", "success", "rejected"]
    assert not (workspace / "c.txt").exists()
    sent = claude.results(claude.bodies[1])
    assert len(sent) == 3
    write_id = events(editor, sid, "toolUse")[2]["toolUseId"]
    assert claude.result_errors(claude.bodies[1])[write_id] is True
    assert "rejected" in sent[write_id]
    # The codev.chat command continues the same session (history kept).
    again = await editor.command("codev.chat", "same session?", sid)
    assert again["sessionId"] == sid and again["text"] == "Yes, the same session."
    history = claude.bodies[2]["messages"]
    assert "combine them" in str(history[:2]) and claude.last_user_text(claude.bodies[2]) == (
        "same session?"
    )
    # user, assistant (3 calls), their results, assistant, user: 5 Messages API turns; in
    # Chat Completions each result is its own tool message, after the system message.
    assert len(history) == (5 if claude.kind == "anthropic" else 8)


# --------------------------------------------------------------------------- cancel


async def test_codev_cancel_mid_tool_ends_the_turn_cleanly(
    model: FakeModel, start_editor: StartEditor, workspace: Path
) -> None:
    model.push(
        model.reply("Sleeping.", ("Bash", {"command": "sleep 30; echo never"})),
        model.reply("Stopped as asked."),
    )
    editor = await start_editor("visual-studio-code", env=model.env, mode="bypassPermissions")
    turn = editor.request_task("codev/chat", {"prompt": "sleep", "sessionId": "s-cancel"})
    await wait_for(lambda: events(editor, "s-cancel", "toolUse"))
    await asyncio.sleep(0.3)
    answer = await editor.request("codev/cancel", {"sessionId": "s-cancel"})
    assert answer["cancelled"] >= 1
    result = await asyncio.wait_for(turn, 20)
    assert result["stopReason"] == "cancelled"
    assert result["text"] == "Sleeping."
    outcome = events(editor, "s-cancel", "toolResult")[0]
    assert outcome["status"] == "interrupted"
    assert events(editor, "s-cancel", "done")[-1]["stopReason"] == "cancelled"
    # The session goes on; the interrupted call was answered in the history.
    again = await chat(editor, "ok, continue", sessionId="s-cancel")
    assert again["stopReason"] == "end_turn"
    assert "interrupted" in next(iter(model.results(model.bodies[1]).values()))


async def test_cancel_request_and_progress_cancel(
    claude: FakeModel, start_editor: StartEditor
) -> None:
    release = threading.Event()
    claude.push(
        claude.reply("Thinking", Hold(release, 20), " more"),
        claude.reply("Again", Hold(release, 20), " more"),
    )
    editor = await start_editor("visual-studio-code", env=claude.env)
    # $/cancelRequest: the request is answered with what the turn did, and ends with done.
    turn = editor.request_task("codev/chat", {"prompt": "one", "sessionId": "s1"}, msg_id="chat-1")
    await wait_for(lambda: events(editor, "s1", "text"))
    editor.cancel_request("chat-1")
    result = await asyncio.wait_for(turn, 20)
    assert result["stopReason"] == "cancelled" and result["text"] == "Thinking"
    await wait_for(lambda: events(editor, "s1", "done"))
    assert events(editor, "s1", "done")[-1]["stopReason"] == "cancelled"
    # The progress bar's cancel button: the turn ends cleanly with a result.
    token = "chat-progress-token"
    turn = editor.request_task(
        "codev/chat", {"prompt": "two", "sessionId": "s2", "workDoneToken": token}
    )
    await wait_for(lambda: "".join(e["delta"] for e in events(editor, "s2", "text")) == "Again")
    await wait_for(lambda: token in editor.progress_reports)
    begin = editor.progress_reports[token][0]
    assert isinstance(begin, types.WorkDoneProgressBegin) and begin.cancellable
    editor.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    result = await asyncio.wait_for(turn, 20)
    release.set()
    assert result["stopReason"] == "cancelled" and result["text"] == "Again"
    await wait_for(
        lambda: isinstance(editor.progress_reports[token][-1], types.WorkDoneProgressEnd)
    )


# --------------------------------------------------------------------------- provider errors


async def test_retries_then_a_stream_error(model: FakeModel, start_editor: StartEditor) -> None:
    model.push(
        model.rate_limited("0.1"),
        model.overloaded("0"),
        model.reply("Third time lucky."),
        model.stream_error("Half", overloaded=False),
    )
    editor = await start_editor("neovim@v0.11.0", env=model.env)
    result = await chat(editor, "hello")
    assert result["stopReason"] == "end_turn" and result["text"] == "Third time lucky."
    assert len(model.bodies) == 3
    # The retries are "status" events (an extension of PROTOCOL.md v1, also shown in the
    # turn's progress bar); a client that ignores "status" loses nothing: the answer's text
    # is all in "text" events.
    sid = result["sessionId"]
    statuses = events(editor, sid, "status")
    assert [set(e) for e in statuses] == [{"sessionId", "type", "message"}] * 2
    assert all(e["message"].startswith("Retrying in ") for e in statuses)
    assert "".join(e["delta"] for e in events(editor, sid, "text")) == result["text"]
    result = await chat(editor, "again", sessionId=result["sessionId"])
    assert result["stopReason"] == "error"
    assert result["text"] == "Half" and "cut off" in result["error"]
    done = events(editor, result["sessionId"], "done")[-1]
    assert done["stopReason"] == "error" and done["error"] == result["error"]


async def test_bad_key(claude: FakeModel, start_editor: StartEditor) -> None:
    editor = await start_editor(
        "neovim@v0.11.0", env={**claude.env, "ANTHROPIC_API_KEY": "sk-ant-nope-000000"}
    )
    result = await chat(editor, "hello")
    assert result["stopReason"] == "error" and "API key was refused" in result["error"]
    assert "nope" not in result["error"]
    assert len(claude.bodies) == 1


async def test_no_model_configured(start_editor: StartEditor) -> None:
    editor = await start_editor("neovim@v0.11.0")
    result = await chat(editor, "hello")
    assert result["stopReason"] == "error"
    assert "ANTHROPIC_API_KEY" in result["text"]
    (done,) = events(editor, result["sessionId"], "done")
    assert done["error"] == result["error"]  # as when a configured model fails
    tools = await editor.request("codev/listTools", {})
    assert any(t["name"] == "Read" for t in tools["tools"])


# --------------------------------------------------------------------------- Agent


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


async def test_sub_agents_foreground_background_and_worktree(
    claude: FakeModel, start_editor: StartEditor, workspace: Path
) -> None:
    git(workspace, "init", "-q", "-b", "main")
    git(workspace, "config", "user.email", "t@example.com")
    git(workspace, "config", "user.name", "T")
    (workspace / "facts.md").write_text("The sky is green here.\n")
    git(workspace, "add", ".")
    git(workspace, "commit", "-qm", "init")
    claude.route_subagents(
        claude.reply(("Read", {"file_path": str(workspace / "facts.md")})),
        # Streamed slowly, so the sub-agent's Read step is the latest progress
        # report for longer than the bridge's 100 ms coalescing window.
        claude.reply("FG REPORT: the sky is green.", delay=0.05),
        claude.reply("BG REPORT: nothing else to see."),
        claude.reply(("Bash", {"command": "echo blue >> facts.md"})),
        claude.reply("Appended blue."),
    )
    claude.push(
        claude.reply(("Agent", {"description": "Check facts", "prompt": "read facts.md"})),
        claude.reply(
            (
                "Agent",
                {"description": "Look around", "prompt": "look", "run_in_background": True},
            )
        ),
        claude.reply("Both started."),
    )
    editor = await start_editor("visual-studio-code", env=claude.env)
    token = "agent-turn"
    result = await chat(editor, "check the facts", workDoneToken=token)
    assert result["stopReason"] == "end_turn"
    sid = result["sessionId"]
    fg, bg = events(editor, sid, "toolResult")
    assert "FG REPORT: the sky is green." in fg["content"]
    task_id = bg["meta"]["taskId"]
    # The turn's progress showed the sub-agent's current step.
    reports = [
        r.message
        for r in editor.progress_reports[token]
        if isinstance(r, types.WorkDoneProgressReport)
    ]
    assert any(m and m.startswith("Read: ") for m in reports), reports
    # TaskOutput reads the background agent's report.
    claude.push(
        claude.reply(("TaskOutput", {"task_id": task_id, "block": True, "timeout": 20000})),
        claude.reply("The background agent found nothing."),
    )
    again = await chat(editor, "what did the background agent say?", sessionId=sid)
    assert again["stopReason"] == "end_turn"
    read = events(editor, sid, "toolResult")[-1]
    assert "BG REPORT: nothing else to see." in read["content"]
    # In a worktree: the diff comes back, the checkout stays as it was.
    claude.push(
        claude.reply(
            (
                "Agent",
                {"description": "Append", "prompt": "append blue", "isolation": "worktree"},
            )
        ),
        claude.reply("Here is the diff."),
    )
    third = await chat(editor, "append in isolation", sessionId=sid)
    assert third["stopReason"] == "end_turn"
    content = events(editor, sid, "toolResult")[-1]["content"]
    assert "+blue" in content
    assert (workspace / "facts.md").read_text() == "The sky is green here.\n"
    assert git(workspace, "status", "--porcelain") == ""


# --------------------------------------------------------------------------- ToolSearch, Skill


# --------------------------------------------------------------------------- plan mode, questions


async def test_plan_mode_approved_and_rejected(
    claude: FakeModel, start_editor: StartEditor, workspace: Path
) -> None:
    target = workspace / "plan.txt"
    claude.push(
        claude.reply(("Write", {"file_path": str(target), "content": "x\n"})),
        claude.reply(("ExitPlanMode", {"plan": "1. Write plan.txt"})),
        claude.reply("I'll keep planning."),
        claude.reply(("ExitPlanMode", {"plan": "1. Write plan.txt (revised)"})),
        claude.reply(("Write", {"file_path": str(target), "content": "x\n"})),
        claude.reply("Done."),
    )
    editor = await start_editor("neovim@v0.11.0", env=claude.env, mode="plan")
    editor.prompt_answer = "Reject"
    first = await chat(editor, "write plan.txt")
    sid = first["sessionId"]
    statuses = [o["status"] for o in events(editor, sid, "toolResult")]
    assert statuses == ["rejected", "rejected"]
    assert "Plan mode is on" in events(editor, sid, "toolResult")[0]["content"]
    assert (await editor.request("codev/permissionMode", {}))["mode"] == "plan"
    plan_prompt = editor.prompts[-1]
    assert "plan" in plan_prompt.message.lower()
    assert [a.title for a in plan_prompt.actions] == ["Allow once", "Reject"]
    editor.prompt_answer = "Allow once"
    second = await chat(editor, "ok, revise it", sessionId=sid)
    assert second["stopReason"] == "end_turn"
    assert (await editor.request("codev/permissionMode", {}))["mode"] == "default"
    assert target.read_text() == "x\n"


async def test_skill_and_ask_user_question(
    claude: FakeModel, start_editor: StartEditor, workspace: Path
) -> None:
    skill = workspace / ".codev" / "skills" / "greet"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: greet\ndescription: Greet people\n---\nSay hi warmly.\n"
    )
    question = {
        "questions": [
            {
                "question": "Tabs or spaces?",
                "header": "Style",
                "options": [{"label": "Tabs"}, {"label": "Spaces"}],
            },
            {
                "question": "Which checks?",
                "options": [{"label": "Lint"}, {"label": "Tests"}, {"label": "Docs"}],
                "multiSelect": True,
            },
        ]
    }
    claude.push(
        claude.reply(("Skill", {"skill": "greet"})),
        claude.reply(("AskUserQuestion", question)),
        claude.reply("Hi there, warmly! Spaces, then."),
    )
    editor = await start_editor("visual-studio-code", env=claude.env)
    # The user picks Spaces, then Docs and Lint one at a time, then Done.
    picks = iter(["Spaces", "Docs", "Lint", "Done"])
    editor.prompt_answer = lambda params: next(picks)
    result = await chat(editor, "greet me and format the code")
    assert result["stopReason"] == "end_turn"
    assert "greet: Greet people" in claude.system(claude.bodies[0])
    loaded, answer = events(editor, result["sessionId"], "toolResult")
    assert "Say hi warmly." in loaded["content"]
    style, *checks = editor.prompts
    assert "Tabs or spaces?" in style.message
    assert [a.title for a in style.actions] == ["Tabs", "Spaces"]
    assert [[a.title for a in p.actions] for p in checks] == [
        ["Lint", "Tests", "Docs", "Done"],
        ["Lint", "Tests", "Done"],
        ["Tests", "Done"],
    ]
    assert "Which checks?" in checks[0].message and "Chosen so far: Docs." in checks[1].message
    assert '"Tabs or spaces?" = "Spaces"' in answer["content"]
    assert '"Which checks?" = "Docs", "Lint"' in answer["content"]


async def test_tool_search_loads_a_deferred_mcp_tool(
    claude: FakeModel, start_editor: StartEditor, workspace: Path
) -> None:
    from tests.mcp_support import approve_project_servers, time_server, write_mcp_json

    write_mcp_json(workspace, {"time": time_server()})
    approve_project_servers()
    tool = "mcp__time__convert_time"
    args = {"source_timezone": "UTC", "time": "08:30", "target_timezone": "Europe/Berlin"}
    claude.push(
        claude.reply(("ToolSearch", {"query": "convert time timezone", "max_results": 1})),
        claude.reply((tool, args)),
        claude.reply("08:30 UTC is 09:30 or 10:30 in Berlin."),
    )
    editor = await start_editor("neovim@v0.11.0", env={**claude.env, "CODEV_TOOL_SEARCH": "always"})

    async def listed() -> bool:
        tools = await editor.request("codev/listTools", {})
        return any(t["name"] == tool for t in tools["tools"])

    for _ in range(300):
        if await listed():
            break
        await asyncio.sleep(0.1)
    editor.prompt_answer = "Allow once"
    result = await chat(editor, "what time is 08:30 UTC in Berlin?")
    assert result["stopReason"] == "end_turn", result
    first, second, _ = claude.bodies
    assert tool not in claude.tool_names(first) and "ToolSearch" in claude.tool_names(first)
    assert f"- {tool}" in claude.system(first)
    assert tool in claude.tool_names(second)
    loaded, converted = events(editor, result["sessionId"], "toolResult")
    assert f"Loaded 1 tool(s): {tool}" in loaded["content"]
    assert converted["status"] == "success" and "Europe/Berlin" in converted["content"]

"""Agent: sub-agents in the foreground, in the background (TaskOutput), in a git worktree."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import pytest

from codev_ls.bridge import ScriptedBridge
from codev_ls.model.agents import clamp_mode, find_agent_types
from codev_ls.permissions.types import PERMISSION_MODES
from tests.fakes.harness import FakeModel


def sub_requests(fake: FakeModel) -> list[dict]:
    return [b for b in fake.bodies if fake.is_subagent(b)]


def main_requests(fake: FakeModel) -> list[dict]:
    return [b for b in fake.bodies if not fake.is_subagent(b)]


def sub_sessions(rig: Any) -> list[Any]:
    """The sub-agent sessions the engine holds right now."""
    return [s for s in list(rig.engine.sessions.values()) if s.depth > 0]


def watch_sub_sessions(fake: FakeModel, rig: Any) -> list[int]:
    """How many sub-agent sessions the engine held at each sub-agent request."""
    seen: list[int] = []
    route = fake.server.responder

    def responder(rec: Any) -> Any:
        if fake.is_subagent(rec.body):
            seen.append(len(sub_sessions(rig)))
        return route(rec) if route is not None else None

    fake.server.responder = responder
    return seen


async def test_foreground_agent_reports_back(fake: FakeModel, make_rig: Any) -> None:
    rig = make_rig(fake, bridge=ScriptedBridge(answers=["allow_once"]))
    (rig.root / "notes.md").write_text("The answer is 42.\n")
    fake.route_subagents(
        fake.reply(("Read", {"file_path": str(rig.root / "notes.md")})),
        fake.reply("REPORT: notes.md says the answer is 42."),
    )
    seen = watch_sub_sessions(fake, rig)
    fake.push(
        fake.reply(
            ("Agent", {"description": "Find the answer", "prompt": "Find the answer in notes.md"})
        ),
        fake.reply("The sub-agent found 42."),
    )
    result = await rig.chat("what is the answer?")
    assert result.stop_reason == "end_turn"
    # Its session existed while it ran, and was dropped once the report was made.
    assert seen == [1, 1]
    assert sub_sessions(rig) == []
    assert set(rig.engine.sessions) == {rig.engine.session.id, result.session_id}
    outcome = rig.of_type("toolResult")[0]
    assert outcome["status"] == "success"
    assert "REPORT: notes.md says the answer is 42." in outcome["content"]
    subs = sub_requests(fake)
    assert len(subs) == 2
    # Its own context: the task as its first message, not the user's conversation.
    assert fake.last_user_text(subs[0]) == "Find the answer in notes.md"
    assert "what is the answer?" not in str(subs[0]["messages"])
    names = fake.tool_names(subs[0])
    assert "Read" in names
    assert not {"Agent", "AskUserQuestion", "ExitPlanMode"} & set(names)
    # AgentProgress: its current step shown in the editor.
    reports = [p.message for p in rig.bridge.progress if p.kind == "report"]
    assert any(m.startswith("Read: ") and "notes.md" in m for m in reports)
    # The report reached the main model as the tool result.
    assert "42" in next(iter(fake.results(main_requests(fake)[1]).values()))


async def test_agent_mode_is_never_more_permissive(
    fake_anthropic: FakeModel, make_rig: Any
) -> None:
    fake = fake_anthropic
    rig = make_rig(fake, bridge=ScriptedBridge(answers=["allow_once", "reject"]))
    fake.route_subagents(
        fake.reply(("Write", {"file_path": str(rig.root / "x.txt"), "content": "x"})),
        fake.reply("I could not write."),
    )
    fake.push(
        fake.reply(
            (
                "Agent",
                {"description": "Write x", "prompt": "write x.txt", "mode": "bypassPermissions"},
            )
        ),
        fake.reply("ok"),
    )
    await rig.chat("go")
    # The sub-agent's Write was asked about (default mode), and rejected by the user.
    assert [r.tool_name for r in rig.bridge.requests] == ["Agent", "Write"]
    assert not (rig.root / "x.txt").exists()
    content = rig.of_type("toolResult")[-1]["content"]
    assert "more permissive than yours" in content and "'default'" in content


async def test_an_auto_parent_cannot_start_an_accept_edits_child(
    fake_anthropic: FakeModel, make_rig: Any
) -> None:
    """acceptEdits would approve an edit the auto classifier might refuse: the child runs in
    default mode, so its Write asks the user (who rejects it here)."""
    fake = fake_anthropic
    rig = make_rig(fake, bridge=ScriptedBridge(answers=["allow_once", "reject"]))
    rig.engine.set_mode("auto")
    target = rig.root / "x.txt"
    fake.route_subagents(
        fake.reply(("Write", {"file_path": str(target), "content": "x"})),
        fake.reply("I could not write."),
    )
    fake.push(
        fake.reply(
            ("Agent", {"description": "Write x", "prompt": "write x.txt", "mode": "acceptEdits"})
        ),
        fake.reply("ok"),
    )
    await rig.chat("go")
    assert [r.tool_name for r in rig.bridge.requests] == ["Agent", "Write"]
    assert not target.exists()
    content = rig.of_type("toolResult")[-1]["content"]
    assert "'acceptEdits' allows what yours ('auto') does not" in content
    assert "ran in 'default'" in content


async def test_custom_agent_type_tools_and_model(fake_anthropic: FakeModel, make_rig: Any) -> None:
    fake = fake_anthropic
    rig = make_rig(fake)
    agents = rig.root / ".codev" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews code\ntools: Read, Grep\nmodel: haiku\n"
        "permissionMode: plan\n---\nYou review code and never change it.\n"
    )
    fake.route_subagents(fake.reply("Looks fine."))
    fake.push(
        fake.reply(
            (
                "Agent",
                {
                    "description": "Review",
                    "prompt": "review x",
                    "subagent_type": "reviewer",
                    "mode": "plan",
                },
            )
        ),
        fake.reply("Reviewed."),
    )
    result = await rig.chat("review")
    assert result.stop_reason == "end_turn"
    assert "reviewer: Reviews code" in fake.system(main_requests(fake)[0])
    sub = sub_requests(fake)[0]
    assert sorted(fake.tool_names(sub)) == ["Grep", "Read"]
    assert sub["model"] == "claude-haiku-4-5"
    assert "You review code and never change it." in fake.system(sub)
    assert "# Plan mode" in fake.system(sub)
    # mode "plan" makes the Agent call itself read-only: no permission prompt.
    assert not rig.bridge.requests


async def test_unknown_type_and_depth_limit(fake_anthropic: FakeModel, make_rig: Any) -> None:
    fake = fake_anthropic
    rig = make_rig(fake)
    fake.push(
        fake.reply(("Agent", {"description": "x", "prompt": "y", "subagent_type": "nope"})),
        fake.reply("ok"),
    )
    await rig.chat("go")
    text = next(iter(fake.results(fake.bodies[1]).values()))
    assert "Unknown subagent_type 'nope'" in text and "general-purpose" in text
    # A sub-agent session cannot start another one.
    session = rig.engine.new_session(depth=1)
    outcome = await rig.engine.run_tool(
        "Task", {"description": "x", "prompt": "y"}, session=session
    )
    assert outcome.status == "error" and "depth limit" in outcome.text()


async def test_background_agent_read_with_task_output(fake: FakeModel, make_rig: Any) -> None:
    rig = make_rig(fake, bridge=ScriptedBridge(answers=["allow_once"]))
    (rig.root / "data.txt").write_text("payload\n")
    gate = asyncio.Event()
    fake.route_subagents(
        fake.reply(("Read", {"file_path": str(rig.root / "data.txt")})),
        fake.reply("BG REPORT: data.txt holds payload."),
    )
    seen = watch_sub_sessions(fake, rig)
    fake.push(
        fake.reply(
            (
                "Agent",
                {
                    "description": "Inspect data",
                    "prompt": "inspect data.txt",
                    "run_in_background": True,
                },
            )
        ),
        fake.reply("Started it; will check later."),
    )
    result = await rig.chat("inspect in the background")
    assert result.stop_reason == "end_turn"
    outcome = rig.of_type("toolResult")[0]
    task_id = outcome["meta"]["taskId"] if "meta" in outcome else None
    assert task_id and task_id.startswith("agent_")
    assert task_id in outcome["content"]
    from codev_ls.tools.tasks import get_task_manager

    task = get_task_manager(rig.engine).get(task_id)
    await asyncio.wait_for(task.finished.wait(), 20)
    gate.set()
    # The background agent's session is gone once its task ended.
    assert seen == [1, 1] and sub_sessions(rig) == []
    fake.push(
        fake.reply(("TaskOutput", {"task_id": task_id})),
        fake.reply("The background agent says payload."),
    )
    again = await rig.chat("what did it find?", session_id=result.session_id)
    assert again.stop_reason == "end_turn"
    read = rig.of_type("toolResult")[-1]
    assert read["toolName"] == "TaskOutput" and read["status"] == "success"
    assert "BG REPORT: data.txt holds payload." in read["content"]
    assert "Read: " in read["content"]  # its steps too
    assert task.status == "completed"


async def test_background_agent_stopped_with_task_stop(
    fake_anthropic: FakeModel, make_rig: Any
) -> None:
    import threading

    from tests.fakes._http import Hold

    fake = fake_anthropic
    rig = make_rig(fake, bridge=ScriptedBridge(answers=["allow_once", "allow_once"]))
    release = threading.Event()
    fake.route_subagents(fake.reply("thinking", Hold(release, 20), " more"))
    fake.push(
        fake.reply(
            ("Agent", {"description": "Long job", "prompt": "work", "run_in_background": True})
        ),
        fake.reply("started"),
    )
    first = await rig.chat("start it")
    task_id = rig.of_type("toolResult")[0]["meta"]["taskId"]
    fake.push(fake.reply(("TaskStop", {"task_id": task_id})), fake.reply("stopped"))
    await rig.chat("stop it", session_id=first.session_id)
    release.set()
    stop = rig.of_type("toolResult")[-1]
    assert stop["toolName"] == "TaskStop" and stop["status"] == "success"
    from codev_ls.tools.tasks import get_task_manager

    task = get_task_manager(rig.engine).get(task_id)
    assert task.status == "killed" and not task.running
    await asyncio.wait_for(task.finished.wait(), 20)
    assert sub_sessions(rig) == []  # dropped when the stopped task ended


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def repo(workspace: Path) -> Path:
    git(workspace, "init", "-q", "-b", "main")
    git(workspace, "config", "user.email", "t@example.com")
    git(workspace, "config", "user.name", "T")
    (workspace / "README.md").write_text("hello\n")
    git(workspace, "add", ".")
    git(workspace, "commit", "-qm", "init")
    return workspace


async def test_worktree_isolation_reports_the_diff(
    fake_anthropic: FakeModel, make_rig: Any, repo: Path
) -> None:
    fake = fake_anthropic
    rig = make_rig(fake, bridge=ScriptedBridge(answers=["allow_once", "allow_once"]))
    fake.route_subagents(
        fake.reply(("Bash", {"command": "echo added > new.txt && echo more >> README.md"})),
        fake.reply("Added new.txt and extended README.md."),
    )
    fake.push(
        fake.reply(
            (
                "Agent",
                {"description": "Change files", "prompt": "add new.txt", "isolation": "worktree"},
            )
        ),
        fake.reply("Done in a worktree."),
    )
    result = await rig.chat("make changes in isolation")
    assert result.stop_reason == "end_turn"
    content = rig.of_type("toolResult")[0]["content"]
    assert "+added" in content and "+more" in content and "new.txt" in content
    # The user's checkout is untouched; the worktree is kept with the changes.
    assert not (repo / "new.txt").exists()
    assert (repo / "README.md").read_text() == "hello\n"
    assert git(repo, "status", "--porcelain") == ""
    trees = list((repo / ".git" / "codev-worktrees").glob("agent-*"))
    assert len(trees) == 1 and (trees[0] / "new.txt").read_text() == "added\n"
    assert str(trees[0]) in content


async def test_worktree_without_changes_is_removed(
    fake_anthropic: FakeModel, make_rig: Any, repo: Path
) -> None:
    fake = fake_anthropic
    rig = make_rig(fake, bridge=ScriptedBridge(answers=["allow_once"]))
    fake.route_subagents(fake.reply("Nothing to change."))
    fake.push(
        fake.reply(("Agent", {"description": "Look", "prompt": "look", "isolation": "worktree"})),
        fake.reply("ok"),
    )
    await rig.chat("look in isolation")
    content = rig.of_type("toolResult")[0]["content"]
    assert "changed nothing" in content
    assert not list((repo / ".git" / "codev-worktrees").glob("agent-*"))
    assert len(git(repo, "worktree", "list").strip().splitlines()) == 1


async def test_worktree_needs_a_repository(fake_anthropic: FakeModel, make_rig: Any) -> None:
    fake = fake_anthropic
    rig = make_rig(fake, bridge=ScriptedBridge(answers=["allow_once"]))
    fake.push(
        fake.reply(("Agent", {"description": "x", "prompt": "y", "isolation": "worktree"})),
        fake.reply("ok"),
    )
    await rig.chat("go")
    text = rig.of_type("toolResult")[0]["content"]
    assert "needs a git repository" in text


def test_clamp_mode_and_builtin_type(workspace: Path) -> None:
    assert clamp_mode("bypassPermissions", "default") == "default"
    assert clamp_mode("plan", "acceptEdits") == "plan"
    assert clamp_mode(None, "acceptEdits") == "acceptEdits"
    # acceptEdits and auto are incomparable: neither parent can start the other kind.
    allowed = {
        parent: {child for child in PERMISSION_MODES if clamp_mode(child, parent) == child}
        for parent in PERMISSION_MODES
    }
    assert allowed == {
        "plan": {"plan"},
        "default": {"plan", "default"},
        "acceptEdits": {"plan", "default", "acceptEdits"},
        "auto": {"plan", "default", "auto"},
        "bypassPermissions": set(PERMISSION_MODES),
    }
    assert clamp_mode("acceptEdits", "auto") == "default"
    assert clamp_mode("auto", "acceptEdits") == "default"
    assert clamp_mode("bypassPermissions", "auto") == "auto"
    assert clamp_mode("bypassPermissions", "acceptEdits") == "acceptEdits"
    assert all(clamp_mode(None, parent) == parent for parent in PERMISSION_MODES)
    types, problems = find_agent_types(workspace)
    assert "general-purpose" in types and problems == []


async def test_agent_without_model(workspace: Path) -> None:
    from codev_ls.engine.runtime import Engine

    engine = Engine(workspace, ScriptedBridge())
    outcome = await engine.run_tool("Agent", {"description": "x", "prompt": "y"})
    assert outcome.status == "error" and "needs a model" in outcome.text()
    await engine.aclose()


async def test_in_plan_mode_agents_research_in_plan_mode(
    fake_anthropic: FakeModel, make_rig: Any
) -> None:
    fake = fake_anthropic
    rig = make_rig(fake)
    rig.engine.set_mode("plan")
    fake.route_subagents(fake.reply("Found the entry point in main.py."))
    fake.push(
        fake.reply(("Agent", {"description": "Explore", "prompt": "find the entry point"})),
        fake.reply("Plan: ..."),
    )
    result = await rig.chat("plan a change")
    assert result.stop_reason == "end_turn"
    outcome = rig.of_type("toolResult")[0]
    assert outcome["status"] == "success" and "main.py" in outcome["content"]
    assert "# Plan mode" in fake.system(sub_requests(fake)[0])
    assert not rig.bridge.requests


async def test_worktree_agent_edits_run_in_accept_edits_mode_without_asking(
    fake_anthropic: FakeModel, make_rig: Any, repo: Path
) -> None:
    """Gap F of the issue-3 audit: the worktree lies under .git/, so every file in it
    counted as protected and each edit of the sub-agent asked, even in acceptEdits."""
    fake = fake_anthropic
    # One answer: the Agent tool itself. Any question after it is rejected.
    rig = make_rig(fake, bridge=ScriptedBridge(answers=["allow_once"], default_answer="reject"))
    rig.engine.set_mode("acceptEdits")
    fake.route_subagents(
        fake.reply(("Bash", {"command": "echo added > new.txt"})),
        fake.reply("Added new.txt."),
    )
    fake.push(
        fake.reply(
            ("Agent", {"description": "Add", "prompt": "add new.txt", "isolation": "worktree"})
        ),
        fake.reply("Done."),
    )
    await rig.chat("make changes in isolation")
    assert len(rig.bridge.requests) == 1, [r.message for r in rig.bridge.requests]
    trees = list((repo / ".git" / "codev-worktrees").glob("agent-*"))
    assert len(trees) == 1 and (trees[0] / "new.txt").read_text() == "added\n"
    # The worktree's own .git file stays protected, and so does the repository's .git.
    from codev_ls.permissions.paths import protected_reason

    assert protected_reason(trees[0] / "new.txt") is None
    assert protected_reason(trees[0] / ".git") is not None
    assert protected_reason(repo / ".git" / "codev-worktrees" / "planted" / "x") is not None
    assert protected_reason(repo / ".git" / "config") is not None


async def test_a_finished_sub_agent_leaves_no_private_tmp(fake: FakeModel, make_rig: Any) -> None:
    from codev_ls.tools.sandbox import get_sandbox

    rig = make_rig(fake, bridge=ScriptedBridge(answers=["allow_once"] * 4))
    sandbox = get_sandbox(rig.engine)
    if not sandbox.active:
        pytest.skip(f"the sandbox cannot run here: {sandbox.unavailable_reason()}")
    fake.route_subagents(
        fake.reply(("Bash", {"command": "echo scratch > /tmp/scratch.txt"})),
        fake.reply("REPORT: wrote a scratch file."),
    )
    held: list[Path] = []
    route = fake.server.responder

    def responder(rec: Any) -> Any:
        if fake.is_subagent(rec.body):  # the private tmps that exist at each sub-agent step
            held.extend(sandbox._tmp_dirs.values())
        return route(rec) if route is not None else None

    fake.server.responder = responder
    fake.push(
        fake.reply(("Agent", {"description": "Scratch", "prompt": "write a scratch file"})),
        fake.reply("Done."),
    )
    result = await rig.chat("use a scratch file")
    assert result.stop_reason == "end_turn"
    outcome = rig.of_type("toolResult")[0]
    assert "REPORT: wrote a scratch file." in outcome["content"]
    # The sub-agent's Bash had a private /tmp while it ran; it is gone with its session.
    assert held, "the sub-agent's Bash never got a private tmp"
    assert not any(p.exists() for p in held)
    assert sandbox._tmp_dirs == {}

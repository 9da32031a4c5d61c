"""Command hooks: matchers, stdin, exit codes, JSON answers, timeouts, crashes, cancels."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from codev_ls.bridge import ScriptedBridge
from codev_ls.engine.hooks import matcher_matches
from codev_ls.engine.outcome import MessageUpdate
from codev_ls.engine.runtime import Engine
from tests.fakes.perm_tools import EngineFactory, write_settings

HOOK = Path(__file__).resolve().parents[2] / "fakes" / "hook_script.py"


def hook(*args: str) -> str:
    return " ".join(shlex.quote(a) for a in [sys.executable, str(HOOK), *args])


def answer(**specific: Any) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", **specific}})


def configure(
    workspace: Path,
    pre: list[tuple[str, str, float | None]] = (),  # type: ignore[assignment]
    post: list[tuple[str, str, float | None]] = (),  # type: ignore[assignment]
    permissions: dict | None = None,
) -> None:
    def entries(items: list[tuple[str, str, float | None]]) -> list[dict]:
        out = []
        for matcher, command, timeout in items:
            h: dict[str, Any] = {"type": "command", "command": command}
            if timeout is not None:
                h["timeout"] = timeout
            out.append({"matcher": matcher, "hooks": [h]})
        return out

    write_settings(
        workspace / ".codev" / "settings.json",
        permissions,
        hooks={"PreToolUse": entries(list(pre)), "PostToolUse": entries(list(post))},
    )


async def run(engine: Engine, name: str, updates: list | None = None, **raw: Any):  # type: ignore[no-untyped-def]
    return await engine.run_tool(
        name, raw, on_update=updates.append if updates is not None else None
    )


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes.
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


# --------------------------------------------------------------------------- matchers


@pytest.mark.parametrize(
    ("matcher", "names", "expected"),
    [
        ("*", ("Bash",), True),
        ("", ("Bash",), True),
        ("Bash|Edit", ("Edit",), True),
        ("Edit", ("NotebookEdit",), False),
        ("Notebook.*", ("NotebookEdit",), True),
        ("mcp__srv__.*", ("mcp__srv__do",), True),
        ("Task", ("Agent", "Task"), True),
        ("Bash", ("bash",), False),
    ],
)
def test_matcher_is_a_regex_on_the_whole_name(matcher: str, names: tuple, expected: bool) -> None:
    assert matcher_matches(matcher, names) is expected


# --------------------------------------------------------------------------- stdin and cwd


async def test_hooks_get_the_documented_stdin_fields_and_run_in_the_workspace(
    make_engine: EngineFactory, workspace: Path, tmp_path: Path
) -> None:
    rec = tmp_path / "rec.jsonl"
    configure(
        workspace,
        pre=[("Bash", hook("--record", str(rec)), None), ("Write", hook("--exit", "9"), None)],
        post=[("*", hook("--record", str(rec)), None)],
        permissions={"allow": ["Bash(echo:*)"]},
    )
    engine = make_engine()
    outcome = await run(engine, "Bash", command="echo hello")
    assert outcome.status == "success", outcome.text()
    pre, post = records(rec)
    for r in (pre, post):
        assert r["session_id"] == engine.session.id
        assert r["cwd"] == str(workspace)
        assert r["_cwd"] == str(workspace)
        assert r["tool_name"] == "Bash"
        assert r["tool_input"] == {"command": "echo hello"}
        assert r["tool_use_id"] == outcome.tool_use_id
        assert r["permission_mode"] == "default"
    assert pre["hook_event_name"] == "PreToolUse" and "tool_response" not in pre
    assert post["hook_event_name"] == "PostToolUse"
    assert "hello" in str(post["tool_response"])


# --------------------------------------------------------------------------- PreToolUse answers


async def test_pre_allow_skips_the_prompt(make_engine: EngineFactory, workspace: Path) -> None:
    configure(
        workspace,
        pre=[
            (
                "Bash",
                hook(
                    "--stdout",
                    answer(permissionDecision="allow", permissionDecisionReason="ok by hook"),
                ),
                None,
            )
        ],
    )
    engine = make_engine()
    outcome = await run(engine, "Bash", command="touch made")
    assert outcome.status == "success"
    assert outcome.decision_source == "hook" and outcome.decision_reason == "ok by hook"
    assert engine.bridge.requests == []  # type: ignore[attr-defined]
    assert (workspace / "made").exists()


async def test_pre_allow_never_overrides_a_deny_rule(
    make_engine: EngineFactory, workspace: Path
) -> None:
    configure(
        workspace,
        pre=[("Bash", hook("--stdout", answer(permissionDecision="allow")), None)],
        permissions={"deny": ["Bash(touch:*)"]},
    )
    outcome = await run(make_engine(), "Bash", command="touch made")
    assert outcome.status == "rejected" and outcome.decision_rule == "Bash(touch:*)"
    assert not (workspace / "made").exists()


async def test_pre_deny_blocks_with_its_reason(make_engine: EngineFactory, workspace: Path) -> None:
    configure(
        workspace,
        pre=[
            (
                "Bash",
                hook(
                    "--stdout",
                    answer(permissionDecision="deny", permissionDecisionReason="not on Fridays"),
                ),
                None,
            )
        ],
        permissions={"allow": ["Bash"]},
    )
    outcome = await run(make_engine(), "Bash", command="touch made")
    assert outcome.status == "rejected" and outcome.decision_source == "hook"
    assert "not on Fridays" in outcome.text()
    assert not (workspace / "made").exists()


async def test_pre_ask_forces_a_prompt(make_engine: EngineFactory, workspace: Path) -> None:
    configure(
        workspace,
        pre=[
            (
                "Bash",
                hook(
                    "--stdout",
                    answer(permissionDecision="ask", permissionDecisionReason="look first"),
                ),
                None,
            )
        ],
        permissions={"allow": ["Bash(touch:*)"]},
    )
    engine = make_engine(answers=["reject"])
    outcome = await run(engine, "Bash", command="touch made")
    assert outcome.status == "rejected" and outcome.decision_source == "user_reject"
    assert engine.bridge.requests[0].reason == "look first"  # type: ignore[attr-defined]
    assert not (workspace / "made").exists()


async def test_pre_updated_input_and_additional_context(
    make_engine: EngineFactory, workspace: Path
) -> None:
    configure(
        workspace,
        pre=[
            (
                "Bash",
                hook(
                    "--stdout",
                    answer(
                        updatedInput={"command": "touch rewritten"},
                        additionalContext="the hook rewrote it",
                    ),
                ),
                None,
            )
        ],
        permissions={"allow": ["Bash(touch:*)"]},
    )
    outcome = await run(make_engine(), "Bash", command="touch original")
    assert outcome.status == "success"
    assert (workspace / "rewritten").exists() and not (workspace / "original").exists()
    assert "the hook rewrote it" in outcome.text()


async def test_updated_input_is_judged_by_the_rules_again(
    make_engine: EngineFactory, workspace: Path
) -> None:
    configure(
        workspace,
        pre=[("Bash", hook("--stdout", answer(updatedInput={"command": "rm -f x"})), None)],
        permissions={"allow": ["Bash(touch:*)"], "deny": ["Bash(rm:*)"]},
    )
    (workspace / "x").write_text("keep")
    outcome = await run(make_engine(), "Bash", command="touch y")
    assert outcome.status == "rejected"
    assert (workspace / "x").exists()


async def test_pre_exit_2_blocks_and_tells_the_model(
    make_engine: EngineFactory, workspace: Path
) -> None:
    configure(
        workspace,
        pre=[("Bash", hook("--exit", "2", "--stderr", "use make instead"), None)],
        permissions={"allow": ["Bash"]},
    )
    outcome = await run(make_engine(), "Bash", command="touch made")
    assert outcome.status == "rejected" and outcome.decision_source == "hook"
    assert "use make instead" in outcome.text()
    assert not (workspace / "made").exists()


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (("--exit", "1", "--stderr", "boom"), "exited with code 1"),
        (("--exit", "3"), "exited with code 3"),
        (("--stdout", "{not json"), "unreadable JSON"),
        (
            ("--stdout", json.dumps({"hookSpecificOutput": {"permissionDecision": "maybe"}})),
            "permissionDecision",
        ),
    ],
)
async def test_a_broken_pre_hook_is_shown_and_never_silently_allows(
    make_engine: EngineFactory, workspace: Path, args: tuple, problem: str
) -> None:
    configure(
        workspace, pre=[("Bash", hook(*args), None)], permissions={"allow": ["Bash(touch:*)"]}
    )
    engine = make_engine(answers=["reject"])
    updates: list = []
    outcome = await run(engine, "Bash", updates, command="touch made")
    assert outcome.status == "rejected", "the user was asked and said no"
    assert len(engine.bridge.requests) == 1  # type: ignore[attr-defined]
    errors = [u.text for u in updates if isinstance(u, MessageUpdate) and u.level == "error"]
    assert errors and problem in errors[0]
    assert not (workspace / "made").exists()


async def test_a_hook_that_cannot_start_is_an_error(
    make_engine: EngineFactory, workspace: Path
) -> None:
    configure(
        workspace,
        pre=[("Bash", "/nonexistent/hook-binary", None)],
        permissions={"allow": ["Bash(touch:*)"]},
    )
    engine = make_engine(answers=["allow_once"])
    updates: list = []
    outcome = await run(engine, "Bash", updates, command="touch made")
    assert outcome.status == "success" and outcome.decision_source == "user_temporary"
    assert any(isinstance(u, MessageUpdate) and "127" in u.text for u in updates)


async def test_timeout_kills_the_hook_and_its_children(
    make_engine: EngineFactory, workspace: Path, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    configure(
        workspace,
        pre=[("Bash", hook("--child-pids", str(pids), "--sleep", "30"), 1)],
        permissions={"allow": ["Bash(touch:*)"]},
    )
    engine = make_engine(answers=["reject"])
    updates: list = []
    start = time.monotonic()
    outcome = await run(engine, "Bash", updates, command="touch made")
    assert time.monotonic() - start < 20
    assert outcome.status == "rejected"
    assert any(isinstance(u, MessageUpdate) and "timed out after 1 s" in u.text for u in updates)
    parent, child = (int(p) for p in pids.read_text().split())
    for _ in range(50):
        if not alive(parent) and not alive(child):
            break
        await asyncio.sleep(0.1)
    assert not alive(parent) and not alive(child)


async def test_cancel_kills_a_running_hook(
    make_engine: EngineFactory, workspace: Path, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    configure(
        workspace,
        pre=[("Bash", hook("--child-pids", str(pids), "--sleep", "30"), None)],
        permissions={"allow": ["Bash(touch:*)"]},
    )
    engine = make_engine()
    task = asyncio.ensure_future(run(engine, "Bash", command="touch made"))
    for _ in range(200):
        if pids.exists() and pids.read_text().strip():
            break
        await asyncio.sleep(0.05)
    engine.cancel()
    outcome = await asyncio.wait_for(task, 20)
    assert outcome.status == "interrupted"
    parent, child = (int(p) for p in pids.read_text().split())
    for _ in range(50):
        if not alive(parent) and not alive(child):
            break
        await asyncio.sleep(0.1)
    assert not alive(parent) and not alive(child)
    assert not (workspace / "made").exists()


async def test_several_hooks_run_in_order_and_deny_wins(
    make_engine: EngineFactory, workspace: Path, tmp_path: Path
) -> None:
    rec = tmp_path / "rec.jsonl"
    configure(
        workspace,
        pre=[
            ("*", hook("--record", str(rec), "--stdout", answer(permissionDecision="allow")), None),
            (
                "Bash",
                hook("--record", str(rec), "--stdout", answer(permissionDecision="deny")),
                None,
            ),
        ],
    )
    outcome = await run(make_engine(), "Bash", command="touch made")
    assert outcome.status == "rejected" and outcome.decision_source == "hook"
    assert len(records(rec)) == 2


async def test_plain_stdout_is_shown_to_the_user(
    make_engine: EngineFactory, workspace: Path
) -> None:
    configure(
        workspace,
        pre=[("Bash", hook("--stdout", "checked ok"), None)],
        permissions={"allow": ["Bash(echo:*)"]},
    )
    updates: list = []
    outcome = await run(make_engine(), "Bash", updates, command="echo hi")
    assert outcome.status == "success" and outcome.decision_source == "config"
    assert any(isinstance(u, MessageUpdate) and u.text == "checked ok" for u in updates)


async def test_hooks_report_progress(make_engine: EngineFactory, workspace: Path) -> None:
    configure(workspace, pre=[("Bash", hook(), None)], permissions={"allow": ["Bash(echo:*)"]})
    bridge = ScriptedBridge()
    await run(make_engine(bridge=bridge), "Bash", command="echo hi")
    messages = [e.message for e in bridge.progress if e.kind == "report"]
    assert any(m.startswith("PreToolUse hook: ") and "hook_script.py" in m for m in messages)


# --------------------------------------------------------------------------- PostToolUse


async def test_post_block_gives_the_reason_to_the_model(
    make_engine: EngineFactory, workspace: Path
) -> None:
    out = json.dumps({"decision": "block", "reason": "lint failed: E501"})
    configure(
        workspace,
        post=[("Bash", hook("--stdout", out), None)],
        permissions={"allow": ["Bash(echo:*)"]},
    )
    outcome = await run(make_engine(), "Bash", command="echo hi")
    assert outcome.status == "success" and outcome.is_error
    assert "lint failed: E501" in outcome.text() and "hi" in outcome.text()


async def test_post_exit_2_feeds_stderr_to_the_model(
    make_engine: EngineFactory, workspace: Path
) -> None:
    configure(
        workspace,
        post=[("*", hook("--exit", "2", "--stderr", "tests broke"), None)],
        permissions={"allow": ["Bash(echo:*)"]},
    )
    outcome = await run(make_engine(), "Bash", command="echo hi")
    assert outcome.is_error and "tests broke" in outcome.text()


async def test_post_additional_context(make_engine: EngineFactory, workspace: Path) -> None:
    out = json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": "PostToolUse",
                "additionalContext": "remember the changelog",
            }
        }
    )
    configure(
        workspace,
        post=[("*", hook("--stdout", out), None)],
        permissions={"allow": ["Bash(echo:*)"]},
    )
    outcome = await run(make_engine(), "Bash", command="echo hi")
    assert not outcome.is_error and "remember the changelog" in outcome.text()


async def test_post_updated_mcp_output_only_for_mcp_tools(
    make_engine: EngineFactory, workspace: Path
) -> None:
    out = json.dumps(
        {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedMCPToolOutput": "redacted"}}
    )
    configure(
        workspace,
        post=[("*", hook("--stdout", out), None)],
        permissions={"allow": ["mcp__srv", "Bash(echo:*)"]},
    )
    engine = make_engine()
    mcp = await run(engine, "mcp__srv__do")
    assert mcp.text() == "redacted"
    updates: list = []
    bash = await run(engine, "Bash", updates, command="echo kept")
    assert "kept" in bash.text()
    assert any(isinstance(u, MessageUpdate) and "only for MCP tools" in u.text for u in updates)


async def test_a_broken_post_hook_is_shown_and_the_result_kept(
    make_engine: EngineFactory, workspace: Path
) -> None:
    configure(
        workspace,
        post=[("*", hook("--exit", "1", "--stderr", "kaput"), None)],
        permissions={"allow": ["Bash(echo:*)"]},
    )
    updates: list = []
    engine = make_engine()
    outcome = await run(engine, "Bash", updates, command="echo hi")
    assert outcome.status == "success" and "hi" in outcome.text() and not outcome.is_error
    assert any(isinstance(u, MessageUpdate) and "kaput" in u.text for u in updates)
    # The user sees it (a notification in an editor) — once, however often it fails.
    await run(engine, "Bash", [], command="echo again")
    shown = [(lv, m) for lv, m in engine.bridge.messages if "kaput" in m]  # type: ignore[attr-defined]
    assert [lv for lv, _ in shown] == ["error", "log"]
    assert shown[0][1].startswith("Codev: PostToolUse hook")


async def test_hooks_follow_edited_settings(
    make_engine: EngineFactory, workspace: Path, tmp_path: Path
) -> None:
    engine = make_engine(allow=["Bash(echo:*)"])
    assert (await run(engine, "Bash", command="echo one")).status == "success"
    configure(
        workspace,
        pre=[("Bash", hook("--exit", "2", "--stderr", "now blocked"), None)],
        permissions={"allow": ["Bash(echo:*)"]},
    )
    outcome = await run(engine, "Bash", command="echo two")
    assert outcome.status == "rejected" and "now blocked" in outcome.text()


async def test_a_hook_block_is_in_the_audit_log(
    make_engine: EngineFactory, workspace: Path, tmp_path: Path
) -> None:
    configure(workspace, pre=[("Bash", hook("--exit", "2", "--stderr", "blocked here"), None)])
    engine = make_engine()
    outcome = await run(engine, "Bash", command="touch made")
    log = engine.session.data_dir / "permissions.jsonl"
    (line,) = [json.loads(x) for x in log.read_text().splitlines()]
    assert line["toolUseId"] == outcome.tool_use_id
    assert line["behavior"] == "deny" and line["source"] == "hook"
    assert line["reason"] == "blocked here"

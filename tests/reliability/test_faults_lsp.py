"""Fault injection against the real server over stdio.

- the editor vanishes while a permission question is open → rejected, nothing written;
- the editor vanishes while an applyEdit is unanswered → the file keeps its content;
- the editor vanishes during a long Bash → every process of the command is killed;
- ``kill -9`` of the server in the middle of Writes, many times → the file always
  holds the old or the new content, never a mix;
- a hook and an MCP server that hang → their timeouts fire, and the server keeps
  answering other requests meanwhile.

In each case the server process must end by itself once the editor is gone.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("codev_ls.server", reason="the LSP server is not in this checkout")

from tests.reliability.budget import examples
from tests.reliability.lsp_client import (
    NO_EDITS,
    PLAIN_EDITOR,
    LspProcess,
    apply_changes,
    uri_path,
)


def pid_alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def never_answered(pending: asyncio.Future) -> bool:
    """The editor, gone, got no result (the server could not have sent one)."""
    return not pending.done() or pending.exception() is not None or "result" not in pending.result()


async def wait_until(predicate, timeout: float = 20.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.05)
    return bool(predicate())


def audit_lines(config: Path) -> list[dict]:
    return [
        json.loads(line)
        for path in config.rglob("permissions.jsonl")
        for line in path.read_text().splitlines()
    ]


async def started(workspace: Path, capabilities: dict, mode: str | None = None) -> LspProcess:
    server = await LspProcess.start()
    options = {"permissionMode": mode} if mode else None
    await server.initialize(workspace, capabilities, options)
    return server


# --------------------------------------------------------------------------- the editor vanishes


async def test_vanishing_during_a_permission_question(
    workspace: Path, _isolated_config: Path
) -> None:
    target = workspace / "new.txt"
    server = await started(workspace, PLAIN_EDITOR)
    try:
        pending = server.send("codev/runTool", {"name": "Write", "input": {
            "file_path": str(target), "content": "should never land\n"}})  # fmt: skip
        question = await server.next_request("window/showMessageRequest")
        assert "Write" in question["params"]["message"]
        server.vanish()
        assert await server.wait_exit(30) is not None, "the server outlived its editor"
        assert not target.exists()
        assert never_answered(pending)
        # The run ends as a rejection or is interrupted by the shutdown first; never allowed.
        decisions = [d for d in audit_lines(_isolated_config) if d["tool"] == "Write"]
        assert all(d["behavior"] != "allow" for d in decisions), decisions
    finally:
        await server.close()


async def test_vanishing_during_an_apply_edit(workspace: Path) -> None:
    target = workspace / "code.py"
    target.write_text("def f():\n    return 1\n")
    server = await started(workspace, PLAIN_EDITOR, mode="acceptEdits")
    try:
        server.open(target)
        read = await server.run_tool("Read", {"file_path": str(target)})
        assert read["status"] == "success"
        pending = server.send("codev/runTool", {"name": "Edit", "input": {
            "file_path": str(target), "old_string": "return 1", "new_string": "return 2"}})  # fmt: skip
        edit = await server.next_request("workspace/applyEdit")
        assert edit["params"]["label"].startswith("Codev: Edit")
        server.vanish()  # never answers the applyEdit
        assert await server.wait_exit(30) is not None, "the server outlived its editor"
        assert target.read_text() == "def f():\n    return 1\n"
        assert never_answered(pending)
        assert [p.name for p in workspace.iterdir()] == ["code.py"]  # no temp files left
    finally:
        await server.close()


def pids_running(marker: str) -> list[int]:
    """Processes whose command line holds ``marker`` (the sandbox hides their real pids)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in cmdline and pid_alive(int(entry.name)):
            found.append(int(entry.name))
    return found


async def test_vanishing_during_a_long_bash(workspace: Path) -> None:
    marker = f"{random.randint(1000, 9999)}.{os.getpid()}"
    command = f"sleep 3{marker} & (sleep 4{marker}; true) & echo started; sleep 5{marker}"
    server = await started(workspace, NO_EDITS, mode="bypassPermissions")
    try:
        pending = server.send("codev/runTool", {"name": "Bash", "input": {"command": command}})
        assert await wait_until(lambda: len(pids_running(marker)) >= 3, 30)
        server.vanish()
        assert await server.wait_exit(30) is not None, "the server outlived its editor"
        assert await wait_until(lambda: not pids_running(marker), 15), pids_running(marker)
        assert never_answered(pending)
    finally:
        await server.close()
        for pid in pids_running(marker):
            os.kill(pid, 9)


# --------------------------------------------------------------------------- kill -9 during Write


async def test_kill_9_during_writes_never_leaves_a_mix(workspace: Path) -> None:
    """The server writes the file itself (no applyEdit): atomically, or not at all."""
    target = workspace / "data.txt"
    runs = examples(5)
    rng = random.Random(11)
    old = "old line\n" * 400_000  # 3.6 MB
    outcomes = {"old": 0, "new": 0}
    window = 0.0
    for run in range(runs + 1):
        target.write_text(old)
        new = f"new content of run {run}\n" * 150_000  # ~3.5 MB, different length
        server = await started(workspace, NO_EDITS, mode="acceptEdits")
        try:
            await server.run_tool("Read", {"file_path": str(target), "limit": 1})
            start = time.perf_counter()
            pending = server.send(
                "codev/runTool",
                {"name": "Write", "input": {"file_path": str(target), "content": new}},
            )
            if run == 0:
                # Calibration: how long a whole Write takes here; later runs kill within it.
                response = await asyncio.wait_for(pending, 60)
                assert response["result"]["status"] == "success", response
                window = time.perf_counter() - start
                assert target.read_text() == new
                continue
            await asyncio.sleep(rng.uniform(0, window * 1.2))
            server.kill()
            await server.wait_exit(10)
        finally:
            await server.close()
        got = target.read_text()
        assert got in (old, new), f"run {run}: a mix of {len(got)} characters"
        outcomes["old" if got == old else "new"] += 1
        for leftover in workspace.glob(".data.txt.*.codev-tmp"):
            leftover.unlink()  # a killed writer cannot clean up its temp file; it never is the file
    print(f"kill -9 during Write, {runs} runs: {outcomes}")  # -s shows where the kills landed
    assert sum(outcomes.values()) == runs


# --------------------------------------------------------------------------- hangs


async def test_a_hanging_hook_times_out_and_the_server_keeps_answering(workspace: Path) -> None:
    marker = workspace / "hook-pid"
    hook = f'{sys.executable} -c \'import os,time; open("{marker}","w").write(str(os.getpid())); time.sleep(600)\''
    settings = {"hooks": {"PreToolUse": [{"matcher": "Glob", "hooks": [
        {"type": "command", "command": hook, "timeout": 2}]}]}}  # fmt: skip
    (workspace / ".codev").mkdir()
    (workspace / ".codev" / "settings.json").write_text(json.dumps(settings))
    (workspace / "a.txt").write_text("a\n")
    server = await started(workspace, NO_EDITS)
    # A hook that fails never allows: the user is asked; this one dismisses the question.
    server.auto_answer["window/showMessageRequest"] = None
    try:
        start = time.perf_counter()
        slow = server.send("codev/runTool", {"name": "Glob", "input": {"pattern": "*.txt"}})
        assert await wait_until(marker.exists, 20)
        # While the hook hangs, other requests are answered at once.
        quick_start = time.perf_counter()
        read = await server.run_tool("Read", {"file_path": str(workspace / "a.txt")}, timeout=20)
        tools = await server.request("codev/listTools", {}, timeout=20)
        quick = time.perf_counter() - quick_start
        assert read["status"] == "success" and tools["tools"]
        assert not slow.done(), "the hook did not hang long enough to test anything"
        outcome = (await asyncio.wait_for(slow, 60))["result"]
        elapsed = time.perf_counter() - start
        assert outcome["status"] in ("success", "error", "rejected"), outcome
        assert elapsed < 30, f"the hook's 2 s timeout did not stop it ({elapsed:.0f} s)"
        assert quick < elapsed
        hook_pid = int(marker.read_text())
        assert await wait_until(lambda: not pid_alive(hook_pid), 10), "the hook was not killed"
    finally:
        await server.close()


async def test_a_hanging_mcp_server_times_out_and_the_server_keeps_answering(
    workspace: Path,
) -> None:
    from tests.mcp_support import FAKES, approve_project_servers

    approve_project_servers()
    probe_dir = workspace.parent / "probe"
    probe_dir.mkdir()
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"probe": {
        "command": sys.executable, "args": [str(FAKES / "mcp_servers/probe.py")],
        "env": {"PROBE_DIR": str(probe_dir)}, "timeout": 2000}}}))  # fmt: skip
    (workspace / "a.txt").write_text("a\n")
    server = await started(workspace, NO_EDITS, mode="bypassPermissions")
    try:

        async def probe_listed() -> bool:
            tools = await server.request("codev/listTools", {}, timeout=20)
            return any(t["name"] == "mcp__probe__freeze" for t in tools["tools"])

        deadline = time.monotonic() + 60
        while not await probe_listed():
            assert time.monotonic() < deadline, "the probe MCP server never came up"
            await asyncio.sleep(0.2)
        start = time.perf_counter()
        frozen = server.send("codev/runTool", {"name": "mcp__probe__freeze", "input": {}})
        await asyncio.sleep(0.3)
        read = await server.run_tool("Read", {"file_path": str(workspace / "a.txt")}, timeout=20)
        assert read["status"] == "success"
        assert not frozen.done()
        outcome = (await asyncio.wait_for(frozen, 60))["result"]
        elapsed = time.perf_counter() - start
        assert outcome["status"] == "error", outcome
        assert elapsed < 30, f"the MCP call's 2 s timeout did not fire ({elapsed:.0f} s)"
        again = await server.run_tool("Read", {"file_path": str(workspace / "a.txt")}, timeout=20)
        assert again["status"] == "success"
    finally:
        await server.close()


def test_the_client_helpers_apply_edits() -> None:
    text = "a\nbb\nccc\n"
    edits = [{"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 2}},
              "newText": "XY"}]  # fmt: skip
    assert apply_changes(text, edits) == "a\nXY\nccc\n"
    assert uri_path(Path("/tmp/a b").as_uri()) == Path("/tmp/a b")
    assert os.sep == "/"

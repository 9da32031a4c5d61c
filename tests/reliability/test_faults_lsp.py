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
import contextlib
import json
import os
import random
import signal
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("codev_ls.server", reason="the LSP server is not in this checkout")

from tests.reliability.budget import LONG
from tests.reliability.lsp_client import (
    ANNOTATING_EDITOR,
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
        # A lost editor is a rejection — and the audit log says so.
        decisions = [d for d in audit_lines(_isolated_config) if d["tool"] == "Write"]
        assert [(d["behavior"], d["source"]) for d in decisions] == [("deny", "user_reject")], (
            decisions
        )
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


async def test_vanishing_during_an_annotated_apply_edit(
    workspace: Path, _isolated_config: Path
) -> None:
    """An editor with change annotations: the applyEdit (needsConfirmation) *is* the
    permission question. The editor vanishing before it answers is a rejection."""
    target = workspace / "code.py"
    target.write_text("def f():\n    return 1\n")
    server = await started(workspace, ANNOTATING_EDITOR)
    try:
        read = await server.run_tool("Read", {"file_path": str(target)})
        assert read["status"] == "success"
        pending = server.send("codev/runTool", {"name": "Edit", "input": {
            "file_path": str(target), "old_string": "return 1", "new_string": "return 2"}})  # fmt: skip
        message = await asyncio.wait_for(server.incoming.get(), 30)
        # No separate question: the editor's preview of the edit is the approval.
        assert message["method"] == "workspace/applyEdit", message
        annotations = message["params"]["edit"]["changeAnnotations"]
        assert annotations and all(a["needsConfirmation"] for a in annotations.values())
        server.vanish()  # never answers the applyEdit
        assert await server.wait_exit(30) is not None, "the server outlived its editor"
        assert target.read_text() == "def f():\n    return 1\n"
        assert never_answered(pending)
        assert [p.name for p in workspace.iterdir()] == ["code.py"]  # no temp files left
        sent = [method for method, _ in server.bytes_received]
        assert "window/showMessageRequest" not in sent, sent
        # The preview's provisional approval is logged first; the lost editor's rejection
        # must follow it, or the audit log says the Edit was allowed.
        decisions = [d for d in audit_lines(_isolated_config) if d["tool"] == "Edit"]
        assert decisions and decisions[-1]["behavior"] == "deny", decisions
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

# Runs of the kill -9 test: each starts a server, so CI's count costs about a second a run.
KILL_RUNS = 200 if LONG else 20
TEMP_GLOB = ".data.txt.*.codev-tmp"


def watch_and_kill(
    folder: Path, pid: int | None, delay: float, answered: threading.Event, limit: float = 60
) -> tuple[float | None, float | None]:
    """Poll ``folder`` for the writer's temporary file; ``delay`` seconds after it appears,
    ``kill -9`` the server (``pid``; None: only watch). Returns (seen, gone) times of the
    temporary file (perf_counter). Runs in a thread: the event loop must keep sending the
    request meanwhile. When the Write is answered before any temporary file was seen (the
    poll missed it), the server is killed all the same, after the fact."""
    seen = gone = None
    deadline = time.perf_counter() + limit
    while time.perf_counter() < deadline:
        temps = any(name.endswith(".codev-tmp") for name in os.listdir(folder))
        now = time.perf_counter()
        if temps and seen is None:
            seen = now
            if pid is not None:
                while time.perf_counter() < seen + delay:
                    pass  # a busy wait: sleep() overshoots a sub-millisecond delay
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                return seen, None
        if seen is not None and not temps:
            return seen, now
        if answered.is_set() and seen is None:
            break
        time.sleep(0.0002)
    if pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return seen, gone


@pytest.mark.timeout(0 if LONG else 300)
async def test_kill_9_during_writes_never_leaves_a_mix(workspace: Path) -> None:
    """The server writes the file itself (no applyEdit): atomically, or not at all.

    Each run kills the server as its temporary file appears, or a random moment after —
    most land between the temporary file's creation and its rename, some after — and the
    file must hold exactly the old or the new content. A temporary file left behind
    proves the kill landed mid-write (the rename removes its name)."""
    target = workspace / "data.txt"
    seed = int(os.environ.get("CODEV_KILL_SEED") or random.randrange(2**32))
    rng = random.Random(seed)
    old = "old line\n" * 40_000  # 360 kB
    outcomes: Counter[str] = Counter()
    window = 0.0
    upcoming = asyncio.ensure_future(started(workspace, NO_EDITS, mode="acceptEdits"))
    try:
        for run in range(KILL_RUNS + 1):
            server = await upcoming
            # The next run's server starts while this one writes: start-up is most of a run.
            upcoming = asyncio.ensure_future(started(workspace, NO_EDITS, mode="acceptEdits"))
            new = f"new content of run {run}\n" * 15_000  # 360 kB, another length
            try:
                target.write_text(old)
                read = await server.run_tool("Read", {"file_path": str(target), "limit": 1})
                assert read["status"] == "success", read
                answered = threading.Event()
                calibrating = run == 0
                # Calibration: how long the temporary file lives here; later runs kill
                # within 1.3× that after it appears — every other one at once (the first
                # write's window can be far longer than the later ones', under load).
                delay = 0.0 if calibrating or run % 2 else rng.uniform(0, window * 1.3)
                watcher = asyncio.ensure_future(
                    asyncio.to_thread(
                        watch_and_kill,
                        workspace,
                        None if calibrating else server.pid,
                        delay,
                        answered,
                    )
                )
                pending = server.send(
                    "codev/runTool",
                    {"name": "Write", "input": {"file_path": str(target), "content": new}},
                )
                pending.add_done_callback(lambda _, done=answered: done.set())
                seen, gone = await watcher
                if calibrating:
                    response = await asyncio.wait_for(pending, 60)
                    assert response["result"]["status"] == "success", response
                    assert seen is not None and gone is not None, "no temporary file was seen"
                    window = gone - seen
                    assert target.read_text() == new
                    continue
                assert await server.wait_exit(10) is not None, "kill -9 did not end the server"
            finally:
                await server.close()
            got = target.read_text()
            leftovers = list(workspace.glob(TEMP_GLOB))
            where = f"run {run} (seed {seed}, {delay * 1000:.2f} ms after the temporary file)"
            assert got in (old, new), f"{where}: a mix of {len(got)} characters"
            if leftovers:
                # Killed between the temporary file's creation and the rename.
                assert got == old, f"{where}: a temporary file beside the new content"
                outcomes["killed mid-write: old"] += 1
            elif seen is None:
                outcomes["temporary file missed: " + ("old" if got == old else "new")] += 1
            else:
                outcomes["killed after the rename: " + ("old" if got == old else "new")] += 1
            for leftover in leftovers:
                leftover.unlink()  # a killed writer cannot clean up; it never is the file
    finally:
        with contextlib.suppress(BaseException):
            await (await upcoming).close()
    print(f"kill -9 during Write, {KILL_RUNS} runs (seed {seed}, window {window * 1000:.1f} ms):",
          dict(outcomes))  # fmt: skip
    assert sum(outcomes.values()) == KILL_RUNS
    # Not vacuous: a good share of the kills landed while the temporary file existed.
    assert outcomes["killed mid-write: old"] >= KILL_RUNS // 4, (seed, dict(outcomes))


# --------------------------------------------------------------------------- hangs


async def test_a_hanging_hook_times_out_and_the_server_keeps_answering(
    workspace: Path, _isolated_config: Path
) -> None:
    """A PreToolUse hook that hangs is killed at its timeout; a broken hook never allows:
    the user is asked (saying why), and a dismissed question rejects — the tool never runs."""
    marker = workspace / "hook-pid"
    hook = f'{sys.executable} -c \'import os,time; open("{marker}","w").write(str(os.getpid())); time.sleep(600)\''
    settings = {"hooks": {"PreToolUse": [{"matcher": "Glob", "hooks": [
        {"type": "command", "command": hook, "timeout": 2}]}]}}  # fmt: skip
    (workspace / ".codev").mkdir()
    (workspace / ".codev" / "settings.json").write_text(json.dumps(settings))
    (workspace / "a.txt").write_text("a\n")
    server = await started(workspace, NO_EDITS)
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
        # Glob is read-only: without the broken hook it would run unasked. With it, the
        # user is asked, and told why; this user dismisses the question.
        question = await server.next_request("window/showMessageRequest", timeout=60)
        assert "Glob" in question["params"]["message"], question
        assert "timed out" in question["params"]["message"], question
        server.answer(question, None)
        outcome = (await asyncio.wait_for(slow, 60))["result"]
        elapsed = time.perf_counter() - start
        assert outcome["status"] == "rejected", outcome
        assert outcome.get("decisionSource") == "user_reject", outcome
        assert "a.txt" not in json.dumps(outcome["content"]), "the Glob ran"
        assert elapsed < 30, f"the hook's 2 s timeout did not stop it ({elapsed:.0f} s)"
        assert quick < elapsed
        hook_pid = int(marker.read_text())
        assert await wait_until(lambda: not pid_alive(hook_pid), 10), "the hook was not killed"
        globs = [d for d in audit_lines(_isolated_config) if d["tool"] == "Glob"]
        assert [d["behavior"] for d in globs] == ["deny"], globs
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
    """The fault tests' own editor applies edits as an editor would: several at once,
    bottom-up, including an insertion at the end and a deletion across lines."""
    text = "a\nbb\nccc\n"
    edits = [
        {"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 2}},
         "newText": "XY"},
        {"range": {"start": {"line": 0, "character": 1}, "end": {"line": 1, "character": 0}},
         "newText": "-"},
        {"range": {"start": {"line": 3, "character": 0}, "end": {"line": 3, "character": 0}},
         "newText": "end\n"},
    ]  # fmt: skip
    assert apply_changes(text, edits) == "a-XY\nccc\nend\n"
    assert apply_changes(text, []) == text
    assert uri_path(Path("/tmp/a b/é#1.txt").as_uri()) == Path("/tmp/a b/é#1.txt")

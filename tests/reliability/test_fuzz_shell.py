"""Random shell commands through the permission parser: it never auto-allows what it
does not fully understand — checked against real bash.

The oracle is bash itself. Commands are built from harmless pieces (``echo``,
``ls``, ``cat``...) and one forbidden program, ``pwned``, which leaves a marker
file when it runs; they are combined through every way bash has of running a
command (substitutions, ``eval``, ``bash -c``, ``xargs``, ``find -exec``,
functions, aliases, traps, ``BASH_ENV``, array subscripts evaluated as
arithmetic...) and then mutated character by character. The allow rules cover
only the harmless pieces. For each command and mode:

- parsing and deciding never raise;
- a command the parser does not fully understand is never allowed;
- a command that *is* allowed is run with real bash, and ``pwned`` must not have run.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codev_ls.app import attach_permissions
from codev_ls.bridge import ScriptedBridge
from codev_ls.engine.registry import find_tool
from codev_ls.engine.runtime import Engine
from codev_ls.engine.tool import InputError
from codev_ls.permissions.decide import decide
from codev_ls.permissions.shell import parse_command
from codev_ls.permissions.types import PermissionResult
from tests.fakes.perm_tools import write_settings
from tests.reliability.budget import fuzz_settings

ALLOW = ["Bash(echo:*)", "Bash(ls:*)", "Bash(cat:*)", "Bash(true)", "Bash(printf:*)"]
MODES = ("default", "acceptEdits", "auto", "plan")

SAFE = [
    "echo hi",
    "ls",
    "ls -la",
    "true",
    "cat in.txt",
    "printf '%s\\n' x",
    "grep hello in.txt",
    "wc -l in.txt",
    "head -n 1 in.txt",
    "echo $HOME",
    "cd .",
    "x=1",
    "[[ 1 -eq 1 ]]",
    "test -f in.txt",
]
EVIL = "pwned"
# Ways of running a command {c}, from the plain to the devious.
WRAPS = [
    "echo $({c})",
    "echo `{c}`",
    "bash -c '{c}'",
    'sh -c "{c}"',
    "eval '{c}'",
    'eval "{c}"',
    "env {c}",
    "env -S '{c}'",
    "timeout 5 {c}",
    "nice {c}",
    "command {c}",
    "exec {c}",
    "time {c}",
    "({c})",
    "{{ {c}; }}",
    "{c} &",
    "! {c}",
    "if {c}; then true; fi",
    "for i in 1; do {c}; done",
    "while {c}; do break; done",
    "case x in x) {c};; esac",
    "f() {{ {c}; }}; f",
    "echo {c} | bash",
    "echo {c} | sh",
    "echo {c} | xargs",
    "echo {c} | xargs sh -c",
    "echo {c} | xargs -I% sh -c %",
    "bash <<< '{c}'",
    "cat <<EOF\n$({c})\nEOF",
    "cat <<'EOF'\n$({c})\nEOF",
    "cat <({c})",
    "echo hi > >({c})",
    "[[ -n $({c}) ]]",
    "echo ${{x:-$({c})}}",
    "x=$({c})",
    "trap '{c}' EXIT",
    "find . -maxdepth 0 -exec {c} \\;",
    "awk 'BEGIN {{ system(\"{c}\") }}'",
    "sed -n '1e {c}' in.txt",
    "echo hi | {c}",
    "{c} > out.txt",
    "{c} 2>&1",
    "X={c}; $X",
    "coproc {c}",
    "watch -n 1 -t -g {c}",
]
# Bash features that run a command no word names plainly.
TRICKS = [
    "test -v 'a[$(pwned)]'",
    "[[ -v 'a[$(pwned)]' ]]",
    "[[ 'a[$(pwned)]' -eq 1 ]]",
    "printf -v 'a[$(pwned)]' x",
    "read 'a[$(pwned)]' <<< x",
    "declare 'a[$(pwned)]=1'",
    "echo $(( 'a[$(pwned)]' ))",
    "echo ${a['$(pwned)']}",
    "x='a[$(pwned)]'; [[ x -eq 1 ]]",
    "x='a[$(pwned)]'; [[ $x -eq 1 ]]",
    "shopt -s expand_aliases\nalias ls=pwned\nls",
    "hash -p ./bin/pwned ls; ls",
    "BASH_ENV=payload.sh bash -c true",
    "source payload.sh",
    ". payload.sh",
    "command_not_found_handle() { pwned; }; nosuchprogram",
    "xargs sh -c < cmds.txt",
    "xargs -a cmds.txt sh -c",
    "PATH=./bin ls",
    "PATH=./bin:$PATH; ls",
    "cat in.txt | xargs pwned",
    "enable -n echo; echo",
    "set -o xtrace; PS4='$(pwned)'; true",
    "PROMPT_COMMAND=pwned bash -i -c true",
    "ls -la --color=always | tee >(pwned)",
    "git -c core.pager=pwned log",
    "rg --pre pwned hello in.txt",
    "sort --compress-program=pwned in.txt",
]
JOINS = ["{a} && {b}", "{a} || {b}", "{a}; {b}", "{a} | {b}", "{a}\n{b}", "{a} & {b}"]
NOISE = list(";&|()$`'\"{}<>\\\n *[]=#!~-")


def _wrap(template: str, inner: str) -> str:
    return template.format(c=inner)


def _join(template: str, a: str, b: str) -> str:
    return template.format(a=a, b=b)


leaves = st.sampled_from([*SAFE, *SAFE, EVIL, *TRICKS])
commands = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.builds(_wrap, st.sampled_from(WRAPS), inner),
        st.builds(_join, st.sampled_from(JOINS), inner, inner),
    ),
    max_leaves=5,
)


@st.composite
def mutated(draw: st.DrawFn) -> str:
    """A generated command with a few characters inserted, deleted or replaced."""
    text = draw(commands)
    for _ in range(draw(st.integers(0, 4))):
        pos = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["insert", "delete", "replace"]))
        char = draw(st.sampled_from(NOISE))
        if op == "insert":
            text = text[:pos] + char + text[pos:]
        elif op == "delete":
            text = text[:pos] + text[pos + 1 :]
        else:
            text = text[:pos] + char + text[pos + 1 :]
    return text


# --------------------------------------------------------------------------- the oracle


class Lab:
    """A workspace with the forbidden program and engines in every mode."""

    def __init__(self, root: Path) -> None:
        self.ws = (root / "ws").resolve()
        self.ws.mkdir()
        self.bin = self.ws / "bin"
        self.bin.mkdir()
        self.marker = root.resolve() / "PWNED"
        pwned = self.bin / "pwned"
        pwned.write_text(f"#!/bin/sh\necho ran >> {self.marker}\n")
        pwned.chmod(0o755)
        (self.ws / "in.txt").write_text("hello\npwned\n")
        (self.ws / "payload.sh").write_text("pwned\n")
        (self.ws / "cmds.txt").write_text("pwned\n")
        write_settings(self.ws / ".codev" / "settings.json", {"allow": ALLOW})
        self.loop = asyncio.new_event_loop()
        self.engines: dict[str, Engine] = {}
        for mode in MODES:
            engine = Engine(
                self.ws,
                ScriptedBridge(),
                mode=mode,  # type: ignore[arg-type]
                data_root=root / "data",
            )
            attach_permissions(engine, explicit_mode=True)
            self.engines[mode] = engine
        self.bash = find_tool(self.engines["default"].tool_pool(), "Bash")
        assert self.bash is not None

    def decide(self, mode: str, command: str) -> PermissionResult:
        engine = self.engines[mode]
        tool = self.bash
        assert tool is not None

        async def run() -> PermissionResult:
            try:
                parsed = tool.parse_input({"command": command})
            except InputError as exc:  # refused before any decision (e.g. a lone surrogate)
                return PermissionResult.deny(exc.message)
            ctx = engine.context(tools=[tool])
            own = await tool.check_permissions(parsed, ctx)
            if own.behavior == "deny":
                return own
            return await decide(tool, parsed, ctx, own=own)

        return self.loop.run_until_complete(run())

    def runs_pwned(self, command: str) -> bool:
        """Run ``command`` with real bash in the workspace; did ``pwned`` run?"""
        self.marker.unlink(missing_ok=True)
        env = {
            "PATH": f"{self.bin}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.ws),
            "LANG": "C.UTF-8",
        }
        proc = subprocess.Popen(
            ["bash", "-c", command],
            cwd=self.ws,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            proc.communicate(timeout=10)  # EOF on the pipe: background children are done too
        except subprocess.TimeoutExpired:
            pass
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        return self.marker.exists()

    def close(self) -> None:
        for engine in self.engines.values():
            self.loop.run_until_complete(engine.aclose())
        self.loop.close()


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    mp = pytest.MonkeyPatch()
    mp.setenv("CODEV_CONFIG_DIR", str(tmp_path_factory.mktemp("config")))
    lab = Lab(tmp_path_factory.mktemp("shell-fuzz"))
    yield lab
    lab.close()
    mp.undo()


def check(lab: Lab, command: str, mode: str) -> PermissionResult:
    parsed = parse_command(command)  # never raises
    decision = lab.decide(mode, command)  # never raises
    if decision.behavior == "allow":
        assert parsed.fully_understood, (
            f"{mode}: allowed a command the parser does not fully understand: {command!r} "
            f"({parsed.reasons})"
        )
        assert not lab.runs_pwned(command), (
            f"{mode}: allowed {command!r}, and bash ran the forbidden program "
            f"(decision: {decision.reason})"
        )
    return decision


# --------------------------------------------------------------------------- tests


def test_the_oracle_sees_what_it_must(lab: Lab) -> None:
    """Not vacuous: harmless commands are allowed, the forbidden one runs and is caught."""
    for command in ("echo hi && ls", "cat in.txt | grep hello", "ls -la; true"):
        assert lab.decide("default", command).behavior == "allow", command
        assert not lab.runs_pwned(command)
    for command in ("pwned", "echo $(pwned)", "[[ 'a[$(pwned)]' -eq 1 ]]"):
        assert lab.runs_pwned(command), command
        assert lab.decide("default", command).behavior != "allow", command


@pytest.mark.parametrize("command", TRICKS)
def test_known_tricks_are_never_allowed(lab: Lab, command: str) -> None:
    for mode in MODES:
        check(lab, command, mode)
        if lab.runs_pwned(command):
            assert lab.decide(mode, command).behavior != "allow", (mode, command)


@fuzz_settings(ci=150)
@given(command=commands, mode=st.sampled_from(MODES))
def test_generated_commands(lab: Lab, command: str, mode: str) -> None:
    check(lab, command, mode)


@fuzz_settings(ci=150)
@given(command=mutated(), mode=st.sampled_from(MODES))
def test_mutated_commands(lab: Lab, command: str, mode: str) -> None:
    check(lab, command, mode)


@fuzz_settings(ci=200)
@given(command=st.text(alphabet=st.sampled_from([*NOISE, "a", "e", "x", "1", "/"]), max_size=60))
def test_random_text_never_raises_and_is_not_allowed_blind(lab: Lab, command: str) -> None:
    check(lab, command, "default")


@fuzz_settings(ci=100)
@given(command=st.text(alphabet=st.characters(exclude_categories=()), max_size=200))
def test_any_unicode_never_raises(lab: Lab, command: str) -> None:
    """Every code point, lone surrogates included (JSON can carry "\\ud800")."""
    parsed = parse_command(command)
    assert isinstance(parsed.fully_understood, bool)
    if "\x00" not in command:
        check(lab, command, "default")


def test_inputs_that_crashed_the_bash_grammar(tmp_path: Path) -> None:
    """Found by this fuzzing: tree-sitter-bash's scanner calls C ``isdigit()`` on the
    character after ``{``, and a code point above 255 read past glibc's table (a
    segfault: a dead server). Parsed in a child process, so a crash fails this test
    instead of killing the test run."""
    crashers = ["echo {\U000c7249a", "{\U00100000a", "ls {1..\U000f0000}", "x {12\U000c7249}"]
    script = f"""
from codev_ls.permissions.shell.parse import _parse_cached
for text in {crashers!r}:
    for _ in range(50):
        _parse_cached.cache_clear()
        parsed = _parse_cached(text)
        assert not parsed.fully_understood
print("alive")
"""
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    assert out.stdout.strip() == "alive"

"""The shell parser on what bash evaluates at run time, what sets variables, and wrappers.

Bash evaluates a value as arithmetic in many places (``(( x ))``, ``${!x}``,
``${s:x}``, ``[ -v "$x" ]``, ``printf -v "$x"``, ``declare "$x=1"``), and an
array subscript in that value runs the command inside it (``a[$(cmd)]``): a
line doing that over a run-time value is never fully understood. Builtins that
set variables (``printf -v``, ``read``, ``mapfile``, ``getopts``, quoted
``export "NAME=v"``) are judged like ``NAME=v``. Wrappers that run the rest of
their words are looked through, so a deny rule sees the command they run.
"""

from __future__ import annotations

import pytest

from codev_ls.permissions.shell import (
    is_read_only_command,
    lists_workspace_paths,
    match_rule,
    parse_command,
    recursive_read,
)


def not_understood(command: str) -> str:
    parsed = parse_command(command)
    assert not parsed.fully_understood, command
    return "; ".join(parsed.reasons)


# --------------------------------------------------------------------------- arithmetic


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("(( x ))", "arithmetic command"),
        ("(( i++ ))", "arithmetic command"),
        ("echo ${!x}", "indirect expansion"),
        ('echo "${s:i:2}"', "offsets"),
        ("echo ${s:${#y}}", "offsets"),
        ('[ -v "$x" ]', "-v"),
        ("[[ -v $x ]]", "-v"),
        ('test -v "$x"', "-v"),
    ],
)
def test_arithmetic_over_run_time_values_is_not_understood(command: str, why: str) -> None:
    assert why in not_understood(command)
    assert not is_read_only_command(command)


@pytest.mark.parametrize(
    "command",
    [
        "(( 1 + 2 ))",
        "echo ${!prefix*}",
        "echo ${!arr[@]}",
        "echo ${s:1:2}",
        "echo ${s: -1}",
        "echo ${s:-default}",
        "echo ${s:+alt}",
        "test -v HOME",
        "echo $(( 6 * 7 ))",
    ],
)
def test_arithmetic_over_literals_stays_understood(command: str) -> None:
    assert parse_command(command).fully_understood, parse_command(command).reasons


def test_listings_of_names_stay_read_only() -> None:
    assert is_read_only_command("echo ${!arr[@]} ${s:0:3}")


# --------------------------------------------------------------------------- builtins that set variables


def assignments(command: str) -> list[tuple[tuple[str, str], ...]]:
    return [c.env for c in parse_command(command).commands if c.assignment_only]


@pytest.mark.parametrize(
    ("command", "name"),
    [
        ("printf -v PATH %s bin", "PATH"),
        ("read PATH", "PATH"),
        ("read -r -p 'x? ' PATH", "PATH"),
        ("read -a PATH", "PATH"),
        ("mapfile -t PATH < f", "PATH"),
        ("readarray PATH < f", "PATH"),
        ("getopts ab PATH", "PATH"),
        ('export "PATH=bin"', "PATH"),
        ("declare 'PATH=bin'", "PATH"),
        ("export P\\ATH=bin", "PATH"),
    ],
)
def test_builtins_that_set_a_variable_are_assignments(command: str, name: str) -> None:
    names = [k for env in assignments(command) for k, _ in env]
    assert name in names
    # PATH set this way re-points every later command: never read-only.
    assert not is_read_only_command(f"{command}; ls")


def test_read_without_a_name_sets_reply_and_safe_names_stay_read_only() -> None:
    assert [k for env in assignments("read -r") for k, _ in env] == ["REPLY"]
    assert [k for env in assignments("mapfile -t < f") for k, _ in env] == ["MAPFILE"]
    assert is_read_only_command('printf -v now %s x; echo "$now"')
    assert is_read_only_command("export LANG=C; ls")


@pytest.mark.parametrize(
    "command",
    [
        'printf -v "$x" hi',
        'read "a[$(id)]"',
        'declare "$x=1"',
        'export "$x"=1',
        'local "$x"',
        "export $(cat .env | xargs)",
    ],
)
def test_a_variable_named_at_run_time_is_not_understood(command: str) -> None:
    assert "variable" in not_understood(command)


def test_mapfile_callback_is_not_understood() -> None:
    assert "callback" in not_understood("mapfile -C cb -c 1 lines < f")


# --------------------------------------------------------------------------- wrappers


@pytest.mark.parametrize(
    ("command", "wrapper"),
    [
        ("setsid rm x", "setsid"),
        ("setsid -f rm x", "setsid"),
        ("ionice -c 3 rm x", "ionice"),
        ("ionice -c3 -n7 rm x", "ionice"),
        ("taskset -c 0 rm x", "taskset"),
        ("taskset 0x1 rm x", "taskset"),
        ("chrt -o 0 rm x", "chrt"),
        ("chrt -f 10 rm x", "chrt"),
        ("busybox rm x", "busybox"),
        ("flock /tmp/lock rm x", "flock"),
        ("flock -n -w 5 /tmp/lock rm x", "flock"),
        ("flock /tmp/lock -c 'rm x'", "flock -c"),
    ],
)
def test_wrappers_run_the_command_that_rules_see(command: str, wrapper: str) -> None:
    parsed = parse_command(command)
    assert parsed.fully_understood, parsed.reasons
    (cmd,) = parsed.commands
    assert cmd.argv == ("rm", "x")
    assert wrapper in cmd.wrappers
    assert match_rule("rm:*", cmd, "deny")
    assert not match_rule("echo:*", cmd, "allow")


def test_flock_creates_its_lock_file() -> None:
    parsed = parse_command("flock build.lock make")
    assert "build.lock" in [r.target for r in parsed.redirects if r.writes_file]
    assert parse_command("flock 9 make").redirects == ()  # a file descriptor, no file
    assert not_understood('flock "$LOCK" make')  # a lock file named at run time


def test_wrappers_of_read_only_commands_stay_read_only() -> None:
    assert is_read_only_command("setsid ls")
    assert is_read_only_command("ionice -c 3 grep -rn TODO src")
    assert not is_read_only_command("setsid rm x")


@pytest.mark.parametrize("command", ["ionice --bogus rm x", "taskset --weird rm x"])
def test_wrapper_options_not_understood_ask(command: str) -> None:
    assert not parse_command(command).fully_understood


# --------------------------------------------------------------------------- recursive reads


@pytest.mark.parametrize(
    ("command", "folders", "default_cwd"),
    [
        ("grep -r x src", ["x", "src"], True),
        ("grep -rn x", ["x"], True),
        ("grep --recursive x lib", ["x", "lib"], True),
        ("grep -d recurse x .", ["recurse", "x", "."], True),
        ("rg x", ["x"], True),
        ("git grep x", ["grep", "x"], True),
        ("find src -name '*.py' -exec cat {} +", ["src"], True),
        ("find . | xargs cat", [], True),
        ("cp -r src /tmp/x", ["src", "/tmp/x"], False),
        ("tar czf out.tgz .", ["czf", "out.tgz", "."], False),
    ],
)
def test_recursive_reads(command: str, folders: list[str], default_cwd: bool) -> None:
    """The words that may be folders (generous: a pattern too; only folders that exist
    are scanned)."""
    cmds = parse_command(command).commands
    cmd = cmds[-1] if "xargs" in command else cmds[0]
    found = recursive_read(cmd)
    assert found is not None
    assert [a.word for a in found.folders] == folders
    assert found.default_cwd is default_cwd


@pytest.mark.parametrize(
    "command", ["grep x file.txt", "cat a b", "find . -name x", "ls -R", "cp a b", "xargs rm"]
)
def test_not_recursive_reads(command: str) -> None:
    assert recursive_read(parse_command(command).commands[-1]) is None


@pytest.mark.parametrize(
    ("command", "lists"),
    [
        ("find . -name '*.py'", True),
        ("git ls-files", True),
        ("git diff --name-only", True),
        ("rg -l TODO", True),
        ("sort", True),
        ("head -5", True),
        ("grep -v test", True),
        ("echo /etc/passwd", False),
        ("cat list.txt", False),
        ("sed s/a/b/", False),
        ("grep -o etc/passwd", False),
        ("head list.txt", False),
        ("find . -exec cat {} +", False),
    ],
)
def test_what_feeds_xargs_file_names(command: str, lists: bool) -> None:
    cmd = parse_command(command).commands[0]
    assert lists_workspace_paths(cmd) is lists


# --------------------------------------------------------------------------- code run later


def test_trap_runs_its_script_as_commands_of_their_own() -> None:
    (cmd,) = parse_command("trap 'rm x' EXIT").commands
    assert cmd.argv == ("rm", "x") and cmd.wrappers == ("trap",)
    assert match_rule("rm:*", cmd, "deny")
    assert is_read_only_command("trap 'echo bye' EXIT; ls")
    for command in ("trap -p", "trap - EXIT", "trap INT"):
        assert [c.argv[0] for c in parse_command(command).commands] == ["trap"]
    assert "run time" in not_understood('trap "$x" EXIT')


@pytest.mark.parametrize(
    "command",
    [
        "PS4='$(rm x)'; set -x; true",
        'export "PS4=`rm x`"',
        "printf -v PS4 x",
        "PROMPT_COMMAND='rm x' bash -i -c true",
        "env PS4='$(rm x)' bash -xc true",
        "shopt -s expand_aliases; alias ll='rm x'",
    ],
)
def test_code_bash_runs_later_is_not_understood(command: str) -> None:
    assert not_understood(command)


def test_plain_prompt_values_and_alias_listings_stay_understood() -> None:
    assert parse_command("export PS4='+ '").fully_understood
    assert parse_command("alias; alias ll").fully_understood


# --------------------------------------------------------------------------- read loops, tar


@pytest.mark.parametrize(
    "command",
    [
        'while IFS= read -r line; do echo "$line"; done < src/a.py',
        'mapfile -t lines < src/a.py; echo "${lines[@]}"',
        "read -r -p 'Name? ' name",
        "IFS=, read -r a b <<< 'x,y'",
        "getopts ab opt",
    ],
)
def test_reading_into_variables_is_read_only(command: str) -> None:
    assert is_read_only_command(command), parse_command(command).reasons


def test_ifs_is_safe_only_as_a_prefix() -> None:
    assert is_read_only_command("IFS=: ls")
    assert not is_read_only_command("IFS=:; ls")


@pytest.mark.parametrize(
    ("command", "packs"),
    [
        ("tar czf out.tgz .", True),
        ("tar -czf out.tgz src", True),
        ("tar --create -f x.tar .", True),
        ("tar rf x.tar .", True),
        ("tar xzf a.tgz -C .", False),
        ("tar -xf a.tar", False),
        ("tar tf a.tar", False),
        ("7z a x.7z .", True),
        ("7z x a.7z", False),
    ],
)
def test_only_packing_reads_a_folder(command: str, packs: bool) -> None:
    assert (recursive_read(parse_command(command).commands[0]) is not None) is packs

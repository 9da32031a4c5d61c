"""The shell parser: compound forms, quoting, look-through, read-only set, rules."""

from __future__ import annotations

import os

import pytest

from codev_ls.permissions.shell import (
    classify_command,
    is_read_only_command,
    match_rule,
    parse_command,
    read_only_problem,
)


def argvs(command: str) -> list[tuple[str, ...]]:
    return [c.argv for c in parse_command(command).commands]


# --------------------------------------------------------------------------- splitting


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("ls && rm x", [("ls",), ("rm", "x")]),
        ("ls || rm x", [("ls",), ("rm", "x")]),
        ("ls; rm x", [("ls",), ("rm", "x")]),
        ("ls | rm x", [("ls",), ("rm", "x")]),
        ("ls |& rm x", [("ls",), ("rm", "x")]),
        ("ls & rm x", [("ls",), ("rm", "x")]),
        ("ls\nrm x", [("ls",), ("rm", "x")]),
        ("(ls; rm x)", [("ls",), ("rm", "x")]),
        ("{ ls; rm x; }", [("ls",), ("rm", "x")]),
        ("! rm x", [("rm", "x")]),
        ("if ls; then rm x; else rm y; fi", [("ls",), ("rm", "x"), ("rm", "y")]),
        ("while ls; do rm x; done", [("ls",), ("rm", "x")]),
        ("case a in a) rm x;; esac", [("rm", "x")]),
        ("ls # rm x", [("ls",)]),
    ],
)
def test_compound_forms_yield_every_simple_command(command: str, expected: list) -> None:
    parsed = parse_command(command)
    assert parsed.fully_understood, parsed.reasons
    assert argvs(command) == expected


@pytest.mark.parametrize(
    "command",
    [
        "echo $(rm x)",
        "echo `rm x`",
        'echo "$(rm x)"',
        "cat <(rm x)",
        "tee >(rm x)",
        "x=$(rm x)",
        "echo ${y:-$(rm x)}",
        "cat <<EOF\n$(rm x)\nEOF\n",
        "for f in $(rm x); do echo $f; done",
        "[[ -n $(rm x) ]]",
        "ls 2> >(rm x)",
    ],
)
def test_substitutions_yield_their_inner_commands(command: str) -> None:
    assert ("rm", "x") in argvs(command)


def test_quoted_heredoc_body_is_data() -> None:
    parsed = parse_command("cat <<'EOF'\n$(rm x)\nEOF\n")
    assert argvs(parsed.source) == [("cat",)]
    assert parsed.fully_understood


# --------------------------------------------------------------------------- words


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("'rm' x", ("rm", "x")),
        ('"rm" x', ("rm", "x")),
        ("r\\m x", ("rm", "x")),
        ("\\rm x", ("rm", "x")),
        ("r''m x", ("rm", "x")),
        ("$'\\x72m' x", ("rm", "x")),
        ("$'\\162m' x", ("rm", "x")),
        ('echo "a\\"b"', ("echo", 'a"b')),
        ("echo a\\ b", ("echo", "a b")),
        ("echo 'a b' c", ("echo", "a b", "c")),
    ],
)
def test_quote_removal(command: str, argv: tuple) -> None:
    assert argvs(command) == [argv]


def test_tilde_expands_to_home() -> None:
    (cmd,) = parse_command("cat ~/notes.txt").commands
    assert cmd.argv[1] == os.path.expanduser("~/notes.txt")
    assert not cmd.dynamic


def test_dynamic_words_are_marked() -> None:
    (cmd,) = parse_command("ls $HOME *.py {a,b} ~+").commands
    assert cmd.dynamic == {1, 2, 3, 4}


def test_redirections_and_env() -> None:
    (cmd,) = parse_command("FOO=1 echo hi > out.txt 2>&1 < in.txt").commands
    assert cmd.env == (("FOO", "1"),)
    assert cmd.argv == ("echo", "hi")
    ops = {(r.op, r.target, r.kind) for r in cmd.redirects}
    assert (">", "out.txt", "write") in ops
    assert (">&", "1", "dup") in ops
    assert ("<", "in.txt", "read") in ops
    parsed = parse_command("FOO=1 echo hi > out.txt 2>&1 < in.txt")
    assert parsed.write_targets() == ["out.txt"]
    assert parsed.read_targets() == ["in.txt"]


def test_group_redirection_is_a_write() -> None:
    assert parse_command("{ ls; pwd; } > all.txt").write_targets() == ["all.txt"]
    assert sorted(parse_command("ls >> log && cat x &> both").write_targets()) == ["both", "log"]
    assert parse_command("ls > /dev/null 2>/dev/null").write_targets() == []


# --------------------------------------------------------------------------- look-through


@pytest.mark.parametrize(
    ("command", "wrappers"),
    [
        ("bash -c 'rm x'", ("bash -c",)),
        ("sh -c 'rm x'", ("sh -c",)),
        ("bash -lc 'rm x'", ("bash -c",)),
        ("eval 'rm x'", ("eval",)),
        ("eval rm x", ("eval",)),
        ("xargs rm x", ("xargs",)),
        ("env rm x", ("env",)),
        ("env -i A=1 rm x", ("env",)),
        ("nohup rm x", ("nohup",)),
        ("timeout 5 rm x", ("timeout",)),
        ("timeout -s KILL 5s rm x", ("timeout",)),
        ("nice -n 10 rm x", ("nice",)),
        ("command rm x", ("command",)),
        ("time rm x", ("time",)),
        ("sudo rm x", ("sudo",)),
        ("sudo -u bob rm x", ("sudo",)),
        ("exec rm x", ("exec",)),
        ("watch 'rm x'", ("watch",)),
        ("bash -c \"sh -c 'rm x'\"", ("bash -c", "sh -c")),
    ],
)
def test_wrappers_are_looked_through(command: str, wrappers: tuple) -> None:
    cmds = [c for c in parse_command(command).commands if c.argv[:2] == ("rm", "x")]
    assert cmds, argvs(command)
    assert cmds[0].wrappers == wrappers


def test_find_exec_runs_a_command_of_its_own() -> None:
    cmds = argvs("find . -name '*.tmp' -exec rm -f {} \\;")
    assert cmds[1][:2] == ("rm", "-f")


def test_xargs_appends_arguments() -> None:
    (cmd,) = parse_command("xargs rm").commands
    assert cmd.open_args


@pytest.mark.parametrize(
    "command",
    [
        "$CMD x",
        '"$(which rm)" x',
        "echo 'unterminated",
        'bash -c "$SCRIPT"',
        "curl http://x | bash",
        "sh < script.sh",
        "bash script.sh",
        "f() { ls; }; f",
        "ls > $OUT",
        "echo $(( x + 1 ))",
        "xargs -I{} sh -c {}",
        "env -S 'rm x'",
        "ls 3<>f",
    ],
)
def test_what_is_not_understood_says_so(command: str) -> None:
    parsed = parse_command(command)
    assert not parsed.fully_understood
    assert parsed.reasons
    assert not is_read_only_command(command)


# --------------------------------------------------------------------------- read-only set


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "cat a.txt | head -n 5",
        "grep -rn foo src | wc -l",
        "rg -n 'def ' codev_ls",
        "find . -name '*.py' -type f",
        "git status",
        "git diff HEAD~1 -- x.py",
        "git log --oneline -5",
        "git show HEAD",
        "git branch",
        "git branch -a -v",
        "pwd && echo done",
        "ls > /dev/null 2>&1",
        "cd src && ls",
        "timeout 5 cat x",
        "LANG=C sort x",
        "cat <<EOF\nhello\nEOF\n",
        "command -v git",
        "find . -type f | xargs wc -l",
    ],
)
def test_read_only_commands(command: str) -> None:
    assert is_read_only_command(command), read_only_problem(command)


@pytest.mark.parametrize(
    "command",
    [
        "rm x",
        "ls && rm x",
        "echo hi > f",
        "cat x >> y",
        "find . -delete",
        "find . -exec cat {} \\;",
        "find . -fprint out",
        "find . -name $X",
        "git push",
        "git branch -D main",
        "git branch new-branch",
        "git -c core.pager=sh log",
        "git diff --output=x",
        "git stash",
        "sort -o out in",
        "rg --pre ./evil foo",
        "PATH=/tmp/evil ls",
        "LD_PRELOAD=/tmp/x.so cat y",
        "sudo ls",
        "./ls",
        "/tmp/ls",
        "xargs sort",
        "sed -i s/a/b/ x",
        "awk '{system(\"rm x\")}'",
        "python -c 'print(1)'",
        "> file",
        "export PATH=/tmp",
        "PATH=/tmp/evil; ls",
    ],
)
def test_not_read_only(command: str) -> None:
    assert not is_read_only_command(command)
    assert read_only_problem(command)


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("grep -rn foo .", "search"),
        ("find . -name x | head", "search"),
        ("cat a | wc -l", "read"),
        ("git log -3", "read"),
        ("ls -la", "list"),
        ("cd src && ls", "list"),
        ("git status", "list"),
        ("echo hi", None),
        ("rm x", None),
        ("cat x > y", None),
    ],
)
def test_classify(command: str, kind: str | None) -> None:
    assert classify_command(command) == kind


# --------------------------------------------------------------------------- rules


def matches(spec: str, command: str, kind: str = "allow") -> list[bool]:
    return [match_rule(spec, c, kind) for c in parse_command(command).commands]  # type: ignore[arg-type]


def test_prefix_rules_match_on_word_boundaries() -> None:
    assert matches("ls:*", "ls -la") == [True]
    assert matches("ls:*", "ls") == [True]
    assert matches("ls:*", "lsblk") == [False]
    assert matches("npm run test:*", "npm run test -- --watch") == [True]
    assert matches("npm run test:*", "npm run testing") == [False]
    assert matches("git commit *", "git commit -m x") == [True]


def test_exact_rules() -> None:
    assert matches("npm test", "npm test") == [True]
    assert matches("npm test", "npm test --x") == [False]
    assert matches("npm test", "xargs npm test") == [False]  # xargs adds arguments


def test_allow_needs_static_words_and_safe_env() -> None:
    assert matches("git push:*", "git $X origin") == [False]
    assert matches("echo:*", "echo $HOME") == [True]
    assert matches("npm test", "LANG=C npm test") == [True]
    assert matches("npm test", "NODE_OPTIONS=--require=x npm test") == [False]
    assert matches("FOO=1 npm test", "FOO=1 npm test") == [True]
    assert matches("rm:*", "sudo rm x") == [False]
    assert matches("sudo rm:*", "sudo rm x") == [True]
    assert matches("ls:*", "./ls") == [False]


def test_deny_errs_towards_matching() -> None:
    assert matches("rm:*", "/bin/rm x", "deny") == [True]
    assert matches("rm:*", "RM x", "deny") == [True]
    assert matches("rm:*", "sudo timeout 5 rm x", "deny") == [True]
    assert matches("git push:*", "git $X origin", "deny") == [True]
    assert matches("*gcloud*", "gcloud -h", "deny") == [True]
    assert matches("bash:*", "bash -c 'ls'", "deny") == [True]
    assert matches("git clean:*", "git fetch && git clean -fd", "deny") == [False, True]


def test_wrapper_named_by_the_rule_still_allows() -> None:
    assert matches("timeout 5 make auto:*", "timeout 5 make auto -j2") == [True]
    assert matches("make auto:*", "timeout 5 make auto -j2") == [True]


# --------------------------------------------------------------------------- parser/bash disagreements


@pytest.mark.parametrize(
    "command", ["rm\r-rf x", "echo hi\x0btouch x", "ls\x0c-la", "echo \x1b[31m"]
)
def test_control_characters_are_never_understood(command: str) -> None:
    parsed = parse_command(command)
    assert not parsed.fully_understood
    assert "control character" in parsed.reasons[-1]


def test_env_of_a_wrapper_reaches_the_commands_it_runs() -> None:
    (echo,) = parse_command("BASH_ENV=evil.sh bash -c 'echo hi'").commands
    assert echo.argv == ("echo", "hi") and ("BASH_ENV", "evil.sh") in echo.env
    cmds = parse_command("PATH=bin find . -exec ls \\;").commands
    assert all(("PATH", "bin") in c.env for c in cmds)
    assert matches("echo:*", "BASH_ENV=evil.sh bash -c 'echo hi'") == [False]
    assert matches("echo:*", "LANG=C bash -c 'echo hi'") == [True]


def test_wildcards_inside_a_rule() -> None:
    assert matches("git * main", "git push origin main") == [True]
    assert matches("git * main", "git push origin main && rm x") == [True, False]
    assert matches("git * main", "git push $REMOTE main") == [False]  # run-time word
    assert matches("* --version", "node --version") == [True]
    assert matches("git * main", "sudo git push origin main") == [False]
    assert matches("wc:*", "wc -l part{1,2,3}.diff") == [True]  # claude-code#46785
    # claude-code#56816: a path-scoped deny must fire, `~` included
    assert matches("grep * /etc/*", "grep root /etc/passwd", "deny") == [True]
    assert matches("grep * ~/.*", "grep export ~/.bashrc", "deny") == [True]
    assert matches("grep * /etc/*", "grep root src/x", "deny") == [False]
    assert matches("echo [x]*", "echo '[x]' y") == [True]  # only `*` is special
    assert matches("echo [x]*", "echo x y") == [False]

"""Which commands destroy data, and where a program's subcommand is.

Both are about *what a command is*, for messages and suggestions, never for a
permission: ``is_destructive_words`` drives the Bash tool's destructive flag
and keeps "Always allow" from offering ``Bash(rm:*)`` for ``rm -rf build``;
``subcommand_index`` skips a program's global options (``git -C . push``,
``kubectl --context prod delete``) to find the subcommand a rule should name.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

# Global options (before the subcommand) of programs with subcommands: those that take
# a value (the next word, unless given as --opt=value), and those that do not.
GLOBAL_OPTIONS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "git": (
        frozenset(
            {
                "-C",
                "-c",
                "--git-dir",
                "--work-tree",
                "--namespace",
                "--config-env",
                "--super-prefix",
                "--exec-path",
                "--attr-source",
                "--list-cmds",
            }
        ),
        frozenset(
            {
                "-P",
                "-p",
                "--paginate",
                "--no-pager",
                "--bare",
                "--no-replace-objects",
                "--literal-pathspecs",
                "--glob-pathspecs",
                "--noglob-pathspecs",
                "--icase-pathspecs",
                "--no-optional-locks",
                "--no-lazy-fetch",
                "--no-advice",
            }
        ),
    ),
    "kubectl": (
        frozenset(
            {
                "--context",
                "-n",
                "--namespace",
                "--kubeconfig",
                "-s",
                "--server",
                "--cluster",
                "--user",
                "--token",
                "--as",
                "--as-group",
                "-v",
                "--v",
                "--request-timeout",
                "--certificate-authority",
                "--client-certificate",
                "--client-key",
                "--tls-server-name",
                "--cache-dir",
                "--profile",
            }
        ),
        frozenset({"--insecure-skip-tls-verify", "--warnings-as-errors"}),
    ),
    "helm": (
        frozenset(
            {
                "-n",
                "--namespace",
                "--kube-context",
                "--kubeconfig",
                "--kube-apiserver",
                "--kube-token",
                "--registry-config",
                "--repository-config",
            }
        ),
        frozenset({"--debug"}),
    ),
    "docker": (
        frozenset(
            {
                "-H",
                "--host",
                "-c",
                "--context",
                "--config",
                "-l",
                "--log-level",
                "--tlscacert",
                "--tlscert",
                "--tlskey",
            }
        ),
        frozenset({"-D", "--debug", "--tls", "--tlsverify"}),
    ),
    "npm": (
        frozenset(
            {
                "-w",
                "--workspace",
                "--prefix",
                "-C",
                "--loglevel",
                "--registry",
                "--userconfig",
                "--cache",
            }
        ),
        frozenset(
            {
                "-s",
                "--silent",
                "-q",
                "--quiet",
                "-d",
                "-dd",
                "--verbose",
                "-g",
                "--global",
                "-ws",
                "--workspaces",
                "-y",
                "--yes",
                "--json",
                "-f",
                "--force",
                "--no-audit",
                "--no-fund",
            }
        ),
    ),
    "cargo": (
        frozenset({"-C", "--config", "-Z", "--color"}),
        frozenset({"-v", "-vv", "--verbose", "-q", "--quiet", "--frozen", "--locked", "--offline"}),
    ),
}
GLOBAL_OPTIONS["podman"] = GLOBAL_OPTIONS["docker"]
GLOBAL_OPTIONS["pnpm"] = GLOBAL_OPTIONS["npm"]
GLOBAL_OPTIONS["yarn"] = GLOBAL_OPTIONS["npm"]


def subcommand_index(words: Sequence[str]) -> int | None:
    """The index of the subcommand in ``words`` (``git -C . push`` → 3), skipping the
    program's known global options; None when an option is not known (where the
    subcommand starts is then a guess) or there is none."""
    if not words:
        return None
    name = os.path.basename(words[0])
    valued, flags = GLOBAL_OPTIONS.get(name, (frozenset(), frozenset()))
    i = 1
    while i < len(words) and words[i].startswith("-"):
        word = words[i]
        key = word.split("=", 1)[0]
        if key in valued:
            i += 1 if "=" in word or (len(key) == 2 and len(word) > 2) else 2
        elif word in flags:
            i += 1
        elif name == "git" and key in ("-C", "-c") and len(word) > 2:
            i += 1  # `-C.` / `-cx=y`
        else:
            return None
    return i if i < len(words) else None


def is_destructive_words(words: tuple[str, ...]) -> bool:
    if not words:
        return False
    name = os.path.basename(words[0])
    args = list(words[1:])
    flags = {a for a in args if a.startswith("-")}
    if name in ("rm", "shred", "unlink", "srm", "wipefs", "fdisk", "sfdisk", "parted", "dd"):
        return True
    if name in ("truncate", "mkswap", "crontab") and (name != "crontab" or "-r" in flags):
        return True
    if name.startswith("mkfs") or name == "mke2fs":
        return True
    if name == "mv":
        return not ({"-n", "--no-clobber"} & flags)
    if name == "find":
        return "-delete" in args or any(
            a in ("-exec", "-execdir", "-ok")
            and i + 1 < len(args)
            and args[i + 1] in ("rm", "shred")
            for i, a in enumerate(args)
        )
    if name == "rsync":
        return any(a.startswith("--delete") or a == "--remove-source-files" for a in args)
    if name == "git":
        return _is_destructive_git(args)
    if name in GLOBAL_OPTIONS:
        args = args[subcommand_index(words) - 1 :] if subcommand_index(words) else args
    if name in ("docker", "podman"):
        return bool(args) and (
            args[0] in ("rm", "rmi")
            or args[:2] in (["system", "prune"], ["volume", "rm"], ["volume", "prune"])
            or args[:2] in (["image", "prune"], ["container", "prune"])
        )
    if name == "kubectl":
        return bool(args) and args[0] == "delete"
    if name == "terraform":
        return bool(args) and args[0] == "destroy"
    return False


def _is_destructive_git(args: list[str]) -> bool:
    index = subcommand_index(("git", *args))
    if index is None:
        # Unknown global options: guess that each takes no value (errs towards a warning).
        i = 0
        while i < len(args) and args[i].startswith("-"):
            i += 2 if args[i] in ("-C", "-c", "--git-dir", "--work-tree") else 1
        if i >= len(args):
            return False
        index = i + 1
    sub, rest = args[index - 1], args[index:]
    flags = set(rest)
    if sub == "reset":
        return "--hard" in flags or "--merge" in flags or "--keep" in flags
    if sub == "push":
        return bool(
            {"--force", "-f", "--delete", "-d", "--mirror", "--prune"} & flags
            or any(a.startswith("--force-with-lease") or a.startswith("+") for a in rest)
            or any(a.startswith(":") and len(a) > 1 for a in rest)
        )
    if sub == "clean":
        return not ({"-n", "--dry-run"} & flags)
    if sub == "checkout":
        return "--" in rest or "." in rest or "-f" in flags or "--force" in flags
    if sub == "restore":
        return "--staged" not in flags or "--worktree" in flags or "-W" in flags
    if sub == "branch":
        return "-D" in flags or ("--delete" in flags and ("--force" in flags or "-f" in flags))
    if sub == "stash":
        return bool(rest) and rest[0] in ("drop", "clear")
    if sub in ("filter-branch", "filter-repo"):
        return True
    if sub == "update-ref":
        return "-d" in flags
    return False

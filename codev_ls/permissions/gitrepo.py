"""Which repository a git command would use, and whether its config can be trusted.

A git repository's config names programs git runs even for reading commands:
``core.fsmonitor`` (``git status``, ``git diff``), ``diff.external`` and
textconv drivers (``git diff``/``log -p``/``show``), clean filters (``git
status``), ``log.showSignature`` with ``gpg.program`` (``git log``)... So a
"read-only" ``git status`` runs whatever the repository's config says, and a
config the model could write is code the model chose.

The workspace's own ``.git/`` is a protected path: nothing writes it without
the user's say. A repository planted elsewhere in the workspace is not: a
bare-repository layout (``HEAD``, ``objects/``, ``refs/``, ``config``) written
under ``Edit(src/**)``, a ``.git`` file pointing at such a folder, a nested
clone unpacked from an archive. So git commands only count as judged by the
read-only set or an allow rule when the repository git finds from the working
folder is the workspace root's own (its ``.git`` folder, or a worktree or
submodule kept inside it), or lies outside the workspace folders altogether
(a workspace that is a folder of a bigger repository). Any other repository
asks.

Discovery follows git's: from the working folder up, the first folder holding
``.git`` (a folder, or a file ``gitdir: PATH``) or looking like a bare
repository (HEAD, and objects/ and refs/ in the folder its ``commondir`` file
names, or in itself) is the repository. The ``commondir`` is judged too: its
config is the one git reads.
"""

from __future__ import annotations

import os
from pathlib import Path

from codev_ls.permissions.paths import WORKTREES_DIR, is_inside, real_path


def find_git_dir(cwd: Path) -> tuple[Path, Path] | None:
    """(the folder git finds the repository from, the git directory), or None."""
    current = real_path(cwd)
    while True:
        dotgit = current / ".git"
        if os.path.lexists(dotgit):
            if os.path.isdir(dotgit):
                return current, real_path(dotgit)
            gitdir = _gitfile_target(dotgit, current)
            return current, gitdir if gitdir is not None else real_path(dotgit)
        if _looks_bare(current):
            return current, current
        if current.parent == current:
            return None
        current = current.parent


def _gitfile_target(path: Path, base: Path) -> Path | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")[:4096]
    except OSError:
        return None
    first = text.splitlines()[0] if text else ""
    if not first.startswith("gitdir:"):
        return None
    return real_path(first[len("gitdir:") :].strip(), base)


def _looks_bare(folder: Path) -> bool:
    """git's test for a repository folder (``is_git_directory``): HEAD in the folder,
    objects/ and refs/ in its *common* folder — the folder itself, or the one its
    ``commondir`` file names (a folder holding only HEAD and commondir is a repository
    whose config is the common folder's)."""
    if not os.path.isfile(folder / "HEAD"):
        return False
    common = _common_dir(folder)
    return os.path.isdir(common / "objects") and os.path.isdir(common / "refs")


def _common_dir(gitdir: Path) -> Path:
    """A linked worktree's git directory names the main one in ``commondir``."""
    try:
        text = (gitdir / "commondir").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return gitdir
    return real_path(text, gitdir) if text else gitdir


def repository_problem(
    cwd: Path, root: Path, workspace: list[Path], git_dir: Path | None = None
) -> str | None:
    """Why git run in ``cwd`` (with ``--git-dir``/``GIT_DIR`` ``git_dir``, when given)
    would use a repository config the model could have written (so its "read-only"
    commands could run any program), or None."""
    if git_dir is not None:
        gitdir = real_path(git_dir)
    else:
        found = find_git_dir(cwd)
        if found is None:
            return None
        _, gitdir = found
    own = real_path(root) / ".git"
    worktrees = own / WORKTREES_DIR  # checkouts, not git folders: nothing there is trusted
    for candidate in (gitdir, _common_dir(gitdir)):
        if (candidate == own or own in candidate.parents) and not (
            candidate == worktrees or worktrees in candidate.parents
        ):
            continue
        if not is_inside(candidate, workspace):
            continue  # outside the workspace: not writable without asking
        shown = _shown(candidate, root)
        return (
            f"runs git in the repository at {shown}, which is inside the workspace but not its "
            "own .git: its config (which can name programs git runs) may have been written "
            "without your approval"
        )
    return None


def _shown(path: Path, root: Path) -> str:
    try:
        rel = path.relative_to(real_path(root))
    except ValueError:
        return str(path)
    return str(rel) or "."

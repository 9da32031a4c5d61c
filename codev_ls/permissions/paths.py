"""Paths for permission rules: real paths, the workspace boundary, protected paths, patterns.

Every judgement is made on the *real* path — symlinks followed, ``..``
resolved — so ``src/link -> /etc`` is outside the workspace and
``src/../../x`` is not in ``src/**``. Rule patterns are gitignore-style
(pathspec), anchored as PROTOCOL.md says:

- ``src/**``, ``*.env``, ``/build/**`` — relative to the workspace root
  (a pattern without a slash matches at any depth, as in .gitignore);
- ``//abs/path/**`` — an absolute path;
- ``~/notes/**`` — relative to the home folder.

Deny and ask rules also match the path as it was written (before resolving),
so a rule about ``.env`` catches both ``.env`` and a link named ``.env``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

# Folders whose contents configure or run code: never auto-approved (except bypassPermissions).
PROTECTED_DIRS = frozenset({".git", ".codev", ".vscode", ".idea"})
# Files that run code when a shell or tool starts.
PROTECTED_FILES = frozenset(
    {
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".bash_logout",
        ".profile",
        ".zshrc",
        ".zshenv",
        ".zprofile",
        ".zlogin",
        ".zlogout",
        ".kshrc",
        ".cshrc",
        ".tcshrc",
        ".inputrc",
        ".gitconfig",
        ".mcp.json",
        "config.fish",
    }
)


def real_path(path: Path | str, cwd: Path | None = None) -> Path:
    """The absolute real path: relative to ``cwd``, ``~`` expanded, symlinks and ``..`` resolved."""
    p = Path(os.path.expanduser(str(path)))
    if not p.is_absolute() and cwd is not None:
        p = cwd / p
    try:
        return Path(os.path.realpath(p))
    except (OSError, ValueError):
        return Path(os.path.abspath(p))


def lexical_path(path: Path | str, cwd: Path | None = None) -> Path:
    """The absolute path as written (``..`` collapsed, symlinks not followed)."""
    p = Path(os.path.expanduser(str(path)))
    if not p.is_absolute() and cwd is not None:
        p = cwd / p
    return Path(os.path.normpath(p))


def is_inside(path: Path, folders: list[Path]) -> bool:
    """Whether the real ``path`` lies in one of the (real) ``folders``."""
    return any(path == folder or folder in path.parents for folder in folders)


# Where isolated sub-agents' git worktrees are checked out (model/worktree.py).
WORKTREES_DIR = "codev-worktrees"


def _worktree_start(path: Path, parts: list[str]) -> int:
    """How many leading parts of ``path`` lead to the root of a Codev worktree
    (``<repo>/.git/codev-worktrees/<id>``), 0 when it is not in one.

    A sub-agent's worktree lies under ``.git`` only to stay out of the checkout's
    ``git status``; its files are ordinary files. Only a folder that *is* a linked
    worktree (its ``.git`` is a file, which git made) counts: a folder the model
    creates there is still under a protected ``.git``.
    """
    for k in range(len(parts) - 2):
        if parts[k] == ".git" and parts[k + 1] == WORKTREES_DIR:
            root = Path(*path.parts[: k + 3])
            if os.path.isfile(root / ".git") and not os.path.islink(root / ".git"):
                return k + 3
    return 0


def protected_reason(path: Path) -> str | None:
    """Why ``path`` is a protected path (``.git/``, ``.codev/``, shell rc files), or None.

    Inside a sub-agent's worktree (``.git/codev-worktrees/<id>/``) only what is
    protected *within* the worktree counts (its own ``.git`` file, a ``.codev/`` in it).
    """
    parts = [p.casefold() for p in path.parts]
    if ".git" in parts and WORKTREES_DIR in parts:
        start = _worktree_start(path, parts)
        if start:
            parts = parts[start:]
            if not parts:
                return None
    for name in PROTECTED_DIRS:
        if name in parts[:-1] or (parts and parts[-1] == name):
            return f"{name}/ is a protected folder"
    name = path.name.casefold()
    if name in PROTECTED_FILES:
        if name == "config.fish" and "fish" not in parts:
            return None
        return f"{path.name} runs code when a shell or tool starts"
    return None


# --------------------------------------------------------------------------- patterns


@dataclass(frozen=True, slots=True)
class PathPattern:
    """A gitignore-style rule pattern with the folder it is anchored at."""

    text: str
    base: Path
    pattern: str

    def matches(self, path: Path, *, is_dir: bool = False) -> bool:
        """Whether the absolute ``path`` matches (a folder also when its contents would)."""
        rel_text = _relative(str(path), str(self.base))
        if rel_text is None:
            return False
        spec = _spec(self.pattern)
        if rel_text and spec.match_file(rel_text):
            return True
        if is_dir or not rel_text:
            # `Read(src/**)` covers a search in src/ itself.
            probe = f"{rel_text}/__codev_probe__" if rel_text else "__codev_probe__"
            return spec.match_file(probe) and _probe_is_pattern_dir(self.pattern, rel_text)
        return False

    def matches_folded(self, path: Path, *, is_dir: bool = False) -> bool:
        """As :meth:`matches`, ignoring case (deny and ask rules: ``Read(.env)`` also
        stops ``.ENV``, the same file on a case-insensitive disk)."""
        return _folded(self).matches(Path(str(path).casefold()), is_dir=is_dir)

    def may_match_under(self, folder: Path) -> bool:
        """Whether something inside ``folder`` could match (ignoring case): a recursive
        read of ``folder`` may reach a file this pattern names."""
        folded = _folded(self)
        folder_text = str(folder).casefold()
        rel = _relative(folder_text, str(folded.base))
        if rel is not None:
            if not _anchored(folded.pattern):
                return True  # `.env`, `*.key`: at any depth below the base
            # The folder holds the pattern's leading folders, or lies inside them.
            return _overlaps(rel, _literal_lead(folded.pattern))
        # The folder holds the base itself (`grep -r x /` and a workspace rule).
        return _relative(str(folded.base), folder_text) is not None


@lru_cache(maxsize=256)
def _folded(pattern: PathPattern) -> PathPattern:
    return PathPattern(
        pattern.text.casefold(), Path(str(pattern.base).casefold()), pattern.pattern.casefold()
    )


def _anchored(pattern: str) -> bool:
    """A gitignore pattern with a slash before its end is anchored at its base."""
    return "/" in pattern.rstrip("/")


def _literal_lead(pattern: str) -> str:
    """The leading folders of an anchored pattern that hold no glob character."""
    out: list[str] = []
    for part in pattern.strip("/").split("/")[:-1]:
        if any(c in part for c in "*?[\\"):
            break
        out.append(part)
    return "/".join(out)


def _overlaps(a: str, b: str) -> bool:
    """Two relative folders of which one holds the other ("" holds everything)."""
    if not a or not b or a == b:
        return True
    return a.startswith(b + "/") or b.startswith(a + "/")


# How many entries a scan for denied files looks at before giving up (and asking).
SCAN_LIMIT = 10_000


@dataclass(frozen=True, slots=True)
class ScanResult:
    """What a scan of a folder for files a pattern names found."""

    match: Path | None
    # False: the folder holds more than the limit, so what it holds is not known.
    complete: bool = True


def scan_for_match(pattern: PathPattern, folder: Path, *, limit: int | None = None) -> ScanResult:
    """The first file inside ``folder`` that ``pattern`` matches (ignoring case),
    walking without following symlinks (a recursive grep does not follow them
    either). Folders an anchored pattern cannot reach are not entered."""
    limit = SCAN_LIMIT if limit is None else limit
    folded = _folded(pattern)
    spec = _spec(folded.pattern)
    base = str(folded.base)
    prefix = base if base.endswith("/") else base + "/"
    lead = _literal_lead(folded.pattern) if _anchored(folded.pattern) else None
    seen = 0
    stack = [str(folder)]
    while stack:
        current = stack.pop()
        try:
            with os.scandir(current) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > limit:
                return ScanResult(None, complete=False)
            text = entry.path.casefold()
            if not text.startswith(prefix):
                # Above the pattern's base (`grep -r x /` and a workspace rule): only
                # the way down to the base matters.
                if entry.is_dir(follow_symlinks=False) and base.startswith(text + "/"):
                    stack.append(entry.path)
                continue
            rel = text[len(prefix) :]
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                if lead is None or _overlaps(rel, lead):
                    stack.append(entry.path)
            elif spec.match_file(rel):
                return ScanResult(Path(entry.path))
    return ScanResult(None)


def _relative(path: str, base: str) -> str | None:
    """``path`` relative to ``base`` as a POSIX string ("" for base itself), or None."""
    if path == base:
        return ""
    prefix = base if base.endswith("/") else base + "/"
    if not path.startswith(prefix):
        return None
    return path[len(prefix) :]


def _probe_is_pattern_dir(pattern: str, rel_text: str) -> bool:
    """A folder matches only when the pattern covers *everything* in it (``dir/**``)."""
    spec = _spec(pattern)
    prefix = f"{rel_text}/" if rel_text else ""
    return spec.match_file(f"{prefix}__codev_probe__.x") and spec.match_file(
        f"{prefix}__codev_probe_dir__/y"
    )


@lru_cache(maxsize=1024)
def _spec(pattern: str):  # type: ignore[no-untyped-def]
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines([pattern])


@lru_cache(maxsize=2048)
def path_pattern(spec: str, root: Path) -> PathPattern:
    """Anchor a rule's path specifier: ``//abs``, ``~/x``, ``/x`` (root), ``x`` (root)."""
    text = spec.strip()
    if text.startswith("//"):
        return PathPattern(text, Path("/"), "/" + text[2:].lstrip("/"))
    if text == "~" or text.startswith("~/"):
        rest = text[1:].lstrip("/") or "**"
        return PathPattern(text, Path.home().resolve(), "/" + rest)
    if text.startswith("./"):
        return PathPattern(text, root, "/" + text[2:])
    return PathPattern(text, root, text)


def pattern_names_protected(spec: str, path: Path) -> bool:
    """Whether a rule's pattern itself names the protected part of ``path``.

    ``Edit(**)`` must not open ``.git/hooks/``; ``Edit(.git/hooks/**)`` may.
    """
    low = spec.casefold()
    parts = [p.casefold() for p in path.parts]
    for name in PROTECTED_DIRS:
        if name in parts and name in low:
            return True
    return path.name.casefold() in PROTECTED_FILES and path.name.casefold() in low


def rule_path_for(path: Path, root: Path, *, folder: bool = True) -> str:
    """The generalised rule specifier for ``path``: its folder (``src/**``) or itself."""
    target = path.parent if folder and not path.is_dir() else path
    try:
        rel = target.relative_to(root)
    except ValueError:
        home = Path.home().resolve()
        try:
            rel_home = target.relative_to(home)
            return f"~/{rel_home.as_posix()}/**" if rel_home.parts else "~/**"
        except ValueError:
            return f"/{target.as_posix()}/**" if target != Path("/") else "//**"
    if not rel.parts:
        # A file at the workspace root: that file only (a rule for the whole root is too broad).
        return f"/{path.name}" if not path.is_dir() else "/**"
    return f"{rel.as_posix()}/**"


# Scans for links out of the workspace look at more entries than scans for denied
# files: they run for listings piped to readers (`find . -name '*.py' | xargs wc -l`),
# which are common in large checkouts (node_modules).
ESCAPE_SCAN_LIMIT = 50_000


def scan_for_escape(
    folder: Path,
    workspace: list[Path],
    *,
    files_only: bool = False,
    counts: Callable[[str], bool] | None = None,
    limit: int | None = None,
) -> ScanResult:
    """The first symbolic link under ``folder`` whose real target lies outside the
    ``workspace`` folders (walking without following links; ``.git`` folders, which
    only Codev-approved writes reach, are not entered). A command that follows links
    (``grep -R``) reads through every such link; one that reads what a listing prints
    (``find . | xargs cat``) through links to files (``files_only``). A cloned
    repository can ship ``notes -> ~/.ssh/id_rsa``. ``counts`` says which links matter
    (a listing filtered by ``-name '*.py'`` never prints ``python3``). ``complete`` is
    False when the folder holds more entries than the limit."""
    limit = ESCAPE_SCAN_LIMIT if limit is None else limit

    def escapes(path: str) -> bool:
        if counts is not None and not counts(path):
            return False
        target = real_path(path)
        if files_only and os.path.isdir(target):
            return False
        return not is_inside(target, workspace)

    try:
        if os.path.islink(folder) and escapes(str(folder)):
            return ScanResult(Path(folder))
    except OSError:
        pass
    seen = 0
    stack = [str(folder)]
    while stack:
        current = stack.pop()
        try:
            with os.scandir(current) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > limit:
                return ScanResult(None, complete=False)
            try:
                if entry.is_symlink():
                    if escapes(entry.path):
                        return ScanResult(Path(entry.path))
                elif entry.is_dir(follow_symlinks=False) and entry.name != ".git":
                    stack.append(entry.path)
            except OSError:
                continue
    return ScanResult(None)

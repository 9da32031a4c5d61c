"""Temporary git worktrees for isolated sub-agents (``isolation: "worktree"``).

The worktree is checked out (detached, at ``HEAD``) under
``<repo>/.git/codev-worktrees/``: inside the workspace (when the workspace is
the repository's root), so the permission rules and the Bash sandbox about the
workspace apply unchanged; invisible to ``git status`` and to file searches of
the checkout; and not under ``.codev/``, which sandboxed commands cannot write.
After the run the changes are reported as a diff against ``HEAD`` (new files
included); a worktree without changes is removed, one with changes is kept
for the user to review or apply.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from pathlib import Path

from codev_ls.engine.tool import ToolError

MAX_DIFF_CHARS = 40_000


@dataclass(slots=True)
class Worktree:
    repo: Path
    path: Path


async def _git(*args: str, cwd: Path, check: bool = True) -> str:
    proc = await asyncio.create_subprocess_exec(
        "git",
        *args,
        cwd=str(cwd),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate()
    if check and proc.returncode != 0:
        raise ToolError(
            f"git {' '.join(args[:2])} failed: {err.decode(errors='replace').strip()[:500]}"
        )
    return out.decode("utf-8", errors="replace")


async def repo_root(path: Path) -> Path | None:
    try:
        proc = await asyncio.create_subprocess_exec(
            "git",
            "rev-parse",
            "--show-toplevel",
            cwd=str(path),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
    except OSError:
        return None
    out, _ = await proc.communicate()
    if proc.returncode != 0:
        return None
    return Path(out.decode().strip()).resolve()


async def create(root: Path, label: str = "agent") -> Worktree:
    repo = await repo_root(root)
    if repo is None:
        raise ToolError(
            f'isolation "worktree" needs a git repository, and {root} is not in one. '
            "Run the agent without isolation."
        )
    head = await _git("rev-parse", "--verify", "-q", "HEAD", cwd=repo, check=False)
    if not head.strip():
        raise ToolError(
            'isolation "worktree" needs at least one commit in the repository; '
            "run the agent without isolation."
        )
    git_dir = Path((await _git("rev-parse", "--git-common-dir", cwd=repo)).strip())
    if not git_dir.is_absolute():
        git_dir = (repo / git_dir).resolve()
    base = git_dir / "codev-worktrees"
    base.mkdir(parents=True, exist_ok=True)
    path = base / f"{label}-{uuid.uuid4().hex[:8]}"
    await _git("worktree", "add", "--detach", str(path), "HEAD", cwd=repo)
    return Worktree(repo, path.resolve())


async def diff(tree: Worktree) -> str:
    """The worktree's changes against HEAD, new files included (cut when huge)."""
    await _git("add", "-A", cwd=tree.path)
    text = await _git("diff", "--cached", "HEAD", cwd=tree.path)
    if len(text) > MAX_DIFF_CHARS:
        stat = await _git("diff", "--cached", "--stat", "HEAD", cwd=tree.path)
        text = (
            text[:MAX_DIFF_CHARS]
            + f"\n… (diff cut at {MAX_DIFF_CHARS} characters; summary:)\n"
            + stat
        )
    return text


async def remove(tree: Worktree) -> None:
    await _git("worktree", "remove", "--force", str(tree.path), cwd=tree.repo, check=False)

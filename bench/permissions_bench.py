"""Permission benchmark: what a decision costs per tool use, against same-run baselines.

- shell parse: ``parse_command`` (tree-sitter-bash, uncached) against
  ``shlex.split`` of the same commands — the cheapest tokenizer, which does not
  understand compound commands;
- decision: ``decide()`` for a compound Bash command under 60 rules (default
  mode) against ``decide()`` for the same use in bypassPermissions (deny
  rules only, no parts judged) — the cost of judging every part;
- settings refresh before each decision (three ``stat`` calls) against three
  bare ``os.stat`` calls.

Run: ``python bench/permissions_bench.py [--n 300]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

COMMANDS = [
    "ls -la",
    "git status && git diff --stat",
    "npm run test -- --watch=false 2>&1 | tail -n 50",
    "find . -name '*.py' -not -path './.venv/*' | xargs wc -l | sort -n | tail",
    "cd src && grep -rn 'TODO' . > ../todo.txt; echo done",
    'for f in *.md; do echo "$f"; head -n 3 "$f"; done',
    "bash -c 'python -m pytest -q tests/unit && ruff check .'",
    'git log --oneline -20 --format="%h %s" | grep -i fix || true',
]


@contextlib.contextmanager
def _trusted(folder: str):  # type: ignore[no-untyped-def]
    """The bench's own workspace: its settings' allow rules are in force without the
    approval question (permissions/trust.py), as in a workspace the user approved."""
    old = os.environ.get("CODEV_TRUSTED_FOLDERS")
    os.environ["CODEV_TRUSTED_FOLDERS"] = folder
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("CODEV_TRUSTED_FOLDERS", None)
        else:
            os.environ["CODEV_TRUSTED_FOLDERS"] = old


def per_call(fn, n: int) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


async def per_call_async(fn, n: int) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    for _ in range(n):
        await fn()
    return (time.perf_counter() - start) / n


def bench_parse(n: int) -> tuple[float, float]:
    from codev_ls.permissions.shell.parse import _parse_cached

    parse = _parse_cached.__wrapped__  # type: ignore[attr-defined]
    parse("ls")  # load the grammar once
    ours = per_call(lambda: [parse(c) for c in COMMANDS], n) / len(COMMANDS)
    base = per_call(lambda: [shlex.split(c) for c in COMMANDS], n) / len(COMMANDS)
    return ours, base


async def bench_decide(n: int) -> tuple[float, float]:
    from codev_ls.app import attach_permissions
    from codev_ls.bridge import ScriptedBridge
    from codev_ls.engine.runtime import Engine
    from codev_ls.permissions.decide import decide
    from codev_ls.tools.bash import BashTool

    with tempfile.TemporaryDirectory() as tmp, _trusted(tmp):
        root = Path(tmp) / "ws"
        (root / "src").mkdir(parents=True)
        (root / ".codev").mkdir()
        rules = [f"Bash(tool{i}:*)" for i in range(40)] + [f"Edit(pkg{i}/**)" for i in range(18)]
        rules += ["Bash(npm run test:*)", "Edit(src/**)"]
        (root / ".codev" / "settings.json").write_text(
            json.dumps({"permissions": {"allow": rules, "deny": ["Bash(rm:*)"]}})
        )
        tool = BashTool()
        command = COMMANDS[4]
        parsed = tool.parse_input({"command": command})

        async def run(mode: str) -> float:
            engine = Engine(
                root,
                ScriptedBridge(),
                mode=mode,
                base_tools=[tool],  # type: ignore[arg-type]
                data_root=Path(tmp) / "data",
            )
            attach_permissions(engine, explicit_mode=True)
            ctx = engine.context(tools=[tool])
            await decide(tool, parsed, ctx)  # warm caches
            try:
                return await per_call_async(lambda: decide(tool, parsed, ctx), n)
            finally:
                await engine.aclose()

        return await run("default"), await run("bypassPermissions")


def bench_refresh(n: int) -> tuple[float, float]:
    from codev_ls.permissions.settings import SettingsManager

    with tempfile.TemporaryDirectory() as tmp, _trusted(tmp):
        root = Path(tmp)
        (root / ".codev").mkdir()
        for name in ("settings.json", "settings.local.json"):
            (root / ".codev" / name).write_text('{"permissions": {"allow": ["Read"]}}')
        m = SettingsManager(root, user_dir=root / "user")
        paths = [f.path for f in m.files]

        def stats() -> None:
            for p in paths:
                try:
                    os.stat(p)
                except OSError:
                    pass

        return per_call(m.refresh, n * 10), per_call(stats, n * 10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=300)
    args = parser.parse_args()
    ours, base = bench_parse(args.n)
    print(
        f"shell parse     {ours * 1e6:8.1f} µs/command   shlex.split {base * 1e6:6.1f} µs   "
        f"ratio {ours / base:5.1f}x"
    )
    full, bypass = asyncio.run(bench_decide(args.n))
    print(
        f"decide (Bash)   {full * 1e6:8.1f} µs/use       bypass mode {bypass * 1e6:6.1f} µs   "
        f"ratio {full / bypass:5.1f}x"
    )
    refresh, stats = bench_refresh(args.n)
    print(
        f"settings check  {refresh * 1e6:8.1f} µs/use       3x os.stat  {stats * 1e6:6.1f} µs   "
        f"ratio {refresh / stats:5.1f}x"
    )


if __name__ == "__main__":
    main()

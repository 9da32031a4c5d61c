"""Bash benchmark: the engine's memory stays flat however much a command prints.

Runs ``yes | head -c SIZE`` through the real lifecycle (``Engine.run_tool``;
sandboxed when bubblewrap works, and once more without the sandbox) and
reports, for this process (the engine):

- the peak RSS growth while the command ran (target: < 64 MB for 1 GiB), next
  to a baseline measured in the same run — the same command with its output
  sent to /dev/null inside the shell, so nothing crosses the pipe;
- the wall time, as a ratio to the same bytes written to a file by the shell
  itself (the floor for persisting the output);
- that the whole output was persisted (file size == SIZE).

Run: ``python bench/bash_bench.py [--size 1G]`` (``bench/tools.py`` calls
:func:`run_bash_bench`). Linux only (peak RSS is reset through
``/proc/self/clear_refs``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

TARGET_MB = 64


@dataclass
class Row:
    label: str
    seconds: float
    rss_growth_mb: float
    output_bytes: int
    persisted_bytes: int


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as fh:
        m = re.search(rf"{field}:\s+(\d+)", fh.read())
    return int(m.group(1)) if m else 0


def _reset_peak() -> int:
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    return _status_kib("VmRSS")


async def _measure(engine, label: str, command: str) -> Row:  # type: ignore[no-untyped-def]
    before = _reset_peak()
    t0 = time.perf_counter()
    outcome = await engine.run_tool("Bash", {"command": command, "timeout": 600_000})
    seconds = time.perf_counter() - t0
    growth = (_status_kib("VmHWM") - before) / 1024
    if outcome.status != "success" or outcome.is_error:
        raise RuntimeError(f"{label}: {outcome.status}: {outcome.text()[:500]}")
    meta = outcome.meta or {}
    path = meta.get("outputPath")
    persisted = 0
    if path:
        persisted = os.path.getsize(path)
        os.unlink(path)
    return Row(label, seconds, growth, int(meta.get("outputBytes", 0)), persisted)


def _size_arg(text: str) -> int:
    m = re.fullmatch(r"(\d+)([KMG]?)", text.strip().upper())
    if not m:
        raise argparse.ArgumentTypeError(f"size like 1G, 256M or 1000000, got {text!r}")
    return int(m.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2)]


async def _run(size: int, sandbox: bool, workdir: Path) -> list[Row]:
    """Baseline then measure, on one engine; sandboxed or not (CODEV_SANDBOX is read then)."""
    from codev_ls.bridge import ScriptedBridge
    from codev_ls.engine.runtime import Engine

    if sandbox:
        os.environ.pop("CODEV_SANDBOX", None)
    else:
        os.environ["CODEV_SANDBOX"] = "0"
    root = workdir / ("ws-sandbox" if sandbox else "ws-plain")
    root.mkdir(exist_ok=True)
    engine = Engine(root, ScriptedBridge(default_answer="allow_once"), data_root=workdir / "data")
    try:
        from codev_ls.tools.sandbox import get_sandbox

        active = get_sandbox(engine).active
        if sandbox and not active:
            print("  (bubblewrap cannot run here: sandboxed rows skipped)")
            return []
        tag = "sandbox" if sandbox else "no sandbox"
        await engine.run_tool("Bash", {"command": "true"})  # warm up
        base = await _measure(
            engine,
            f"Bash ({tag}): yes | head -c N > /dev/null",
            f"yes | head -c {size} > /dev/null",
        )
        main = await _measure(engine, f"Bash ({tag}): yes | head -c N", f"yes | head -c {size}")
        return [base, main]
    finally:
        await engine.aclose()


def _raw_shell_to_file(size: int, workdir: Path) -> float:
    out = workdir / "raw.out"
    t0 = time.perf_counter()
    subprocess.run(["bash", "-c", f"yes | head -c {size} > {out}"], check=True)
    seconds = time.perf_counter() - t0
    out.unlink()
    return seconds


@dataclass
class Figure:
    """One line of the report (the shape of ``bench/tools.py``'s rows)."""

    name: str
    value: str
    baseline: str = ""
    ratio: float | None = None
    target: str = ""
    ok: bool = True


def bash_figures(size: int, workdir: Path) -> list[Figure]:
    """Measure (sandboxed, then without the sandbox) in ``workdir``; the report's figures."""
    saved = {k: os.environ.get(k) for k in ("CODEV_SANDBOX", "CODEV_CONFIG_DIR")}
    os.environ["CODEV_CONFIG_DIR"] = str(workdir / "config")
    try:
        raw = _raw_shell_to_file(size, workdir)
        rows: list[Row] = []
        for sandbox in (True, False):
            rows += asyncio.run(_run(size, sandbox, workdir))
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    figures = [Figure("raw shell: yes | head -c N > file", f"{raw:.2f} s")]
    for base, main in zip(rows[::2], rows[1::2], strict=True):
        figures.append(Figure(base.label, f"{base.seconds:.2f} s"))
        figures.append(Figure("  its peak RSS growth", f"{base.rss_growth_mb:.1f} MB"))
        figures.append(
            Figure(main.label, f"{main.seconds:.2f} s", f"{raw:.2f} s", main.seconds / raw)
        )
        ok = main.rss_growth_mb < TARGET_MB and main.persisted_bytes == size
        figures.append(
            Figure(
                "  its peak RSS growth",
                f"{main.rss_growth_mb:.1f} MB",
                f"{base.rss_growth_mb:.1f} MB",
                None,
                f"< {TARGET_MB} MB",
                ok,
            )
        )
        figures.append(
            Figure(
                "  output persisted",
                f"{main.persisted_bytes:,} B",
                f"{main.output_bytes:,} B",
                target="all of it",
                ok=main.persisted_bytes == main.output_bytes == size,
            )
        )
    return figures


def run_bash_bench(size: int = 1 << 30) -> list[Figure]:
    """Run the benchmark in a temporary folder, print the figures, return them."""
    print(f"Bash: `yes | head -c {size:,}` through Engine.run_tool (peak RSS of this process)")
    with tempfile.TemporaryDirectory(prefix="codev-bench-bash-") as tmp:
        figures = bash_figures(size, Path(tmp))
    for f in figures:
        line = f"{f.name:<52} {f.value:>16}"
        if f.baseline:
            line += f"  baseline {f.baseline:>16}"
        if f.ratio is not None:
            line += f"  ratio {f.ratio:5.2f}×"
        if f.target:
            line += f"  (target {f.target})"
        if not f.ok:
            line += "  MISSED"
        print(line, flush=True)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=_size_arg, default=1 << 30, help="bytes to print (1G)")
    args = parser.parse_args(argv)
    if not Path("/proc/self/clear_refs").exists():
        print("bash_bench needs Linux (/proc/self/clear_refs)", file=sys.stderr)
        return 2
    figures = run_bash_bench(args.size)
    return 0 if all(f.ok for f in figures) else 1


if __name__ == "__main__":
    raise SystemExit(main())

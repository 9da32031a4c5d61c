"""100 concurrent read-only tool calls: wall time against the slowest single one.

A model turn may ask for many reads at once; the engine runs concurrency-safe
uses side by side (``Engine.run_batch``). This measures, in one run:

- each of 100 Reads alone, one after the other: the slowest of them (and the
  median) is the baseline — what one call costs when it has the engine to itself;
- the same 100 Reads as one batch: the wall time until the last outcome.

The ratio wall / slowest single says how much of the work overlaps: 1× would be
perfect overlap, 100× no overlap at all (every call waiting for the previous).

    python bench/concurrency.py [--calls 100] [--lines 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

TARGET_RATIO = 10.0


@dataclass
class ConcurrencyFigures:
    calls: int
    slowest_single_s: float
    median_single_s: float
    sum_single_s: float
    batch_wall_s: float

    @property
    def ratio(self) -> float:
        return self.batch_wall_s / self.slowest_single_s


def make_files(root: Path, calls: int, lines: int) -> list[Path]:
    paths = []
    for i in range(calls):
        path = root / f"src/module_{i:03}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            "".join(f"    value_{n} = compute({i}, {n})  # line {n}\n" for n in range(lines))
        )
        paths.append(path)
    return paths


async def measure(calls: int = 100, lines: int = 2000, rounds: int = 3) -> ConcurrencyFigures:
    from codev_ls.bridge import ScriptedBridge
    from codev_ls.engine.execution import ToolUse
    from codev_ls.engine.runtime import Engine

    with tempfile.TemporaryDirectory(prefix="codev-bench-conc-") as tmp:
        root = Path(tmp) / "ws"
        paths = make_files(root, calls, lines)
        engine = Engine(root, ScriptedBridge(), data_root=Path(tmp) / "data")
        try:
            for p in paths[:5]:  # warm the code paths and the page cache
                await engine.run_tool("Read", {"file_path": str(p)})
            singles: list[float] = []
            walls: list[float] = []
            for r in range(rounds):
                for p in paths:
                    t = time.perf_counter()
                    outcome = await engine.run_tool("Read", {"file_path": str(p)})
                    singles.append(time.perf_counter() - t)
                    assert outcome.status == "success", outcome
                uses = [
                    ToolUse(f"toolu_{r}_{i}", "Read", {"file_path": str(p)})
                    for i, p in enumerate(paths)
                ]
                t = time.perf_counter()
                outcomes = await engine.run_batch(uses)
                walls.append(time.perf_counter() - t)
                assert all(o.status == "success" for o in outcomes)
                assert len(outcomes) == calls
        finally:
            await engine.aclose()
    per_round = [singles[i * calls : (i + 1) * calls] for i in range(rounds)]
    return ConcurrencyFigures(
        calls=calls,
        slowest_single_s=statistics.median(max(r) for r in per_round),
        median_single_s=statistics.median(singles),
        sum_single_s=statistics.median(sum(r) for r in per_round),
        batch_wall_s=statistics.median(walls),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--lines", type=int, default=2000)
    args = parser.parse_args(argv)
    f = asyncio.run(measure(args.calls, args.lines))
    print(
        f"{f.calls} Reads as one batch: {f.batch_wall_s * 1000:.1f} ms; slowest single "
        f"{f.slowest_single_s * 1000:.1f} ms (median {f.median_single_s * 1000:.2f} ms, "
        f"one after another {f.sum_single_s * 1000:.1f} ms) → {f.ratio:.1f}× "
        f"(target ≤ {TARGET_RATIO:g}×)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

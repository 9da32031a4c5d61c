"""100 concurrent read-only tool calls: wall time against the slowest single one.

A model turn may ask for many reads at once; the engine runs concurrency-safe
uses side by side (``Engine.run_batch``). This measures, in one run:

- each of 100 Reads alone, one after the other: the slowest of them (and the
  median) is the baseline — what one call costs when it has the engine to itself;
- the same 100 Reads as one batch: the wall time until the last outcome.

The ratio wall / slowest single says how much of the work overlaps: 1× would be
perfect overlap, 100× no overlap at all (every call waiting for the previous).
:func:`measure_lsp` does the same over LSP: 100 ``codev/runTool`` requests
written at once to the real server, against each request alone.

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
if str(REPO / "bench") not in sys.path:
    sys.path.append(str(REPO / "bench"))

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


def measure_lsp(calls: int = 100, lines: int = 2000, rounds: int = 3) -> ConcurrencyFigures:
    """The same over LSP: ``calls`` codev/runTool requests written at once to the real
    server, against each request alone (one in flight)."""
    import json
    import os

    from lsp_costs import Client, _env

    with tempfile.TemporaryDirectory(prefix="codev-bench-conc-lsp-") as tmp:
        root = Path(tmp) / "ws"
        paths = make_files(root, calls, lines)
        client = Client([sys.executable, "-m", "codev_ls"], _env(Path(tmp)))
        try:
            client.initialize(root, {"workspace": {"applyEdit": True}})

            def params(p: Path) -> dict[str, object]:
                return {"name": "Read", "input": {"file_path": str(p)}}

            for p in paths[:5]:
                client.request("codev/runTool", params(p))
            singles: list[float] = []
            walls: list[float] = []
            for _ in range(rounds):
                for p in paths:
                    t = time.perf_counter()
                    outcome = client.request("codev/runTool", params(p))
                    singles.append(time.perf_counter() - t)
                    assert outcome["status"] == "success", outcome
                t = time.perf_counter()
                ids = set()
                for p in paths:
                    client._id += 1
                    ids.add(client._id)
                    client._write({"jsonrpc": "2.0", "id": client._id,
                                   "method": "codev/runTool", "params": params(p)})  # fmt: skip
                while ids:
                    message, _ = client._read()
                    if "method" in message:
                        if "id" in message:
                            client._write({"jsonrpc": "2.0", "id": message["id"], "result": None})
                        continue
                    ids.discard(message.get("id"))
                    assert message["result"]["status"] == "success", json.dumps(message)[:300]
                walls.append(time.perf_counter() - t)
        finally:
            client.close()
    assert os.sep == "/"
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
    for where, f in (("engine", asyncio.run(measure(args.calls, args.lines))),
                     ("LSP", measure_lsp(args.calls, args.lines))):  # fmt: skip
        print(f"{where}: ", end="")
        print(
            f"{f.calls} Reads as one batch: {f.batch_wall_s * 1000:.1f} ms; slowest single "
            f"{f.slowest_single_s * 1000:.1f} ms (median {f.median_single_s * 1000:.2f} ms, "
            f"one after another {f.sum_single_s * 1000:.1f} ms) → {f.ratio:.1f}× "
            f"(target ≤ {TARGET_RATIO:g}×)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

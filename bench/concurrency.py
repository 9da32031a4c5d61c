"""100 concurrent read-only tool calls: wall time against the slowest single one.

A model turn may ask for many read-only calls at once; the engine runs
concurrency-safe uses side by side (``Engine.run_batch``; over LSP, separate
``codev/runTool`` requests). Two workloads, because what overlap is possible
depends on what the calls spend their time on:

- **WebFetch of a page that takes 100 ms to answer** (a local HTTP server that
  waits before answering, as a real site does): the calls mostly wait, so run
  side by side they should take not much longer than the slowest one alone.
  Target: wall ≤ 10× the slowest single call (100 calls one after another
  would be ≥ 100×).
- **Read of 2000 lines**: the calls mostly compute (numbering lines) in one
  Python interpreter, so no overlap beyond the waits is possible: a batch can
  at best take the time of the same calls one after another. Target: the batch
  ≤ 1.05× the sequence (the engine adds no serialisation; 5% for noise). The
  ratio to the slowest single call is printed for information: it is about
  ``calls × median / slowest``, a measure of the spread, not of the engine.

Each is measured in the engine (``run_batch``) and over LSP (the real server,
100 requests written at once). The baseline is measured in the same run: each
call alone, ``rounds`` times; the *slowest single call* is the slowest of the
calls' medians — the max of 100 raw timings on a shared machine is a scheduler
hiccup (10-50× the median), not a call.

    python bench/concurrency.py [--calls 100] [--lines 2000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
if str(REPO / "bench") not in sys.path:
    sys.path.append(str(REPO / "bench"))

TARGET_RATIO = 10.0  # calls that wait: wall ≤ 10× the slowest single call
TARGET_VS_SEQUENTIAL = 1.05  # calls that compute: a batch ≤ 1.05× the same calls in sequence
PAGE_DELAY_S = 0.1


@dataclass
class ConcurrencyFigures:
    calls: int
    slowest_single_s: float
    median_single_s: float
    sum_single_s: float
    batch_wall_s: float

    @property
    def ratio(self) -> float:
        """Wall time of the batch / the slowest single call."""
        return self.batch_wall_s / self.slowest_single_s

    # The batch / the same calls one after another: the median of each round's ratio
    # (a round measures both within seconds, so a change of the machine's load between
    # rounds does not count).
    vs_sequential: float


def _figures(calls: int, singles: list[list[float]], walls: list[float]) -> ConcurrencyFigures:
    """``singles[r][i]``: call ``i`` alone in round ``r``; ``walls[r]``: round ``r``'s batch."""
    per_call = [statistics.median(r[i] for r in singles) for i in range(calls)]
    return ConcurrencyFigures(
        calls=calls,
        slowest_single_s=max(per_call),
        median_single_s=statistics.median(per_call),
        sum_single_s=statistics.median(sum(r) for r in singles),
        batch_wall_s=statistics.median(walls),
        vs_sequential=statistics.median(w / sum(r) for w, r in zip(walls, singles, strict=True)),
    )


# --------------------------------------------------------------------------- workloads


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


PAGE = (
    "<html><head><title>Doc {n}</title></head><body><h1>Section {n}</h1>"
    + "<p>Some text of the page, with a <a href='/x'>link</a>.</p>" * 5
    + "</body></html>"
)


def serve_slow_site(delay: float) -> None:
    """A web site whose pages answer after ``delay`` seconds, each request in a thread of
    its own (they wait side by side, as a real site's would); prints its port."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # http.server calls it by this name
            time.sleep(delay)
            body = PAGE.format(n=self.path).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 512  # 100 connections at once: the default backlog is 5

    server = Server(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


class SlowSite:
    """:func:`serve_slow_site` in a process of its own — in this one its threads would
    take the interpreter lock from the engine being measured. Every URL is another page,
    so WebFetch's cache never answers for it."""

    def __init__(self, delay: float = PAGE_DELAY_S) -> None:
        self.delay = delay

    def __enter__(self) -> SlowSite:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(self.delay)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.url = f"http://127.0.0.1:{int(self.proc.stdout.readline())}"
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.kill()
        self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def _read_input(path: Path) -> dict[str, Any]:
    return {"file_path": str(path)}


def _fetch_input(url: str) -> dict[str, Any]:
    return {"url": url, "prompt": "what is on the page?"}


# --------------------------------------------------------------------------- in the engine


async def _measure_engine(
    tool: str, inputs: Callable[[str], list[dict[str, Any]]], root: Path, data: Path, rounds: int
) -> ConcurrencyFigures:
    """``inputs(tag)``: the calls' inputs (a fresh tag per use: no cache answers)."""
    from codev_ls.bridge import ScriptedBridge
    from codev_ls.engine.execution import ToolUse
    from codev_ls.engine.runtime import Engine

    engine = Engine(root, ScriptedBridge(), mode="bypassPermissions", data_root=data)
    try:
        for use in inputs("warm")[:5]:  # warm the code paths and the page cache
            await engine.run_tool(tool, use)
        singles: list[list[float]] = []
        walls: list[float] = []
        for r in range(rounds):
            times = []
            for use in inputs(f"s{r}"):
                t = time.perf_counter()
                outcome = await engine.run_tool(tool, use)
                times.append(time.perf_counter() - t)
                assert outcome.status == "success", outcome
            singles.append(times)
            uses = [ToolUse(f"toolu_{r}_{i}", tool, u) for i, u in enumerate(inputs(f"b{r}"))]
            t = time.perf_counter()
            outcomes = await engine.run_batch(uses)
            walls.append(time.perf_counter() - t)
            assert len(outcomes) == len(uses) and all(o.status == "success" for o in outcomes)
    finally:
        await engine.aclose()
    return _figures(len(singles[0]), singles, walls)


async def measure(calls: int = 100, lines: int = 2000, rounds: int = 3) -> ConcurrencyFigures:
    """``calls`` Reads of ``lines`` lines in the engine."""
    with tempfile.TemporaryDirectory(prefix="codev-bench-conc-") as tmp:
        root = Path(tmp) / "ws"
        paths = make_files(root, calls, lines)
        return await _measure_engine(
            "Read", lambda _tag: [_read_input(p) for p in paths], root, Path(tmp) / "data", rounds
        )


async def measure_fetch(calls: int = 100, rounds: int = 3) -> ConcurrencyFigures:
    """``calls`` WebFetches of pages that answer after :data:`PAGE_DELAY_S`, in the engine."""
    with tempfile.TemporaryDirectory(prefix="codev-bench-fetch-") as tmp, SlowSite() as site:
        root = Path(tmp) / "ws"
        root.mkdir()

        def inputs(tag: str) -> list[dict[str, Any]]:
            return [_fetch_input(f"{site.url}/{tag}/page{i}") for i in range(calls)]

        return await _measure_engine("WebFetch", inputs, root, Path(tmp) / "data", rounds)


# --------------------------------------------------------------------------- over LSP


def _measure_lsp(
    tool: str, inputs: Callable[[str], list[dict[str, Any]]], root: Path, tmp: Path, rounds: int
) -> ConcurrencyFigures:
    """The same over LSP: each request alone (one in flight), then all written at once."""
    import json

    from lsp_costs import Client, _env

    client = Client([sys.executable, "-m", "codev_ls"], _env(tmp))
    try:
        client.initialize(root, {"workspace": {"applyEdit": True}})
        client.request("codev/permissionMode", {"mode": "bypassPermissions"})

        def params(use: dict[str, Any]) -> dict[str, Any]:
            return {"name": tool, "input": use}

        for use in inputs("warm")[:5]:
            client.request("codev/runTool", params(use))
        singles: list[list[float]] = []
        walls: list[float] = []
        for r in range(rounds):
            times = []
            for use in inputs(f"s{r}"):
                t = time.perf_counter()
                outcome = client.request("codev/runTool", params(use))
                times.append(time.perf_counter() - t)
                assert outcome["status"] == "success", outcome
            singles.append(times)
            batch = inputs(f"b{r}")
            t = time.perf_counter()
            ids = set()
            for use in batch:
                client._id += 1
                ids.add(client._id)
                client._write({"jsonrpc": "2.0", "id": client._id,
                               "method": "codev/runTool", "params": params(use)})  # fmt: skip
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
    return _figures(len(singles[0]), singles, walls)


def measure_lsp(calls: int = 100, lines: int = 2000, rounds: int = 3) -> ConcurrencyFigures:
    """``calls`` codev/runTool Reads over LSP."""
    with tempfile.TemporaryDirectory(prefix="codev-bench-conc-lsp-") as tmp:
        root = Path(tmp) / "ws"
        paths = make_files(root, calls, lines)
        return _measure_lsp(
            "Read", lambda _tag: [_read_input(p) for p in paths], root, Path(tmp), rounds
        )


def measure_lsp_fetch(calls: int = 100, rounds: int = 3) -> ConcurrencyFigures:
    """``calls`` codev/runTool WebFetches of slow pages over LSP."""
    with tempfile.TemporaryDirectory(prefix="codev-bench-fetch-lsp-") as tmp, SlowSite() as site:
        root = Path(tmp) / "ws"
        root.mkdir()

        def inputs(tag: str) -> list[dict[str, Any]]:
            return [_fetch_input(f"{site.url}/{tag}/page{i}") for i in range(calls)]

        return _measure_lsp("WebFetch", inputs, root, Path(tmp), rounds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--serve", type=float, metavar="DELAY", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve is not None:
        serve_slow_site(args.serve)
        return 0
    n, rounds = args.calls, args.rounds
    runs: list[tuple[str, Callable[[], ConcurrencyFigures]]] = [
        ("WebFetch, engine", lambda: asyncio.run(measure_fetch(n, rounds))),
        ("WebFetch, LSP", lambda: measure_lsp_fetch(n, rounds)),
        ("Read, engine", lambda: asyncio.run(measure(n, args.lines, rounds))),
        ("Read, LSP", lambda: measure_lsp(n, args.lines, rounds)),
    ]
    for where, run in runs:
        f = run()
        print(
            f"{where}: {f.calls} as one batch {f.batch_wall_s * 1000:.1f} ms; slowest single "
            f"{f.slowest_single_s * 1000:.1f} ms ({f.ratio:.1f}×), median "
            f"{f.median_single_s * 1000:.2f} ms, one after another {f.sum_single_s * 1000:.1f} ms "
            f"({f.vs_sequential:.2f}×)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

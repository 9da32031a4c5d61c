"""LSP latency: Codev LS against a bare pygls server, measured in the same run.

Two figures, each as a ratio to the same thing done by a bare pygls 2 server
(``LanguageServer`` with one custom request and nothing else), so that the
machine's load cancels out:

- cold start: spawn → ``initialize`` result (target ≤ 1.2×: the server imports
  pygls and its own thin layer; the engine is imported after ``initialize``);
- round trip: ``codev/runTool`` Read of a small file, against a trivial custom
  request (``bench/echo``) of the bare server (target ≤ 3×).

Cold starts alternate between the two servers, and so does which of a pair
goes first (bare, codev, codev, bare, ...), so a change in load on a shared
machine hits both alike. Both the medians and the minimums are reported; the
target is checked on the ratio of the **medians** (the minimums — the least
disturbed starts — are printed beside them as a cross-check). The client is a
minimal blocking JSON-RPC client over pipes (no pytest-lsp), the same for both.

Both servers run with compiled bytecode: an environment with
``PYTHONDONTWRITEBYTECODE`` would otherwise make Codev's own modules compile
from source at every start while pygls (installed with its ``.pyc`` files)
never does. The children get a ``PYTHONPYCACHEPREFIX`` in the run's temporary
folder instead, filled by the warm-up starts, so the checkout is left untouched.

    python bench/lsp_latency.py            # 25 starts each, 300 round trips each
    python bench/lsp_latency.py --quick    # CI: 11 starts, 100 round trips
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

TARGET_START = 1.2
TARGET_ROUND_TRIP = 3.0

# Cold starts and round trips per server: (starts, trips).
QUICK = (11, 100)
FULL = (25, 300)

BARE_SERVER = """
from pygls.lsp.server import LanguageServer

server = LanguageServer("bare", "1.0")


@server.feature("bench/echo")
async def echo(ls, params):
    return {"echo": True}


server.start_io()
"""

CAPABILITIES: dict[str, Any] = {
    "workspace": {"applyEdit": True, "workspaceFolders": True, "configuration": True},
    "window": {"workDoneProgress": True},
}


class Client:
    """A blocking JSON-RPC client over a child's stdio."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self._id = 0

    def send(self, method: str, params: Any, *, notify: bool = False) -> int:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            self._id += 1
            message["id"] = self._id
        body = json.dumps(message).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.proc.stdin.flush()
        return self._id

    def receive(self, msg_id: int) -> Any:
        """Read messages until the response to ``msg_id`` (answering server requests)."""
        assert self.proc.stdout is not None
        while True:
            length = 0
            while True:
                line = self.proc.stdout.readline()
                if not line:
                    raise RuntimeError("the server closed its stdout")
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
                elif line in (b"\r\n", b"\n"):
                    break
            message = json.loads(self.proc.stdout.read(length))
            if message.get("id") == msg_id and "method" not in message:
                if "error" in message:
                    raise RuntimeError(message["error"])
                return message.get("result")
            if "method" in message and "id" in message:  # a server request: answer null
                body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": None})
                assert self.proc.stdin is not None
                self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body.encode()))
                self.proc.stdin.flush()

    def request(self, method: str, params: Any) -> Any:
        return self.receive(self.send(method, params))

    def initialize(self, root: Path) -> float:
        """Send initialize; seconds from spawn to its result."""
        self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "capabilities": CAPABILITIES,
            },
        )
        return time.perf_counter() - self.started

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()


def _median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def _p95_ms(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] * 1000


def run(starts: int, trips: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        bare_script = Path(tmp) / "bare_server.py"
        bare_script.write_text(BARE_SERVER)
        (root / "small.txt").write_text("".join(f"line {i}\n" for i in range(20)))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in [str(REPO), env.get("PYTHONPATH")] if p)
        env["CODEV_CONFIG_DIR"] = str(Path(tmp) / "config")
        # Bytecode for both servers, cached in the temporary folder (see the docstring).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        bare_argv = [sys.executable, str(bare_script)]
        codev_argv = [sys.executable, "-m", "codev_ls"]

        # Warm up: the first start of each writes its bytecode, the second reads it
        # (and the OS has the files cached).
        for _ in range(2):
            for argv in (bare_argv, codev_argv):
                c = Client(argv, env)
                c.initialize(root)
                c.close()

        bare_starts: list[float] = []
        codev_starts: list[float] = []
        bare_pair = (bare_argv, bare_starts)
        codev_pair = (codev_argv, codev_starts)
        for i in range(starts):
            order = (bare_pair, codev_pair) if i % 2 == 0 else (codev_pair, bare_pair)
            for argv, sink in order:
                c = Client(argv, env)
                sink.append(c.initialize(root))
                c.close()

        bare = Client(bare_argv, env)
        bare.initialize(root)
        bare.send("initialized", {}, notify=True)
        codev = Client(codev_argv, env)
        codev.initialize(root)
        codev.send("initialized", {}, notify=True)
        read = {"name": "Read", "input": {"file_path": str(root / "small.txt")}}
        outcome = codev.request("codev/runTool", read)  # waits for the engine to be built
        assert outcome["status"] == "success", outcome
        for _ in range(20):  # warm-up both
            bare.request("bench/echo", {})
            codev.request("codev/runTool", read)
        bare_trips: list[float] = []
        codev_trips: list[float] = []
        for _ in range(trips):
            t = time.perf_counter()
            bare.request("bench/echo", {})
            bare_trips.append(time.perf_counter() - t)
            t = time.perf_counter()
            outcome = codev.request("codev/runTool", read)
            codev_trips.append(time.perf_counter() - t)
            assert outcome["status"] == "success"
        bare.close()
        codev.close()

    return {
        "bare_start_ms": _median_ms(bare_starts),
        "codev_start_ms": _median_ms(codev_starts),
        "start_ratio": statistics.median(codev_starts) / statistics.median(bare_starts),
        "bare_start_min_ms": min(bare_starts) * 1000,
        "codev_start_min_ms": min(codev_starts) * 1000,
        "start_min_ratio": min(codev_starts) / min(bare_starts),
        "bare_trip_ms": _median_ms(bare_trips),
        "bare_trip_p95_ms": _p95_ms(bare_trips),
        "codev_trip_ms": _median_ms(codev_trips),
        "codev_trip_p95_ms": _p95_ms(codev_trips),
        "trip_ratio": statistics.median(codev_trips) / statistics.median(bare_trips),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs (CI)")
    parser.add_argument("--starts", type=int, default=None, help="cold starts per server")
    parser.add_argument("--trips", type=int, default=None, help="round trips per server")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    starts = args.starts or (QUICK if args.quick else FULL)[0]
    trips = args.trips or (QUICK if args.quick else FULL)[1]
    figures = run(starts, trips)
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0

    def verdict(ratio: float, target: float) -> str:
        return "ok" if ratio <= target else "OVER TARGET"

    print(f"LSP latency ({starts} cold starts, {trips} round trips per server)")
    print(
        f"  cold start → initialize, median: bare pygls {figures['bare_start_ms']:.0f} ms, "
        f"codev-ls {figures['codev_start_ms']:.0f} ms → "
        f"{figures['start_ratio']:.2f}× (target ≤ {TARGET_START}×, checked on the medians: "
        f"{verdict(figures['start_ratio'], TARGET_START)})"
    )
    print(
        f"  cold start → initialize, min:    bare pygls {figures['bare_start_min_ms']:.0f} ms, "
        f"codev-ls {figures['codev_start_min_ms']:.0f} ms → "
        f"{figures['start_min_ratio']:.2f}× (for information)"
    )
    print(
        f"  round trip, median: bare custom request {figures['bare_trip_ms']:.2f} ms "
        f"(p95 {figures['bare_trip_p95_ms']:.2f}), codev/runTool Read "
        f"{figures['codev_trip_ms']:.2f} ms (p95 {figures['codev_trip_p95_ms']:.2f}) → "
        f"{figures['trip_ratio']:.2f}× (target ≤ {TARGET_ROUND_TRIP}×: "
        f"{verdict(figures['trip_ratio'], TARGET_ROUND_TRIP)})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

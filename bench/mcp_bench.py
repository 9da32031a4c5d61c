"""MCP benchmark: what the engine adds to an MCP tool call, against same-run baselines.

- call: ``engine.run_tool`` of an MCP tool (the whole lifecycle: schema check,
  permission decision, call, result mapping, persistence check, hooks) against
  ``ClientSession.call_tool`` of the same tool on a second copy of the same
  server, straight through the SDK;
- start: ``attach_mcp`` until the server is ready (spawn, initialize, tools/list,
  tools made into Tools) against the SDK's own spawn + initialize + list_tools;
- build_engine: building the engine with a configured MCP server (which starts
  in the background) against building it with none — the time the language
  server's start pays for MCP.

The server is tests/fakes/mcp_servers/probe.py (official SDK, stdio).
Run: ``python bench/mcp_bench.py [--n 200]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

PROBE = REPO / "tests" / "fakes" / "mcp_servers" / "probe.py"


def server_entry(probe_dir: Path) -> dict:
    return {
        "command": sys.executable,
        "args": [str(PROBE)],
        "env": {"PROBE_DIR": str(probe_dir)},
    }


async def bench_call(root: Path, probe_dir: Path, n: int) -> tuple[float, float]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from codev_ls.bridge import ScriptedBridge
    from codev_ls.engine.runtime import Engine
    from codev_ls.mcp.manager import attach_mcp

    engine = Engine(root, ScriptedBridge(), mode="bypassPermissions")
    manager = attach_mcp(engine)
    await manager.wait_ready(60)
    args = {"name": "PROBE_DIR"}
    try:
        for _ in range(10):
            await engine.run_tool("mcp__probe__echo_env", args)
        start = time.perf_counter()
        for _ in range(n):
            outcome = await engine.run_tool("mcp__probe__echo_env", args)
            assert outcome.status == "success", outcome
        ours = (time.perf_counter() - start) / n
    finally:
        await engine.aclose()

    params = StdioServerParameters(
        command=sys.executable, args=[str(PROBE)], env={"PROBE_DIR": str(probe_dir)}
    )
    with _devnull() as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await session.list_tools()
            for _ in range(10):
                await session.call_tool("echo_env", args)
            start = time.perf_counter()
            for _ in range(n):
                await session.call_tool("echo_env", args)
            base = (time.perf_counter() - start) / n
    return ours, base


def _devnull():  # type: ignore[no-untyped-def]
    """The SDK baseline's stderr sink (ours writes the server's stderr to a log file)."""
    return open(os.devnull, "w")


async def bench_start(root: Path, probe_dir: Path, rounds: int) -> tuple[float, float]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from codev_ls.bridge import ScriptedBridge
    from codev_ls.engine.runtime import Engine
    from codev_ls.mcp.manager import attach_mcp

    ours, base = [], []
    for _ in range(rounds):
        engine = Engine(root, ScriptedBridge())
        start = time.perf_counter()
        manager = attach_mcp(engine)
        await manager.wait_ready(60)
        ours.append(time.perf_counter() - start)
        assert engine.mcp_tools, manager.status()
        await engine.aclose()

        params = StdioServerParameters(
            command=sys.executable, args=[str(PROBE)], env={"PROBE_DIR": str(probe_dir)}
        )
        start = time.perf_counter()
        with _devnull() as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                await session.list_tools()
                base.append(time.perf_counter() - start)
    return statistics.median(ours), statistics.median(base)


async def bench_build_engine(root: Path, empty: Path, n: int) -> tuple[float, float]:
    from codev_ls.app import build_engine
    from codev_ls.bridge import ScriptedBridge

    async def once(where: Path) -> float:
        start = time.perf_counter()
        engine = build_engine(where, ScriptedBridge())
        took = time.perf_counter() - start
        await engine.aclose()
        return took

    ours = [await once(root) for _ in range(n)]
    base = [await once(empty) for _ in range(n)]
    return statistics.median(ours), statistics.median(base)


def line(name: str, ours: float, base: float, unit: str = "ms") -> None:
    scale = 1000.0
    print(
        f"{name:<14} ours {ours * scale:9.3f} {unit}   baseline {base * scale:9.3f} {unit}"
        f"   ratio {ours / base:6.2f}"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="calls per side")
    parser.add_argument("--rounds", type=int, default=3, help="server starts per side")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["CODEV_CONFIG_DIR"] = str(Path(tmp) / "config")
        root = Path(tmp) / "ws"
        empty = Path(tmp) / "empty"
        probe_dir = Path(tmp) / "probe"
        for folder in (root, empty, probe_dir):
            folder.mkdir()
        # The project's server is approved in the user settings (else it waits for a question).
        (Path(tmp) / "config").mkdir()
        (Path(tmp) / "config" / "settings.json").write_text(
            json.dumps({"enableAllProjectMcpServers": True})
        )
        (root / ".mcp.json").write_text(
            json.dumps({"mcpServers": {"probe": server_entry(probe_dir)}})
        )
        print(f"MCP benchmark (n={args.n}, rounds={args.rounds}); ratio = ours / baseline")
        line("call", *(await bench_call(root, probe_dir, args.n)))
        line("start", *(await bench_start(root, probe_dir, args.rounds)))
        line("build_engine", *(await bench_build_engine(root, empty, 20)))


if __name__ == "__main__":
    asyncio.run(main())

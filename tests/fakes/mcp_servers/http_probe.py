"""An MCP server over streamable HTTP on 127.0.0.1 (official SDK's MCPServer + uvicorn).

Run as ``python tests/fakes/mcp_servers/http_probe.py``: it binds a free port (or
``PROBE_PORT``), prints
``PORT <n>`` on stdout, and serves ``http://127.0.0.1:<n>/mcp`` until killed.
With ``PROBE_TOKEN`` set, every request must carry ``Authorization: Bearer
<token>`` (else 401), which is how tests see configured headers arrive.

Tools: ``add(a, b)``, ``whoami()`` (the Authorization header it got),
``countdown(n)`` (progress notifications), ``oops()`` (an isError result).
"""

from __future__ import annotations

import os
import socket
import sys
from typing import Any

import anyio
import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ToolAnnotations

TOKEN = os.environ.get("PROBE_TOKEN")
server = MCPServer("http-probe")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def whoami(ctx: Context) -> str:
    """The Authorization header of this request."""
    headers = ctx.headers or {}
    return headers.get("authorization", "<none>")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def countdown(n: int, ctx: Context) -> str:
    """Count down from n, reporting progress."""
    for i in range(n):
        await ctx.report_progress(i + 1, n, f"{n - i - 1} left")
        await anyio.sleep(0.05)
    return "liftoff"


@server.tool()
def oops() -> str:
    """Always fails."""
    raise ValueError("oops, this tool always fails")


def guarded(app: Any) -> Any:
    """Reject requests without the expected bearer token (when PROBE_TOKEN is set)."""

    async def wrapper(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and TOKEN is not None:
            headers = dict(scope.get("headers") or [])
            if headers.get(b"authorization", b"").decode() != f"Bearer {TOKEN}":
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"unauthorized"})
                return
        await app(scope, receive, send)

    return wrapper


def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", int(os.environ.get("PROBE_PORT", "0"))))
    sock.listen(128)  # connections queue up from now on, before uvicorn accepts them
    port = sock.getsockname()[1]
    app = server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(guarded(app), log_level="warning", lifespan="on")
    print(f"PORT {port}", flush=True)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())

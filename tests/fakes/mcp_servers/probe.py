"""A small MCP server (official SDK, stdio) for the behaviours the public servers don't show.

Run as ``python tests/fakes/mcp_servers/probe.py``. ``PROBE_DIR`` (env) is a
folder where it leaves evidence the tests read:

- ``starts``: one line per start (so restarts can be counted)
- ``cancelled-<tag>``: written when a ``sleep`` call is cancelled by the client

Tools:

- ``sleep(seconds, tag)``: reports progress every 0.1 s with a message; records cancellation
- ``die(code)``: the process exits at once, in the middle of the call
- ``freeze()``: the process stops (SIGSTOP) mid-call and answers nothing any more
- ``fail(message)``: raises, which the SDK turns into an ``isError`` result
- ``blobs()``: an embedded binary resource, an embedded image, audio, a resource link
- ``big(chars)``: a large text result
- ``add_tool(name)``: registers a new tool and sends ``notifications/tools/list_changed``
- ``echo_env(name)``: the value of an environment variable of the server
"""

from __future__ import annotations

import base64
import os
import signal
import sys
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ResourceLink,
    TextContent,
    ToolAnnotations,
)

PROBE_DIR = Path(os.environ.get("PROBE_DIR", "."))
PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

server = MCPServer("probe")
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False)


@server.tool(annotations=READ_ONLY)
async def sleep(seconds: float, tag: str, ctx: Context) -> str:
    """Sleep, reporting progress, and record a cancellation."""
    steps = max(1, int(seconds / 0.1))
    try:
        for i in range(steps):
            await ctx.report_progress(i + 1, steps, f"step {i + 1} of {steps}")
            await anyio.sleep(0.1)
    except anyio.get_cancelled_exc_class():
        (PROBE_DIR / f"cancelled-{tag}").write_text("cancelled")
        raise
    return f"slept {seconds} s"


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
def die(code: int = 7) -> str:
    """Exit the whole server process in the middle of the call."""
    print(f"probe: dying with code {code} as asked", file=sys.stderr, flush=True)
    os._exit(code)


@server.tool(annotations=READ_ONLY)
def freeze() -> str:
    """Stop the whole process (SIGSTOP): it answers nothing any more, not even pings."""
    os.kill(os.getpid(), signal.SIGSTOP)
    return "thawed"


@server.tool(annotations=READ_ONLY)
def fail(message: str) -> str:
    """Raise: the SDK answers with an isError result."""
    raise RuntimeError(message)


@server.tool(annotations=READ_ONLY)
def blobs() -> CallToolResult:
    """Every non-text kind of content."""
    return CallToolResult(
        content=[
            TextContent(text="here are blobs"),
            EmbeddedResource(
                resource=BlobResourceContents(
                    uri="probe://data/report.bin",
                    mime_type="application/octet-stream",
                    blob=base64.b64encode(b"\x00\x01binary report\xff").decode(),
                )
            ),
            EmbeddedResource(
                resource=BlobResourceContents(
                    uri="probe://img/dot.png", mime_type="image/png", blob=PNG_1X1
                )
            ),
            AudioContent(data=base64.b64encode(b"RIFF....WAVE").decode(), mime_type="audio/wav"),
            ResourceLink(
                name="readme",
                uri="probe://docs/readme",
                mime_type="text/markdown",
                description="the docs",
            ),
        ]
    )


@server.tool(annotations=READ_ONLY)
def big(chars: int) -> str:
    """A long text."""
    line = "0123456789abcdefghijklmnopqrstuvwxyz\n"
    return (line * (chars // len(line) + 1))[:chars]


@server.tool()
async def add_tool(name: str, ctx: Context) -> str:
    """Register a new tool and tell the client the list changed."""

    def added() -> str:
        return f"I am {name}"

    server.add_tool(added, name=name, description=f"added at run time: {name}")
    await ctx.session.send_tool_list_changed()
    return f"added {name}"


@server.tool(annotations=READ_ONLY)
def echo_env(name: str) -> str:
    """An environment variable of this process."""
    return os.environ.get(name, "<unset>")


if __name__ == "__main__":
    with open(PROBE_DIR / "starts", "a") as fh:
        fh.write(f"{os.getpid()}\n")
    server.run("stdio")

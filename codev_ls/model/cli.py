"""``codev-ls chat "prompt"``: one chat turn from a terminal, for scripts (like ``claude -p``).

The assistant's text goes to stdout as it streams (or, with ``--json``, every
chat event as one JSON line); tool calls and their outcomes are noted on
stderr; permission questions are asked on the terminal (``--yes`` allows each
once). Ctrl-C interrupts the turn cleanly.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
from pathlib import Path

from codev_ls.model.events import ChatEvent, DoneEvent, TextEvent, ToolResultEvent, ToolUseEvent

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def run_chat_command(args: argparse.Namespace) -> int:
    prompt = sys.stdin.read() if args.prompt == "-" else args.prompt
    if not prompt.strip():
        print("codev-ls: error: the prompt is empty.", file=sys.stderr)
        return EXIT_USAGE
    root = Path(args.cwd or os.getcwd())
    if not root.is_dir():
        print(f"codev-ls: error: --cwd {root} is not a folder.", file=sys.stderr)
        return EXIT_USAGE
    return asyncio.run(_chat(prompt, root, args.mode, args.yes, args.json))


async def _chat(prompt: str, root: Path, mode: str | None, yes: bool, as_json: bool) -> int:
    from codev_ls.app import build_engine
    from codev_ls.bridge import TerminalBridge
    from codev_ls.model.service import ModelService, chat

    # With --yes nothing is asked; otherwise questions need a terminal to read answers from.
    bridge = TerminalBridge(assume_yes=yes)
    engine = build_engine(root, bridge, mode=mode)  # type: ignore[arg-type]
    service = engine.services.get("model")
    loop = asyncio.get_running_loop()
    with_text = False

    def on_event(event: ChatEvent) -> None:
        nonlocal with_text
        if as_json:
            print(json.dumps(event.to_protocol(), ensure_ascii=False), flush=True)
            return
        if isinstance(event, TextEvent):
            sys.stdout.write(event.delta)
            sys.stdout.flush()
            with_text = True
        elif isinstance(event, ToolUseEvent):
            args = json.dumps(event.input, ensure_ascii=False)
            print(f"\n→ {event.name} {args[:200]}", file=sys.stderr, flush=True)
        elif isinstance(event, ToolResultEvent):
            o = event.outcome
            first = o.text().strip().splitlines()[:1]
            print(
                f"← {o.tool_name}: {o.status} {first[0][:160] if first else ''}",
                file=sys.stderr,
                flush=True,
            )
        elif isinstance(event, DoneEvent) and with_text:
            sys.stdout.write("\n")
            sys.stdout.flush()

    def on_sigint() -> None:
        if isinstance(service, ModelService):
            service.cancel()

    try:
        loop.add_signal_handler(signal.SIGINT, on_sigint)
        loop.add_signal_handler(signal.SIGTERM, on_sigint)
    except (NotImplementedError, RuntimeError):
        pass
    try:
        mcp = engine.services.get("mcp")
        if mcp is not None:
            # A project's MCP servers are asked about first, not in the middle of the turn.
            await mcp.wait_approvals()
        result = await chat(engine, prompt, on_event=on_event)
    finally:
        await engine.aclose()
    if result.error:
        print(f"codev-ls: {result.error}", file=sys.stderr)
    print(f"[chat: {result.stop_reason}]", file=sys.stderr)
    return EXIT_OK if result.stop_reason in ("end_turn", "stop_sequence") else EXIT_FAILED

"""The ``codev-ls`` command: the language server, and the terminal runner.

    codev-ls                         LSP over stdio (what editors start)
    codev-ls --tcp HOST:PORT         LSP over TCP, for debugging
    codev-ls --version
    codev-ls tool NAME 'JSON' [--mode MODE] [--cwd DIR] [--yes] [--json]
    codev-ls chat "PROMPT" [--mode MODE] [--cwd DIR] [--yes] [--json]
    codev-ls explain NAME 'JSON' [--mode MODE] [--cwd DIR] [--json]
    codev-ls changes --session NAME [--cwd DIR] [--diff] [--json]
    codev-ls undo --session NAME [INDEX | --tool-use-id ID] [--cwd DIR] [--json]

Exit codes of ``tool``: 0 success, 1 error/rejected/interrupted, 2 usage error.
Exit codes of ``chat``: 0 the model finished, 1 error/interrupted/turn limit, 2 usage error.
``explain`` says what would decide a use and why, without running it: exit 0
when it could tell, 2 for usage errors (bad JSON, unknown tool, invalid input).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from codev_ls import __version__

if TYPE_CHECKING:
    import argparse

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2

# What editors pass: nothing (Neovim), or ``--stdio`` (vscode-languageclient). These
# start the server without building the argument parser: argparse pulls in gettext
# and shutil (bz2, lzma), and the cold start to `initialize` is what editors wait on.
_PLAIN_SERVE_ARGS = ([], ["--stdio"])


def _mode_arg(value: str) -> str:
    import argparse

    from codev_ls.permissions.types import PERMISSION_MODES, parse_mode

    mode = parse_mode(value)
    if mode is None:
        raise argparse.ArgumentTypeError(
            f"unknown permission mode {value!r} (choose from {', '.join(PERMISSION_MODES)})"
        )
    return mode


def make_parser() -> argparse.ArgumentParser:
    import argparse

    class _Parser(argparse.ArgumentParser):
        """argparse that exits 2 with a one-line message (its default, made explicit)."""

        def error(self, message: str) -> None:  # type: ignore[override]
            self.print_usage(sys.stderr)
            print(f"codev-ls: error: {message}", file=sys.stderr)
            raise SystemExit(EXIT_USAGE)

    parser = _Parser(
        prog="codev-ls",
        description="Codev LS: an AI coding assistant's tool engine, as a language server.",
    )
    parser.add_argument("--version", action="version", version=f"codev-ls {__version__}")
    parser.add_argument("--stdio", action="store_true", help="serve LSP over stdio (the default)")
    parser.add_argument("--tcp", metavar="HOST:PORT", help="serve LSP over TCP, for debugging")
    parser.add_argument(
        "--log-level",
        default=os.environ.get("CODEV_LOG_LEVEL", "WARNING"),
        help="logging level on stderr",
    )
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    tool = sub.add_parser("tool", help="run one tool through the full engine from a terminal")
    tool.add_argument("name", help="the tool's name (or alias), e.g. Read")
    tool.add_argument("input", nargs="?", default="{}", help="the tool's input as a JSON object")
    tool.add_argument("--mode", type=_mode_arg, default=None, help="permission mode")
    tool.add_argument("--cwd", default=None, help="workspace root (default: the current folder)")
    tool.add_argument(
        "--yes", "-y", action="store_true", help='answer "Allow once" to every permission question'
    )
    tool.add_argument("--json", action="store_true", help="print the whole outcome as JSON")
    tool.add_argument(
        "--session",
        metavar="NAME",
        default=None,
        help="keep the session (what was read, the shell folder) between runs under NAME, "
        "so that a Read in one run lets an Edit in the next",
    )

    chat = sub.add_parser("chat", help="one chat turn with the model, for scripts")
    chat.add_argument("prompt", help="the prompt ('-' reads it from stdin)")
    chat.add_argument("--mode", type=_mode_arg, default=None, help="permission mode")
    chat.add_argument("--cwd", default=None, help="workspace root (default: the current folder)")
    chat.add_argument(
        "--yes", "-y", action="store_true", help='answer "Allow once" to every permission question'
    )
    chat.add_argument(
        "--json", action="store_true", help="print chat events as JSON lines on stdout"
    )

    explain = sub.add_parser(
        "explain", help="say what would decide a tool use and why, without running it"
    )
    explain.add_argument("name", help="the tool's name (or alias), e.g. Bash")
    explain.add_argument("input", nargs="?", default="{}", help="the tool's input as JSON")
    explain.add_argument("--mode", type=_mode_arg, default=None, help="permission mode")
    explain.add_argument("--cwd", default=None, help="workspace root (default: current folder)")
    explain.add_argument("--json", action="store_true", help="print the explanation as JSON")

    changes = sub.add_parser("changes", help="list the changes the tools made in a session")
    undo = sub.add_parser("undo", help="undo a change the tools made (the latest by default)")
    undo.add_argument("index", nargs="?", type=int, help="the change's number in `changes`")
    undo.add_argument("--tool-use-id", default=None, help="the tool use that made the change")
    changes.add_argument("--diff", action="store_true", help="show each change's diff")
    for p in (changes, undo):
        p.add_argument("--session", metavar="NAME", required=True, help="the session's name")
        p.add_argument("--cwd", default=None, help="workspace root (default: current folder)")
        p.add_argument("--json", action="store_true", help="print the result as JSON")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv in _PLAIN_SERVE_ARGS:
        _set_up_logging(os.environ.get("CODEV_LOG_LEVEL", "WARNING"))
        return serve()
    parser = make_parser()
    args = parser.parse_args(argv)
    _set_up_logging(args.log_level)
    if args.command in ("tool", "chat", "explain", "changes", "undo"):
        try:
            return _run_cli_command(args)
        except BrokenPipeError:
            # `codev-ls explain ... | head`: the reader left; that is no error of ours.
            _silence_stdout()
            return EXIT_OK
    return serve(args.tcp)


def _run_cli_command(args: argparse.Namespace) -> int:
    if args.command == "tool":
        return run_tool_command(args)
    if args.command == "chat":
        from codev_ls.model.cli import run_chat_command

        return run_chat_command(args)
    if args.command in ("changes", "undo"):
        return changes_command(args)
    return explain_command(args)


def changes_command(args: argparse.Namespace) -> int:
    """`codev-ls changes` / `codev-ls undo`: a named session's change list."""
    from codev_ls.engine.config import config_dir
    from codev_ls.engine.session_store import SessionNameError, session_file
    from codev_ls.tools._changes import ChangeRef, terminal_changes

    root = Path(args.cwd or os.getcwd())
    try:
        path = session_file(config_dir(), args.session)
    except SessionNameError as exc:
        print(f"codev-ls: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    undo = None
    if args.command == "undo":
        if args.index is not None and args.tool_use_id is not None:
            print("codev-ls: error: give INDEX or --tool-use-id, not both", file=sys.stderr)
            return EXIT_USAGE
        if args.index is not None and args.index < 1:
            print("codev-ls: error: INDEX counts from 1", file=sys.stderr)
            return EXIT_USAGE
        undo = ChangeRef(args.index, args.tool_use_id)
    code, text = asyncio.run(
        terminal_changes(
            root, path, undo=undo, as_json=args.json, with_diffs=getattr(args, "diff", False)
        )
    )
    print(text)
    return code


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _set_up_logging(level: str) -> None:
    """Logs go to stderr (stdout is the protocol channel), with API keys redacted."""
    logging.basicConfig(
        level=getattr(logging, str(level).upper(), logging.WARNING),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    from codev_ls.engine.secrets import install_log_redaction

    install_log_redaction()


def parse_tcp(value: str) -> tuple[str, int] | str:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) as (host, port), or why it is not one."""
    host, _, port = value.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not host or not port.isdigit():
        return f"--tcp expects HOST:PORT, got {value!r}"
    if not 1 <= int(port) <= 65535:
        return f"--tcp: the port must be between 1 and 65535, got {port}"
    return host, int(port)


def serve(tcp_arg: str | None = None) -> int:
    """Start the language server (stdio unless ``--tcp HOST:PORT`` is given)."""
    tcp = None
    if tcp_arg:
        parsed = parse_tcp(tcp_arg)
        if isinstance(parsed, str):
            print(f"codev-ls: error: {parsed}", file=sys.stderr)
            return EXIT_USAGE
        tcp = parsed
    serve_lsp = _import_server()
    if tcp is None:
        serve_lsp()
        return EXIT_OK
    try:
        serve_lsp(tcp=tcp)
    except OSError as exc:  # the port is taken, the host unknown...
        reason = exc.strerror or str(exc)
        print(f"codev-ls: error: cannot serve on {tcp_arg}: {reason}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def _import_server() -> Callable[..., None]:
    """Import the LSP server with the garbage collector paused, then freeze what it made.

    Importing lsprotocol and pygls creates ~10^6 objects that live as long as the
    process; a full collection in the middle of the imports walks all of them and
    costs ~30 ms of the cold start. Frozen, they are left out of every later
    collection too (shorter pauses while requests are answered).
    """
    import gc

    gc.disable()
    try:
        from codev_ls.server import serve as serve_lsp
    finally:
        gc.freeze()
        gc.enable()
    return serve_lsp


def _read_input(args: argparse.Namespace) -> tuple[dict | None, Path | None]:
    """The JSON input and the workspace root of `tool`/`explain`, or (None, None) after a message."""
    try:
        tool_input = json.loads(args.input)
    except json.JSONDecodeError as exc:
        print(
            f"codev-ls: error: the input is not valid JSON ({exc.msg} at line {exc.lineno}, "
            f'column {exc.colno}). Pass one JSON object, e.g. \'{{"file_path": "/tmp/x"}}\'.',
            file=sys.stderr,
        )
        return None, None
    except RecursionError:
        print(
            "codev-ls: error: the input is nested too deeply to be read as JSON. "
            "Pass one JSON object of the tool's fields.",
            file=sys.stderr,
        )
        return None, None
    except ValueError as exc:  # e.g. an integer longer than Python converts (4300 digits)
        print(f"codev-ls: error: the input cannot be read as JSON ({exc}).", file=sys.stderr)
        return None, None
    if not isinstance(tool_input, dict):
        print(
            f"codev-ls: error: the input must be a JSON object, got {type(tool_input).__name__}.",
            file=sys.stderr,
        )
        return None, None
    root = Path(args.cwd or os.getcwd())
    if not root.is_dir():
        print(f"codev-ls: error: --cwd {root} is not a folder.", file=sys.stderr)
        return None, None
    return tool_input, root


def explain_command(args: argparse.Namespace) -> int:
    """`codev-ls explain`: the permission decision a use would get, and why."""
    tool_input, root = _read_input(args)
    if tool_input is None or root is None:
        return EXIT_USAGE
    return asyncio.run(_explain(args.name, tool_input, root, args.mode, args.json))


async def _explain(name: str, tool_input: dict, root: Path, mode: str | None, as_json: bool) -> int:
    from codev_ls.app import build_engine
    from codev_ls.bridge import TerminalBridge
    from codev_ls.permissions.explain import explain_permission, format_explanation

    mcp_tool = name.startswith("mcp__")
    engine = build_engine(root, TerminalBridge(interactive=False), start_mcp=mcp_tool)
    try:
        mcp = engine.services.get("mcp")
        if mcp_tool and mcp is not None:
            await mcp.wait_ready()  # an MCP tool is known once its server is up
        data = await explain_permission(engine, name, tool_input, mode=mode)  # type: ignore[arg-type]
    finally:
        await engine.aclose()
    if as_json:
        print(json.dumps(data, ensure_ascii=False, indent=2, default=str))
    else:
        print(format_explanation(data))
    return EXIT_USAGE if "error" in data else EXIT_OK


def run_tool_command(args: argparse.Namespace) -> int:
    """`codev-ls tool`: one tool use through the engine, its outcome on stdout."""
    tool_input, root = _read_input(args)
    if tool_input is None or root is None:
        return EXIT_USAGE
    session_path = None
    if args.session is not None:
        from codev_ls.engine.config import config_dir
        from codev_ls.engine.session_store import SessionNameError, session_file

        try:
            session_path = session_file(config_dir(), args.session)
        except SessionNameError as exc:
            print(f"codev-ls: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
    return asyncio.run(
        _run_tool(args.name, tool_input, root, args.mode, args.yes, args.json, session_path)
    )


async def _run_tool(
    name: str,
    tool_input: dict,
    root: Path,
    mode: str | None,
    yes: bool,
    as_json: bool,
    session_path: Path | None = None,
) -> int:
    from codev_ls.app import build_engine
    from codev_ls.bridge import TerminalBridge
    from codev_ls.engine.session_store import load_session, save_session

    engine = build_engine(
        root,
        TerminalBridge(assume_yes=yes),
        mode=mode,  # type: ignore[arg-type]
        start_mcp=name.startswith("mcp__"),
    )
    if session_path is not None and load_session(engine.session, session_path):
        engine.sessions[engine.session.id] = engine.session
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    interrupted = False

    def on_sigint() -> None:
        nonlocal interrupted
        interrupted = True
        engine.cancel()
        if task is not None and not engine._running:  # nothing to interrupt: stop waiting
            task.cancel()

    try:
        loop.add_signal_handler(signal.SIGINT, on_sigint)
        loop.add_signal_handler(signal.SIGTERM, on_sigint)
    except (NotImplementedError, RuntimeError):
        pass
    outcome = None
    try:
        mcp = engine.services.get("mcp")
        if name.startswith("mcp__") and mcp is not None:
            await mcp.wait_ready()  # MCP tools join the pool once their server is up
        outcome = await engine.run_tool(name, tool_input)
    except asyncio.CancelledError:
        print("codev-ls: interrupted", file=sys.stderr)
    finally:
        await engine.aclose()
    if outcome is not None:
        if as_json:
            print(json.dumps(outcome.to_protocol(), ensure_ascii=False, indent=2))
        else:
            print(outcome.text())
            extra = f" ({outcome.decision_source})" if outcome.decision_source else ""
            print(f"[{outcome.tool_name or name}: {outcome.status}{extra}]", file=sys.stderr)
    # After the outcome: a session that cannot be kept must not hide what the tool did.
    if session_path is not None:
        try:
            save_session(engine.session, session_path)
        except OSError as exc:
            print(
                f"codev-ls: warning: the session could not be saved to {session_path} "
                f"({exc.strerror or exc}); the next run with --session starts afresh.",
                file=sys.stderr,
            )
    if outcome is None:
        return EXIT_FAILED
    return EXIT_OK if outcome.status == "success" else EXIT_FAILED


if __name__ == "__main__":
    raise SystemExit(main())

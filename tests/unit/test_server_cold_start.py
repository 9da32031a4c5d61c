"""What the language server imports before it answers ``initialize``.

The cold start is what an editor waits on (``bench/lsp_latency.py`` measures it
against a bare pygls server). Everything the engine needs is imported after
``initialize`` has been answered, in a thread; this test keeps it that way by
starting the real server with ``-X importtime``, sending ``initialize`` and
``exit`` — never ``initialized``, which builds the engine — and reading the
list of modules it imported.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

# Not needed to answer initialize, and each one costs the cold start milliseconds.
NOT_BEFORE_INITIALIZE = (
    "argparse",  # the CLI parser: editors start the server with no arguments or --stdio
    "tempfile",  # atomic writes (pulls in shutil, random, bz2, lzma)
    "shutil",
    "codev_ls.bridge",  # the engine's bridge values (a dozen dataclasses)
    "codev_ls.app",
    "codev_ls.engine.runtime",
    "codev_ls.permissions.types",
    "codev_ls.tools",
    "pydantic",
)


def _frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _imports_until_initialized(workspace: Path, *args: str) -> tuple[set[str], bytes]:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}},
    }
    exit_ = {"jsonrpc": "2.0", "method": "exit"}
    env = {k: v for k, v in os.environ.items() if k != "CODEV_LOG_LEVEL"}
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "codev_ls", *args],
        input=_frame(initialize) + _frame(exit_),
        capture_output=True,
        env=env,
        timeout=60,
    )
    modules = set(re.findall(r"^import time:\s*\d+ \|\s*\d+ \|\s*(\S+)", out.stderr.decode(), re.M))
    return modules, out.stdout


def test_the_server_answers_initialize_without_the_engine(workspace: Path) -> None:
    for args in ((), ("--stdio",)):
        modules, stdout = _imports_until_initialized(workspace, *args)
        assert b'"id": 1' in stdout and b'"capabilities"' in stdout, stdout[:500]
        assert "codev_ls.server" in modules and "lsprotocol.types" in modules
        assert sorted(m for m in NOT_BEFORE_INITIALIZE if m in modules) == [], args

"""An "MCP server" that reads every message and never answers (it exits when stdin closes)."""

from __future__ import annotations

import sys

if __name__ == "__main__":
    for _line in sys.stdin:
        pass

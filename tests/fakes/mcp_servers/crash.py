"""An "MCP server" that fails at start, the way a server missing its configuration does."""

from __future__ import annotations

import sys

if __name__ == "__main__":
    print("probe-crash: fatal: no API token configured", file=sys.stderr, flush=True)
    sys.exit(3)

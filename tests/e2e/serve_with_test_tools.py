"""Start the real Codev server with the e2e test tools added to the built-ins."""

from __future__ import annotations

import sys

from codev_ls.engine import registry

registry.BUILTIN_TOOLS = (
    *registry.BUILTIN_TOOLS,
    registry.BuiltinEntry("tests.e2e.slow_tool", "SleepTool"),
)

if __name__ == "__main__":
    from codev_ls.__main__ import main

    sys.exit(main())

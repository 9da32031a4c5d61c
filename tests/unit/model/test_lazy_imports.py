"""The provider SDKs are imported on first use only: the server's cold start never pays for them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_building_the_engine_does_not_import_the_sdks(workspace: Path) -> None:
    script = (
        "import json, sys\n"
        "from codev_ls.app import build_engine\n"
        "from codev_ls.bridge import ScriptedBridge\n"
        f"engine = build_engine({str(workspace)!r}, ScriptedBridge(), start_mcp=False)\n"
        "assert 'model' in engine.services\n"
        "pool = engine.tool_pool()\n"
        "from codev_ls.model.tool_defs import tool_specs\n"
        "tool_specs(pool, engine.session)\n"
        "print(json.dumps(sorted(k for k in sys.modules if k.split('.')[0] in "
        "('anthropic', 'openai', 'httpx'))))\n"
    )
    env = {"ANTHROPIC_API_KEY": "sk-ant-x", "PATH": "/usr/bin:/bin"}
    import os

    env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    env["CODEV_CONFIG_DIR"] = os.environ["CODEV_CONFIG_DIR"]
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env
    )
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert not [m for m in loaded if m.split(".")[0] in ("anthropic", "openai")]

"""House rule 1: the engine never imports pygls or lsprotocol.

Checked two ways: statically (every import statement of the engine's packages)
and dynamically (importing all their modules in a fresh interpreter leaves
pygls and lsprotocol out of ``sys.modules``).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "codev_ls"
ENGINE_PACKAGES = ["engine", "permissions", "tools", "model", "mcp"]
FORBIDDEN = ("pygls", "lsprotocol")


def _engine_modules() -> list[Path]:
    files: list[Path] = []
    for pkg in ENGINE_PACKAGES:
        files += sorted((PACKAGE / pkg).rglob("*.py")) if (PACKAGE / pkg).exists() else []
    files.append(PACKAGE / "bridge.py")
    return files


def test_no_engine_module_imports_pygls_or_lsprotocol() -> None:
    offenders = []
    files = _engine_modules()
    assert len(files) > 10
    for path in files:
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                if name.split(".")[0] in FORBIDDEN:
                    offenders.append(
                        f"{path.relative_to(PACKAGE.parent)}:{node.lineno} imports {name}"
                    )
    assert offenders == []


def test_importing_the_engine_does_not_load_pygls() -> None:
    modules = [
        ".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
        for p in _engine_modules()
    ]
    script = (
        "import importlib, json, sys\n"
        f"for m in {modules!r}:\n"
        "    importlib.import_module(m)\n"
        f"print(json.dumps(sorted(k for k in sys.modules if k.split('.')[0] in {FORBIDDEN!r})))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        cwd=PACKAGE.parent,
    )
    assert json.loads(out.stdout) == []


def test_the_checker_catches_a_forbidden_import(tmp_path: Path) -> None:
    sample = "from lsprotocol import types\nimport pygls.server\n"
    tree = ast.parse(sample)
    found = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom | ast.Import)
        and any(
            (getattr(n, "module", None) or a.name).split(".")[0] in FORBIDDEN
            for a in getattr(n, "names", [])
        )
    ]
    assert len(found) == 2

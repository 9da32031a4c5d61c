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


def forbidden_imports(path: Path) -> list[str]:
    """Every import statement of ``path`` that names pygls or lsprotocol, as ``file:line``.

    Absolute imports only: a relative import stays inside ``codev_ls``. Imports inside
    functions and ``TYPE_CHECKING`` blocks count too (``ast.walk`` sees them all).
    """
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[str] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            if name.split(".")[0] in FORBIDDEN:
                found.append(f"{path.name}:{node.lineno} imports {name}")
    return found


def test_no_engine_module_imports_pygls_or_lsprotocol() -> None:
    files = _engine_modules()
    assert len(files) > 10
    offenders = [hit for path in files for hit in forbidden_imports(path)]
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
    """The checker above, run on a module that breaks the rule in every way it can."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from __future__ import annotations\n"
        "import os, pygls.server\n"  # 2
        "from typing import TYPE_CHECKING\n"
        "from lsprotocol import types\n"  # 4
        "if TYPE_CHECKING:\n"
        "    from pygls.workspace import TextDocument\n"  # 6
        "from . import pygls\n"  # relative: codev_ls's own module, allowed
        "import pyglsx\n"  # another package whose name starts alike, allowed
        "def later():\n"
        "    import lsprotocol.types as t\n"  # 10
        "    return t\n"
    )
    assert forbidden_imports(sample) == [
        "sample.py:2 imports pygls.server",
        "sample.py:4 imports lsprotocol",
        "sample.py:6 imports pygls.workspace",
        "sample.py:10 imports lsprotocol.types",
    ]
    clean = tmp_path / "clean.py"
    clean.write_text("import os\nfrom codev_ls.bridge import EditorBridge\n")
    assert forbidden_imports(clean) == []

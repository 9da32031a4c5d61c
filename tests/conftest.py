"""Shared test set-up: every test gets its own workspace and Codev config folder.

Tests never touch the real ``~/.codev``: ``CODEV_CONFIG_DIR`` points into the
test's temp folder. Subprocesses (the terminal runner, the LSP server) run
``python -m codev_ls`` from this checkout, found through ``PYTHONPATH``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

pytest_plugins = ["tests.fakes.model_fixtures"]

REPO = Path(__file__).resolve().parent.parent

# Subprocesses import codev_ls from this checkout, installed or not.
os.environ["PYTHONPATH"] = os.pathsep.join(
    p for p in [str(REPO), os.environ.get("PYTHONPATH", "")] if p
)


@pytest.fixture(autouse=True)
def _isolated_config(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    config = tmp_path_factory.mktemp("codev-config")
    monkeypatch.setenv("CODEV_CONFIG_DIR", str(config))
    # Test workspaces are the tests' own: their .codev/settings*.json grants (hooks,
    # allow rules) are in force without the approval question (permissions/trust.py).
    # Tests of that question unset this.
    monkeypatch.setenv("CODEV_TRUSTED_FOLDERS", str(tmp_path_factory.getbasetemp()))
    for var in (
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "CODEV_PROVIDER",
        "CODEV_MODEL",
        "TAVILY_API_KEY",
        "JINA_API_KEY",
        "AMAP_API_KEY",
        "GOOGLE_MAPS_API_KEY",
        "CODEV_SIMPLE",
        "CODEV_REPL",
    ):
        monkeypatch.delenv(var, raising=False)
    for var in [v for v in os.environ if v.startswith(("CODEV_DISABLE_", "CODEV_ENABLE_"))]:
        monkeypatch.delenv(var)  # a developer's tool switches must not change what tests see
    return config


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace folder (resolved, so paths compare equal to the engine's)."""
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    return root


@pytest.fixture
def codev_cmd() -> list[str]:
    """The command that starts Codev LS from this checkout."""
    return [sys.executable, "-m", "codev_ls"]

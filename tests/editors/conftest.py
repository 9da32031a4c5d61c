"""Fixtures of the real-editor tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def screenshots(tmp_path: Path) -> Path:
    """Where the editor tests save their screenshots.

    A temporary folder, so a test run leaves the checkout as it was;
    ``CODEV_SCREENSHOTS=docs`` (or any folder) keeps them, e.g. to refresh
    the ones in ``docs/``.
    """
    chosen = os.environ.get("CODEV_SCREENSHOTS")
    folder = Path(chosen).resolve() if chosen else tmp_path / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder

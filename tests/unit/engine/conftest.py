"""Fixtures for the engine tests (hooks): engines over a temp workspace with settings files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.perm_tools import EngineFactory, engine_factory


@pytest.fixture
def make_engine(workspace: Path, tmp_path: Path) -> EngineFactory:
    return engine_factory(workspace, tmp_path / "data")

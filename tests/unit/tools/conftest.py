"""Fixtures for the file tools: an Engine over a temp workspace with a scripted editor."""

from __future__ import annotations

from pathlib import Path

import pytest

from codev_ls.bridge import ScriptedBridge
from codev_ls.engine.outcome import ToolOutcome
from codev_ls.engine.runtime import Engine


@pytest.fixture
def bridge() -> ScriptedBridge:
    return ScriptedBridge()


@pytest.fixture
def engine(workspace: Path, bridge: ScriptedBridge, tmp_path: Path) -> Engine:
    """Edits allowed without asking (bypassPermissions): these tests are about the tools."""
    return Engine(workspace, bridge, mode="bypassPermissions", data_root=tmp_path / "data")


class Runner:
    """Shorthands for running tools through the whole lifecycle."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    async def __call__(self, name: str, **input: object) -> ToolOutcome:
        return await self.engine.run_tool(name, input)

    async def ok(self, name: str, **input: object) -> ToolOutcome:
        outcome = await self.engine.run_tool(name, input)
        assert outcome.status == "success", outcome.text()
        return outcome

    async def read(self, path: Path, **input: object) -> ToolOutcome:
        return await self.ok("Read", file_path=str(path), **input)


@pytest.fixture
def run(engine: Engine) -> Runner:
    return Runner(engine)

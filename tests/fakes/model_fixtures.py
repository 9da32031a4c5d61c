"""Pytest fixtures for model tests (a plugin of tests/conftest.py): fake APIs, engines with a model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codev_ls.bridge import ScriptedBridge
from codev_ls.engine.tool import Tool
from tests.fakes.harness import FakeModel
from tests.fakes.rig import Rig


@pytest.fixture(params=["anthropic", "openai"])
def fake(request: pytest.FixtureRequest) -> Iterator[FakeModel]:
    with FakeModel(request.param) as model:
        yield model
    assert not model.problems, f"invalid request bodies: {model.problems}"


@pytest.fixture
def fake_anthropic() -> Iterator[FakeModel]:
    with FakeModel("anthropic") as model:
        yield model
    assert not model.problems, f"invalid request bodies: {model.problems}"


@pytest.fixture
async def make_rig(workspace: Path) -> Any:
    made: list[Rig] = []

    def make(fake: FakeModel, *, extra_tools: list[Tool] | None = None, **kw: Any) -> Rig:
        bridge = kw.pop("bridge", None) or ScriptedBridge()
        r = Rig(workspace, fake, bridge, extra_tools, **kw)
        made.append(r)
        return r

    yield make
    for r in made:
        await r.engine.aclose()


@pytest.fixture
async def rig(make_rig: Any, fake: FakeModel) -> Rig:
    return make_rig(fake)

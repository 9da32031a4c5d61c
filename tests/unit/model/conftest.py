"""Fixtures for model tests: a fake API server per provider, an Engine wired to it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codev_ls.bridge import ScriptedBridge
from codev_ls.engine.registry import get_all_base_tools
from codev_ls.engine.runtime import Engine
from codev_ls.engine.tool import Tool
from codev_ls.model.service import ModelService, attach_model
from tests.fakes.harness import FakeModel


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


class Rig:
    """An engine with a model, a scripted bridge and the chat events recorded."""

    def __init__(
        self,
        root: Path,
        fake: FakeModel,
        bridge: ScriptedBridge,
        extra_tools: list[Tool] | None = None,
        **cfg: str,
    ) -> None:
        self.root = root
        self.fake = fake
        self.bridge = bridge
        tools = [*get_all_base_tools(), *(extra_tools or [])]
        self.engine = Engine(root, bridge, base_tools=tools)
        self.service: ModelService = attach_model(self.engine, fake.config(**cfg))  # type: ignore[assignment]
        self.events: list[dict[str, Any]] = []

    async def chat(self, prompt: str, session_id: str | None = None) -> Any:
        return await self.service.chat(
            prompt, session_id=session_id, on_event=lambda e: self.events.append(e.to_protocol())
        )

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == kind]


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

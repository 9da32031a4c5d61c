"""An Engine wired to a fake model API, with a scripted bridge and the chat events recorded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from codev_ls.bridge import ScriptedBridge
from codev_ls.engine.registry import get_all_base_tools
from codev_ls.engine.runtime import Engine
from codev_ls.engine.tool import Tool
from codev_ls.model.service import ModelService, attach_model
from tests.fakes.harness import FakeModel


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

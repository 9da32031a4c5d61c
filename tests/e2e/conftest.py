"""End-to-end fixtures: the real server over stdio, driven by a scripted editor.

Writing a test (any session may add ``tests/e2e/test_*.py``)::

    async def test_read(editor: EditorClient, workspace: Path) -> None:
        (workspace / "a.txt").write_text("hi\\n")
        outcome = await editor.run_tool("Read", {"file_path": str(workspace / "a.txt")})
        assert outcome["status"] == "success"

- ``editor`` runs each test twice, with the ``neovim@v0.11.0`` and the
  ``visual-studio-code`` capability presets (``editor.preset`` says which);
  the server is initialized on ``workspace`` in ``default`` mode.
- ``start_editor(preset, mode=..., initialization_options=..., env=...)``
  starts more servers or ones set up differently; all are shut down (and
  killed if need be) after the test.
- The editor answers prompts with ``editor.prompt_answer`` (default
  ``"Allow once"``) and applies edits as ``editor.edit_answer`` says (default
  ``"accept"``); see ``tests/e2e/editor.py``.
- ``start_editor(..., test_tools=True)`` adds ``TestSleep`` (``tests/e2e/slow_tool.py``):
  a run of chosen length that reports progress, for progress and cancel tests.
- ``CODEV_CONFIG_DIR`` is already a temp folder (``tests/conftest.py``); the
  server inherits the test's environment.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.editor import PRESETS, EditorClient

StartEditor = Callable[..., Awaitable[EditorClient]]


@pytest.fixture
async def start_editor(workspace: Path) -> AsyncIterator[StartEditor]:
    """A factory of started, initialized editors (closed after the test)."""
    started: list[EditorClient] = []

    async def start(
        preset: str = "visual-studio-code",
        *,
        mode: str | None = None,
        root: Path | None = None,
        initialization_options: Any = None,
        env: dict[str, str] | None = None,
        initialize: bool = True,
        test_tools: bool = False,
    ) -> EditorClient:
        client = EditorClient(preset)
        server_env = dict(os.environ)
        server_env.update(env or {})
        await client.start(env=server_env, test_tools=test_tools)
        started.append(client)
        if initialize:
            options = initialization_options
            if mode is not None:
                options = {**(options or {}), "permissionMode": mode}
            await client.initialize(root or workspace, initialization_options=options)
        return client

    yield start
    for client in reversed(started):
        await client.close()


@pytest.fixture(params=PRESETS)
async def editor(request: pytest.FixtureRequest, start_editor: StartEditor) -> EditorClient:
    """An editor with each preset in turn, on the test's workspace, default mode."""
    return await start_editor(request.param)


@pytest.fixture
async def vscode(start_editor: StartEditor) -> EditorClient:
    """An editor with the ``visual-studio-code`` preset (change annotations, documentChanges)."""
    return await start_editor("visual-studio-code")


@pytest.fixture
async def neovim(start_editor: StartEditor) -> EditorClient:
    """An editor with the ``neovim@v0.11.0`` preset (plain ``changes``, no annotations)."""
    return await start_editor("neovim@v0.11.0")

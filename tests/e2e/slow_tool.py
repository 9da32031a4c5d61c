"""Tools that exist only in e2e tests: a slow, cancellable, progress-reporting run.

They let the server's progress, cancellation and concurrency be tested on a
run whose length the test chooses (the real long runner, Bash, is tested
too). ``serve_with_test_tools.py`` starts the real server with them added.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from codev_ls.engine.context import ToolUseContext
from codev_ls.engine.tool import Progress, ProgressCallback, Tool, ToolResult


class SleepInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seconds: float = Field(description="How long to run.", ge=0, le=60)
    tick: float = Field(default=0.1, description="Seconds between progress reports.", gt=0)


class SleepTool(Tool):
    """Waits, reporting "tick N" as progress; stops at once when interrupted."""

    name = "TestSleep"
    input_model = SleepInput

    def is_read_only(self, input: Any) -> bool:
        return True

    def is_concurrency_safe(self, input: Any) -> bool:
        return True

    def get_activity_description(self, input: SleepInput) -> str:
        return f"sleeping {input.seconds:g}s"

    async def call(
        self, input: SleepInput, ctx: ToolUseContext, on_progress: ProgressCallback
    ) -> ToolResult:
        loop = asyncio.get_running_loop()
        end = loop.time() + input.seconds
        n = 0
        while loop.time() < end:
            ctx.check_abort()
            await asyncio.sleep(min(input.tick, max(0.0, end - loop.time())))
            n += 1
            on_progress(Progress(type="ToolProgress", message=f"tick {n}"))
        return ToolResult(f"slept {input.seconds:g}s in {n} ticks")

"""OpenTelemetry spans per tool use: attributes through the SDK's in-memory exporter,
a real OTLP/HTTP export from the CLI to a collector on 127.0.0.1, and off (nothing
imported) when the endpoint or the SDK is missing."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from codev_ls.bridge import ScriptedBridge
from codev_ls.engine import telemetry
from codev_ls.engine.runtime import Engine
from tests.fakes.otlp import FakeCollector


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.configure(provider)
    yield exporter
    telemetry.reset()
    provider.shutdown()


def _by_tool(exporter: InMemorySpanExporter) -> dict[str, dict]:
    return {
        str(s.attributes["codev.tool.name"]): {"span": s, **dict(s.attributes or {})}
        for s in exporter.get_finished_spans()
    }


async def test_one_span_per_tool_use_with_its_facts(
    spans: InMemorySpanExporter, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "a.txt").write_text("hello\n")
    bridge = ScriptedBridge(default_answer="reject")
    engine = Engine(workspace, bridge, data_root=tmp_path / "data")
    read = await engine.run_tool("Read", {"file_path": str(workspace / "a.txt")})
    write = await engine.run_tool("Write", {"file_path": str(workspace / "b.txt"), "content": "x"})
    unknown = await engine.run_tool("NoSuchTool", {})
    assert (read.status, write.status, unknown.status) == ("success", "rejected", "error")

    got = _by_tool(spans)
    assert set(got) == {"Read", "Write", "NoSuchTool"}
    assert got["Read"]["span"].name == "execute_tool Read"
    assert got["Read"]["codev.tool.outcome"] == "success"
    assert got["Read"]["codev.decision.source"] == "config"
    assert got["Read"]["codev.tool.use_id"] == read.tool_use_id
    assert got["Read"]["gen_ai.tool.call.id"] == read.tool_use_id
    assert got["Read"]["codev.tool.duration_ms"] > 0
    assert got["Read"]["span"].status.status_code == StatusCode.UNSET
    assert got["Write"]["codev.tool.outcome"] == "rejected"
    assert got["Write"]["codev.decision.source"] == "user_reject"
    assert got["Write"]["span"].status.status_code == StatusCode.ERROR
    assert got["NoSuchTool"]["codev.tool.outcome"] == "error"
    assert "codev.decision.source" not in got["NoSuchTool"]  # no decision was made
    # Nothing of the input or the result leaves in a span.
    for s in spans.get_finished_spans():
        text = json.dumps(dict(s.attributes or {})) + (s.status.description or "")
        assert "hello" not in text and str(workspace) not in text


async def test_an_interrupted_run_and_a_batch(
    spans: InMemorySpanExporter, workspace: Path, tmp_path: Path
) -> None:
    for name in ("x.txt", "y.txt"):
        (workspace / name).write_text(name)
    engine = Engine(
        workspace,
        ScriptedBridge(default_answer="allow_once"),
        mode="bypassPermissions",
        data_root=tmp_path / "data",
    )
    try:
        task = asyncio.ensure_future(
            engine.run_tool("Bash", {"command": "sleep 30"}, tool_use_id="toolu_sleep")
        )
        for _ in range(200):
            if "toolu_sleep" in engine._running:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)
        engine.cancel("toolu_sleep")
        outcome = await asyncio.wait_for(task, 20)
        assert outcome.status == "interrupted"

        from codev_ls.engine.execution import ToolUse

        outcomes = await engine.run_batch(
            [
                ToolUse("toolu_x", "Read", {"file_path": str(workspace / "x.txt")}),
                ToolUse("toolu_y", "Read", {"file_path": str(workspace / "y.txt")}),
            ]
        )
        assert [o.status for o in outcomes] == ["success", "success"]
    finally:
        await engine.aclose()
    finished = spans.get_finished_spans()
    by_id = {s.attributes["codev.tool.use_id"]: s for s in finished}
    assert by_id["toolu_sleep"].attributes["codev.tool.outcome"] == "interrupted"
    assert by_id["toolu_sleep"].attributes["codev.tool.duration_ms"] >= 200
    assert {"toolu_x", "toolu_y"} <= set(by_id)


def test_off_without_an_endpoint_and_nothing_imported(
    workspace: Path, codev_cmd: list[str]
) -> None:
    """No endpoint: a tool use neither traces nor imports the SDK (it costs nothing)."""
    (workspace / "a.txt").write_text("a\n")
    script = f"""
import asyncio, sys
from codev_ls.bridge import ScriptedBridge
from codev_ls.engine import telemetry
from codev_ls.engine.runtime import Engine
engine = Engine({str(workspace)!r}, ScriptedBridge())
outcome = asyncio.run(engine.run_tool("Read", {{"file_path": {str(workspace / "a.txt")!r}}}))
assert outcome.status == "success", outcome
print(telemetry.enabled(), any(m.startswith("opentelemetry") for m in sys.modules))
"""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]


def test_endpoint_without_the_sdk_stays_off(workspace: Path) -> None:
    """The endpoint is set but the SDK cannot be imported: tools still run, untraced."""
    (workspace / "a.txt").write_text("a\n")
    script = f"""
import asyncio, sys

class NoSDK:
    def find_spec(self, name, path=None, target=None):
        if name.startswith("opentelemetry.sdk"):
            raise ImportError("no SDK here")
        return None

sys.meta_path.insert(0, NoSDK())
from codev_ls.bridge import ScriptedBridge
from codev_ls.engine import telemetry
from codev_ls.engine.runtime import Engine
engine = Engine({str(workspace)!r}, ScriptedBridge())
outcome = asyncio.run(engine.run_tool("Read", {{"file_path": {str(workspace / "a.txt")!r}}}))
print(outcome.status, telemetry.enabled())
"""
    env = dict(os.environ, OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9")
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["success", "False"]


def test_the_cli_exports_spans_over_otlp(workspace: Path, codev_cmd: list[str]) -> None:
    """SDK installed + endpoint set: the span reaches a collector over OTLP/HTTP."""
    (workspace / "a.txt").write_text("a\n")
    with FakeCollector() as collector:
        env = dict(
            os.environ,
            OTEL_EXPORTER_OTLP_ENDPOINT=collector.url,
            OTEL_SERVICE_NAME="codev-test",
        )
        out = subprocess.run(
            [
                *codev_cmd,
                "tool",
                "Read",
                json.dumps({"file_path": str(workspace / "a.txt")}),
                "--cwd",
                str(workspace),
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 0, out.stderr
        # The batch processor flushes when the process exits.
        assert [s.name for s in collector.spans] == ["execute_tool Read"], collector.spans
        span = collector.spans[0]
    assert span.service_name == "codev-test"
    assert span.attributes["codev.tool.outcome"] == "success"
    assert span.attributes["codev.decision.source"] == "config"
    assert span.attributes["codev.tool.duration_ms"] > 0

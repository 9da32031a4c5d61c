"""What OpenTelemetry costs a tool use: off (the default), and on.

The same small Read through ``Engine.run_tool``, alternately with telemetry off
(no endpoint: one call that returns ``None``) and on (the SDK with a batch
processor into an exporter that drops spans — the cost on our side of the
wire). Off must be free: its ratio to a run with the hook removed is the
measure; on, the span's cost is shown for information.

    python bench/telemetry_bench.py [--n 400]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

TARGET_OFF = 1.02


async def measure(n: int = 400) -> dict[str, float]:
    from codev_ls.bridge import ScriptedBridge
    from codev_ls.engine import execution, telemetry
    from codev_ls.engine.runtime import Engine

    try:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import (
            BatchSpanProcessor,
            SpanExporter,
            SpanExportResult,
        )
    except ImportError:
        provider = None
    else:

        class Drop(SpanExporter):
            def export(self, spans: object) -> SpanExportResult:
                return SpanExportResult.SUCCESS

        provider = TracerProvider()
        provider.add_span_processor(BatchSpanProcessor(Drop()))

    real_start, real_end = telemetry.start_tool_span, telemetry.end_tool_span

    def hook_removed() -> None:
        execution.telemetry.start_tool_span = lambda *a: None  # type: ignore[assignment]
        execution.telemetry.end_tool_span = lambda *a: None  # type: ignore[assignment]

    def hook_back() -> None:
        execution.telemetry.start_tool_span = real_start  # type: ignore[assignment]
        execution.telemetry.end_tool_span = real_end  # type: ignore[assignment]

    times: dict[str, list[float]] = {"none": [], "off": [], "on": []}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        (root / "a.txt").write_text("hello\n" * 20)
        engine = Engine(root, ScriptedBridge(), data_root=Path(tmp) / "data")
        use = {"file_path": str(root / "a.txt")}
        try:
            for _ in range(20):
                await engine.run_tool("Read", use)
            for _ in range(n):
                for mode in ("none", "off", "on"):
                    if mode == "none":
                        hook_removed()
                    elif mode == "off":
                        hook_back()
                        telemetry.configure(None)
                    else:
                        if provider is None:
                            continue
                        telemetry.configure(provider)
                    t = time.perf_counter()
                    await engine.run_tool("Read", use)
                    times[mode].append(time.perf_counter() - t)
        finally:
            hook_back()
            telemetry.reset()
            await engine.aclose()
            if provider is not None:
                provider.shutdown()
    med = {k: statistics.median(v) for k, v in times.items() if v}
    return med


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=400)
    args = parser.parse_args(argv)
    m = asyncio.run(measure(args.n))
    print(
        f"Read through the engine: hook removed {m['none'] * 1e6:.0f} µs, telemetry off "
        f"{m['off'] * 1e6:.0f} µs ({m['off'] / m['none']:.3f}×), on "
        f"{m.get('on', float('nan')) * 1e6:.0f} µs"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Optional OpenTelemetry spans, one per tool use — off, and free, unless asked for.

On only when the OpenTelemetry SDK is installed (``pip install
'codev-ls[telemetry]'``) *and* ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) is set; ``OTEL_SDK_DISABLED=true``
turns it off again. Spans go to that endpoint over OTLP/HTTP (or gRPC when
only that exporter is installed), batched in a background thread.

Off, a tool use pays one call that returns ``None`` (the decision is made
once and cached): nothing is imported, nothing is allocated.

Each span is named ``execute_tool <Tool>`` (the OpenTelemetry GenAI
convention) and carries:

=========================  =====================================================
``codev.tool.name``         the tool (also ``gen_ai.tool.name``)
``codev.tool.use_id``       the tool use id (also ``gen_ai.tool.call.id``)
``codev.decision.source``   who allowed or refused it (``config``, ``hook``,
                            ``user_temporary``, ``user_permanent``,
                            ``user_reject``), absent when no decision was made
``codev.tool.outcome``      ``success`` / ``error`` / ``rejected`` / ``interrupted``
``codev.tool.duration_ms``  wall time of the whole lifecycle
=========================  =====================================================

An outcome other than success sets the span status to ERROR (without the
message: outcomes may quote file contents, and spans leave the machine).
Inputs and results are never recorded, for the same reason.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from codev_ls.engine.outcome import ToolOutcome

log = logging.getLogger(__name__)

TRACER_NAME = "codev_ls"

_UNSET: Any = object()
_tracer: Any = _UNSET  # _UNSET: not decided yet; None: off; else an SDK Tracer
_lock = threading.Lock()


class ToolSpan:
    """An open span and the clock it started on."""

    __slots__ = ("span", "start")

    def __init__(self, span: Any, start: float) -> None:
        self.span = span
        self.start = start


def start_tool_span(tool_name: str, tool_use_id: str) -> ToolSpan | None:
    """Open the span of one tool use; None (at once) when telemetry is off."""
    tracer = _tracer if _tracer is not _UNSET else _decide()
    if tracer is None:
        return None
    try:
        span = tracer.start_span(
            f"execute_tool {tool_name}",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": tool_name,
                "gen_ai.tool.call.id": tool_use_id,
                "codev.tool.name": tool_name,
                "codev.tool.use_id": tool_use_id,
            },
        )
    except Exception:  # telemetry must never break a tool use
        log.debug("could not start a span", exc_info=True)
        return None
    return ToolSpan(span, time.perf_counter())


def end_tool_span(handle: ToolSpan | None, outcome: ToolOutcome) -> None:
    """Close the span with the outcome's facts (no-op for None)."""
    if handle is None:
        return
    try:
        from opentelemetry.trace import Status, StatusCode

        span = handle.span
        duration_ms = (time.perf_counter() - handle.start) * 1000
        if outcome.tool_name:
            span.update_name(f"execute_tool {outcome.tool_name}")
            span.set_attribute("codev.tool.name", outcome.tool_name)
            span.set_attribute("gen_ai.tool.name", outcome.tool_name)
        span.set_attribute("codev.tool.outcome", outcome.status)
        span.set_attribute("codev.tool.duration_ms", round(duration_ms, 3))
        if outcome.decision_source:
            span.set_attribute("codev.decision.source", outcome.decision_source)
        if outcome.status != "success":
            span.set_status(Status(StatusCode.ERROR, outcome.status))
        span.end()
    except Exception:
        log.debug("could not end a span", exc_info=True)


# --------------------------------------------------------------------------- set-up


def configure(tracer_provider: Any | None) -> None:
    """Use ``tracer_provider`` for the spans (tests: an in-memory exporter); None turns off.

    Overrides what the environment says until :func:`reset` is called.
    """
    global _tracer
    with _lock:
        _tracer = None if tracer_provider is None else tracer_provider.get_tracer(TRACER_NAME)


def reset() -> None:
    """Forget the decision: the next tool use reads the environment again."""
    global _tracer
    with _lock:
        _tracer = _UNSET


def enabled() -> bool:
    """Whether tool uses are traced (decides now if not decided yet)."""
    return (_tracer if _tracer is not _UNSET else _decide()) is not None


def _endpoint() -> str | None:
    return os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or os.environ.get(
        "OTEL_EXPORTER_OTLP_ENDPOINT"
    )


def _decide() -> Any:
    """Read the environment once: a Tracer exporting over OTLP, or None."""
    global _tracer
    with _lock:
        if _tracer is not _UNSET:
            return _tracer
        _tracer = None
        if not _endpoint() or os.environ.get("OTEL_SDK_DISABLED", "").lower() == "true":
            return None
        try:
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor
        except ImportError:
            log.info("OTEL_EXPORTER_OTLP_ENDPOINT is set but opentelemetry-sdk is not installed")
            return None
        exporter = _otlp_exporter()
        if exporter is None:
            return None
        from codev_ls import __version__

        # The SDK reads OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES; ours is the default name.
        resource = Resource.create(
            {"service.name": os.environ.get("OTEL_SERVICE_NAME") or "codev-ls"}
        ).merge(Resource.create({"service.version": __version__}))
        provider = TracerProvider(resource=resource)  # flushes and shuts down at exit
        provider.add_span_processor(BatchSpanProcessor(exporter))
        _tracer = provider.get_tracer(TRACER_NAME, __version__)
        log.info("OpenTelemetry: tool-use spans go to %s", _endpoint())
        return _tracer


def _otlp_exporter() -> Any | None:
    """The OTLP span exporter (HTTP preferred, as the SDK's own default protocol is)."""
    protocol = (
        os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    )
    candidates = [
        "opentelemetry.exporter.otlp.proto.http.trace_exporter",
        "opentelemetry.exporter.otlp.proto.grpc.trace_exporter",
    ]
    if protocol == "grpc":
        candidates.reverse()
    for module_name in candidates:
        try:
            module = __import__(module_name, fromlist=["OTLPSpanExporter"])
        except ImportError:
            continue
        try:
            return module.OTLPSpanExporter()  # endpoint, headers, timeout from the env
        except Exception as exc:
            log.warning("OpenTelemetry exporter could not start: %s", exc)
            return None
    log.warning(
        "OTEL_EXPORTER_OTLP_ENDPOINT is set but no OTLP exporter is installed "
        "(pip install opentelemetry-exporter-otlp-proto-http)"
    )
    return None

"""A fake OpenTelemetry collector: OTLP/HTTP (protobuf) on 127.0.0.1, spans decoded.

It answers ``POST /v1/traces`` as a collector does (200 with an empty
``ExportTraceServiceResponse``) and keeps every span it received, decoded with
the protobuf classes of ``opentelemetry-proto``, so tests can check what left
the process.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.fakes.http_server import FakeHTTPServer, Reply, Request


@dataclass
class ReceivedSpan:
    name: str
    attributes: dict[str, Any]
    status_code: int
    service_name: str | None


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


class FakeCollector(FakeHTTPServer):
    def __init__(self) -> None:
        super().__init__()
        self.spans: list[ReceivedSpan] = []

    def handle(self, req: Request) -> Reply:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
            ExportTraceServiceResponse,
        )

        if req.method != "POST" or req.path != "/v1/traces":
            return Reply(404, "not found")
        message = ExportTraceServiceRequest()
        message.ParseFromString(req.body)
        for resource_spans in message.resource_spans:
            resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    self.spans.append(
                        ReceivedSpan(
                            span.name,
                            {a.key: _value(a.value) for a in span.attributes},
                            span.status.code,
                            resource.get("service.name"),
                        )
                    )
        body = ExportTraceServiceResponse().SerializeToString()
        return Reply(200, body, content_type="application/x-protobuf")

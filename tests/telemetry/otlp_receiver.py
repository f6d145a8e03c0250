"""A tiny real OTLP/HTTP receiver on loopback: decodes protobuf POSTs to /v1/traces and /v1/metrics."""

from __future__ import annotations

import gzip
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass
class ReceivedSpan:
    service: str
    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    kind: int
    start_ns: int
    end_ns: int
    attributes: dict[str, Any] = field(default_factory=dict)


def _value(v: Any) -> Any:
    return getattr(v, v.WhichOneof("value")) if v.WhichOneof("value") else None


class OtlpReceiver:
    def __init__(self) -> None:
        self.spans: list[ReceivedSpan] = []
        self.metric_names: set[str] = set()
        self.posts: list[str] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                if self.headers.get("content-encoding") == "gzip":
                    body = gzip.decompress(body)
                receiver._handle(self.path, body)
                out = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def _handle(self, path: str, body: bytes) -> None:
        with self._lock:
            self.posts.append(path)
            if path == "/v1/traces":
                req = ExportTraceServiceRequest.FromString(body)
                for rs in req.resource_spans:
                    res = {a.key: _value(a.value) for a in rs.resource.attributes}
                    for ss in rs.scope_spans:
                        for s in ss.spans:
                            self.spans.append(ReceivedSpan(
                                service=str(res.get("service.name")), name=s.name, trace_id=s.trace_id.hex(),
                                span_id=s.span_id.hex(), parent_span_id=s.parent_span_id.hex(), kind=s.kind,
                                start_ns=s.start_time_unix_nano, end_ns=s.end_time_unix_nano,
                                attributes={a.key: _value(a.value) for a in s.attributes}))
            elif path == "/v1/metrics":
                req = ExportMetricsServiceRequest.FromString(body)
                for rm in req.resource_metrics:
                    for sm in rm.scope_metrics:
                        self.metric_names.update(m.name for m in sm.metrics)

    def wait_for(self, pred: Any, timeout: float = 20.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if pred(self):
                    return True
            time.sleep(0.1)
        return False

    def __enter__(self) -> OtlpReceiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

"""`[capture] otlp`: an OTLP/HTTP receiver on 127.0.0.1 for one trial's agent.

The agent's OpenTelemetry SDK finds it through the standard variables
(`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) and exports its
spans to `/v1/traces` as protobuf or JSON, with no change to its code. One receiver per
trial, on a port of its own: every span it gets is that trial's. What it got is one
OTLP/JSON export, read by the `otel` importer like a file given to `sounding score`.

Decoding protobuf needs `opentelemetry-proto` (`pip install 'sounding[otel]'`), imported
when the first protobuf export arrives.
"""

from __future__ import annotations

import base64
import zlib
from http.server import BaseHTTPRequestHandler
from typing import Any

from sounding._files import loads
from sounding.services._base import CAPTURE_LIMIT, LoopbackCapture, LoopbackServer

PATH = "/v1/traces"


class OtlpReceiver(LoopbackCapture):
    """A started receiver: its server thread and the spans it was sent, in order."""

    def __init__(self) -> None:
        super().__init__(_Handler, "otlp receiver")

    def env(self) -> dict[str, str]:
        """The variables every OpenTelemetry SDK reads to export its spans here."""
        url = self._server.url
        return {
            "OTEL_EXPORTER_OTLP_ENDPOINT": url,
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": url + PATH,
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_TRACES_EXPORTER": "otlp",
        }

    def take(self, export: Any) -> None:
        """Keep the spans of one export (its `resourceSpans` entries)."""
        spans = export.get("resourceSpans") if isinstance(export, dict) else None
        self.keep(*(spans if isinstance(spans, list) else []))

    def export(self) -> dict[str, Any] | None:
        """Every span received, as one OTLP/JSON export; None when none came."""
        spans = self.kept()
        return {"resourceSpans": spans} if spans else None


class _Handler(BaseHTTPRequestHandler):
    server: LoopbackServer
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        if self.path.split("?")[0].rstrip("/") != PATH:
            return self._reply(404, b"post spans to /v1/traces")
        size = int(self.headers.get("Content-Length") or 0)
        if not self.server.owner.admit(size):
            return self._reply(413, f"a trial may send at most {CAPTURE_LIMIT} bytes".encode())
        body = self.rfile.read(size)
        json_sent = "json" in self.headers.get("Content-Type", "")
        try:
            if self.headers.get("Content-Encoding", "").lower() == "gzip":
                body = _gunzip(body)
            export = loads(body) if json_sent else from_protobuf(body)
        except (ValueError, ImportError) as exc:
            return self._reply(400, f"cannot read the export: {exc}".encode())
        self.server.owner.take(export)
        self._reply(200, b"{}" if json_sent else b"", json_sent)

    def _reply(self, status: int, data: bytes, json_sent: bool = True) -> None:
        self.send_response(status)
        kind = "application/json" if json_sent else "application/x-protobuf"
        self.send_header("Content-Type", kind if status == 200 else "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: what arrives is the trial's record, not the harness's log."""


def _gunzip(body: bytes) -> bytes:
    unpack = zlib.decompressobj(wbits=31)
    data = unpack.decompress(body, CAPTURE_LIMIT)
    if unpack.unconsumed_tail:
        raise ValueError(f"it unpacks to over {CAPTURE_LIMIT} bytes")
    return data


def from_protobuf(body: bytes) -> dict[str, Any]:
    """An `ExportTraceServiceRequest` as OTLP/JSON: protobuf's JSON mapping, with the ids
    in hex as OTLP/JSON writes them (the mapping gives bytes in base64)."""
    from google.protobuf.json_format import MessageToDict
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    try:
        export: dict[str, Any] = MessageToDict(ExportTraceServiceRequest.FromString(body))
    except DecodeError as exc:
        raise ValueError(f"not an OTLP protobuf export ({exc})") from None
    for resource in export.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    return export

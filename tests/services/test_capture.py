"""The captures of an agent's traffic: an OTLP receiver and a model API proxy on loopback."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from sounding.services import LlmProxy, OtlpReceiver
from sounding.services._base import CAPTURE_LIMIT

EXPORT = Path(__file__).parents[1] / "fixtures" / "otel" / "tool_agent.json"


def test_an_otlp_json_export_is_kept_as_it_came() -> None:
    with OtlpReceiver() as receiver:
        url = receiver.env()["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]
        sent = httpx.post(
            url, content=EXPORT.read_bytes(), headers={"Content-Type": "application/json"}
        )
        assert sent.status_code == 200
        export = receiver.export()
    assert export == {"resourceSpans": json.loads(EXPORT.read_text())["resourceSpans"]}


def test_an_agent_cannot_send_a_capture_more_than_its_limit() -> None:
    """A hostile agent's flood is refused, not kept: sounding's memory holds the limit."""
    half = b"x" * (CAPTURE_LIMIT // 2 + 1)
    with OtlpReceiver() as receiver, LlmProxy({"openai": "http://127.0.0.1:9"}) as proxy:
        for url in (
            receiver.env()["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"],
            proxy.env()["OPENAI_BASE_URL"] + "/chat/completions",
        ):
            first = httpx.post(url, content=half, headers={"Content-Type": "application/json"})
            assert first.status_code in (400, 502)  # admitted, then found not to be an export
            second = httpx.post(url, content=half, headers={"Content-Type": "application/json"})
            assert second.status_code == 413, second.text

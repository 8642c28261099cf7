"""The record formats' registry: each format registered once, with its signs and reader."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sounding.record import RECORD_FORMATS, RecordError, detect_format, formats, parse_record


def test_the_formats_are_listed_in_the_order_they_registered() -> None:
    assert formats.names() == RECORD_FORMATS == ("sounding", "jsonl", "openai", "anthropic", "otel")
    assert [f.name for f in formats if f.picks_trace] == ["otel"]
    assert [f.name for f in formats if ".ndjson" in f.suffixes] == ["jsonl"]


def test_a_second_registration_of_a_format_is_refused() -> None:
    again = formats.format("jsonl", title="again", sniff=lambda sample: None)
    with pytest.raises(ValueError, match="record format 'jsonl' is registered twice"):
        again(lambda sample: parse_record("", "jsonl"))
    assert formats.names() == RECORD_FORMATS


def test_a_text_no_format_claims_names_every_format_tried() -> None:
    with pytest.raises(RecordError) as caught:
        parse_record('{"steps": []}', source="in.json")
    message = str(caught.value)
    assert "its keys: steps" in message
    assert "none of the formats tried (sounding, jsonl, openai, anthropic, otel)" in message


@pytest.mark.parametrize(
    ("data", "format"),
    [
        ({"schema": "sounding.run/1", "messages": [{"role": "tool", "content": "x"}]}, "sounding"),
        ({"traj": [], "messages": [{"role": "user", "content": [{"type": "tool_use"}]}]}, "openai"),
        ({"resourceSpans": [], "type": "export"}, "otel"),
        ({"messages": [{"role": "user", "content": "hi"}], "system": "s"}, "anthropic"),
        ({"type": "final", "text": "x"}, "jsonl"),
    ],
)
def test_the_surest_claim_decides(data: Any, format: str) -> None:
    """A top-level key outweighs a sign inside; a sign inside outweighs a mere shape."""
    assert detect_format(json.dumps(data))[0] == format


def test_equally_sure_claims_of_two_formats_are_refused_with_both_reasons() -> None:
    with pytest.raises(RecordError) as caught:
        detect_format(json.dumps({"schema": "sounding.run/1", "resourceSpans": []}))
    message = str(caught.value)
    assert "'schema' key (a stored record) (sounding) but it has 'resourceSpans'" in message
    assert "pass the format explicitly (one of: sounding, jsonl" in message

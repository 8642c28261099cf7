"""Many records from one path: a folder, a JSON Lines file of records, an OTLP export."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from sounding.record import RunRecord, read_records, record_label

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RECORDS = Path(__file__).resolve().parents[2] / "examples/support-records/records"


def stored(answer: str, **metadata: Any) -> str:
    return RunRecord(final_answer=answer, metadata=metadata).to_json()


def two_traces() -> list[dict[str, Any]]:
    """The spans of errored_tool.json twice, under two trace ids, their roots labelled."""
    spans = json.loads((FIXTURES / "otel/errored_tool.json").read_text())
    out = []
    for trace, label in (("a" * 32, "refund"), ("b" * 32, "lookup")):
        for span in copy.deepcopy(spans):
            span["traceId"] = trace
            if "parentSpanId" not in span:
                span["attributes"].append({"key": "scenario", "value": {"stringValue": label}})
            out.append(span)
    return out


def test_a_jsonl_file_is_one_record_a_line_in_any_format_and_a_bad_line_is_its_own_error(
    tmp_path: Path,
) -> None:
    openai = {
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    }
    lines = [
        stored("one", scenario="a"),
        "",
        json.dumps(openai),
        '{"schema": "sounding.run/1", "turns": "many"}',
        "{not json",
        stored("five"),
    ]
    path = tmp_path / "records.jsonl"
    path.write_text("\n".join(lines) + "\n")
    found = list(read_records(path))
    assert [f.source for f in found] == [f"{path}:{n}" for n in (1, 3, 4, 5, 6)]
    assert [f.record.final_answer if f.record else None for f in found] == [
        "one",
        "yo",
        None,
        None,
        "five",
    ]
    assert str(found[2].error).startswith(f"{path}, line 4")
    assert str(found[3].error).startswith(f"{path}, line 5, column 2: not JSON")
    assert record_label(found[0].record, "scenario") == "a"  # type: ignore[arg-type]


def test_a_line_that_is_not_utf8_is_named_and_the_rest_are_read(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_bytes(stored("one").encode() + b"\n\xff\xfe\n" + stored("three").encode() + b"\n")
    found = list(read_records(path))
    assert str(found[1].error) == f"{path}, line 2: not UTF-8 (byte 0); write it as UTF-8"
    assert found[2].record is not None and found[2].record.final_answer == "three"


def test_a_folder_is_one_record_a_file_each_in_its_own_format() -> None:
    found = list(read_records(RECORDS))
    assert len(found) == 9 and all(f.record is not None for f in found)
    assert {f.record.source_format for f in found if f.record} == {"jsonl", "openai"}


def test_an_otlp_export_is_one_record_per_trace_labelled_by_its_root_span(tmp_path: Path) -> None:
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(two_traces()))
    found = list(read_records(path))
    assert [f.source for f in found] == [f"{path}, trace {'a' * 32}", f"{path}, trace {'b' * 32}"]
    labels = [record_label(f.record, "scenario") for f in found if f.record]
    assert labels == ["refund", "lookup"]
    assert all(f.record and f.record.tool_calls for f in found)


def test_each_line_of_jsonl_may_be_an_export_of_several_traces(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps(two_traces()) + "\n" + json.dumps(two_traces()[:3]) + "\n")
    found = list(read_records(path))
    assert [f.source.rsplit(", ", 1)[0] for f in found] == [f"{path}:1", f"{path}:1", f"{path}:2"]

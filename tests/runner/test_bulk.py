"""`sounding score CASE --records PATH`: many records matched, scored, tallied and gated."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from sounding.record import RunRecord, ToolCall
from sounding.runner import BulkOptions, score_records
from sounding.spec import load_case

EXAMPLE = Path(__file__).resolve().parents[2] / "examples/support-records"

CASE = """\
scenarios:
  - id: refund
    user: Refund order 7.
    expect:
      - tool_called: {name: refund, args: {order: 7}}
      - final_answer_contains: refunded
  - id: lookup
    user: Where is order 7?
    expect:
      - tool_called: lookup
      - file_exists: notes.txt
"""


def record(scenario: str | None, tool: str, answer: str) -> str:
    metadata = {"scenario": scenario} if scenario else {}
    call = ToolCall(id="c1", name=tool, args={"order": 7}, result="ok")
    return RunRecord(tool_calls=[call], final_answer=answer, metadata=metadata).to_json()


@pytest.fixture
def mixed(tmp_path: Path) -> tuple[Path, Path]:
    """A case of two scenarios and a JSONL of records: 3 refunds (one fails), 2 lookups,
    one naming no known scenario, one that is not JSON."""
    case = tmp_path / "case.yaml"
    case.write_text(CASE)
    lines = [
        record("refund", "refund", "refunded"),
        record("refund", "refund", "refunded <b>"),
        record("refund", "refund", "sorry"),
        record("lookup", "lookup", "on its way"),
        record("lookup", "lookup", "shipped"),
        record("<b>returns</b>", "refund", "refunded"),
        "{oops",
    ]
    records = tmp_path / "records.jsonl"
    records.write_text("\n".join(lines) + "\n")
    return case, records


def test_records_are_matched_by_their_field_tallied_and_the_rest_counted(
    mixed: tuple[Path, Path],
) -> None:
    case, records = mixed
    bulk = score_records(load_case(case), records, BulkOptions(min_pass_rate=0.6))
    refund, lookup = bulk.tallies["refund"], bulk.tallies["lookup"]
    assert (refund.records, refund.rate()) == (3, 2 / 3)
    assert [o.source for o in refund.worst()] == [f"{records}:3"]
    assert "final_answer_contains" in refund.worst()[0].reason
    # its file check cannot be judged from a bare record: unjudged, neither failed nor errored
    assert (lookup.rate(), lookup.unjudged, lookup.errors, lookup.worst()) == (None, 2, 0, [])
    statuses = lookup.checks["expect[1] file_exists"].statuses
    assert (statuses["unjudged"], statuses["failed"]) == (2, 0)
    assert lookup.checks["expect[0] tool_called"].rate() == 1.0
    assert bulk.unmatched_listed == [(f"{records}:6", "scenario '<b>returns</b>'")]
    assert bulk.malformed == 1 and bulk.malformed_listed[0].startswith(f"{records}, line 7")
    assert bulk.below() == []


def test_one_scenario_for_all_with_scenario(mixed: tuple[Path, Path]) -> None:
    case, records = mixed
    bulk = score_records(load_case(case), records, BulkOptions(scenario="refund"))
    assert list(bulk.tallies) == ["refund"] and bulk.tallies["refund"].records == 6
    assert bulk.unmatched == 0


def test_the_command_prints_json_writes_junit_and_html_and_exits_2_on_a_bad_record(
    mixed: tuple[Path, Path], tmp_path: Path, sounding: Any
) -> None:
    case, records = mixed
    junit, page = tmp_path / "out/junit.xml", tmp_path / "out/page.html"
    done = sounding(
        "score", str(case), "--records", str(records), "--json",
        "--junit", str(junit), "--html", str(page), "--min-pass-rate", "0.9",
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "records could not be read" in done.stderr and "Traceback" not in done.stderr
    document = json.loads(done.stdout)
    assert document["schema"] == "sounding.bulk/1" and document["gate"] is False
    assert document["records"] == {"scored": 5, "unmatched": 1, "malformed": 1}
    refund = document["scenarios"][0]
    assert (refund["scenario"], refund["pass_rate"], refund["gate"]) == ("refund", 2 / 3, False)
    assert refund["interval"]["low"] < 2 / 3 < refund["interval"]["high"]
    assert refund["checks"][1]["name"] == "expect[1] final_answer_contains"
    assert (refund["checks"][1]["passed"], refund["checks"][1]["failed"]) == (2, 1)
    assert refund["worst"][0]["source"] == f"{records}:3"
    assert document["malformed"][0].startswith(f"{records}, line 7, column 2: not JSON")
    cases = ET.parse(junit).getroot().findall(".//testcase")
    assert [(c.get("name"), c.find("failure") is not None) for c in cases] == [
        ("refund", True),
        ("lookup", False),
    ]
    html = page.read_text()
    assert "records.jsonl:3" in html  # the worst offender
    assert "scenario &#x27;&lt;b&gt;returns&lt;/b&gt;&#x27;" in html and "<b>" not in html


def test_the_exit_code_follows_min_pass_rate_on_a_folder_of_records(sounding: Any) -> None:
    """The shipped records: 3 of 9 keep every rule."""
    case = EXAMPLE / "cases/refunds.yaml"
    done = sounding("score", str(case), "--records", str(EXAMPLE / "records"))
    assert done.returncode == 1, done.stderr
    assert "pass rate 0.333" in done.stdout and "9 records scored" in done.stdout
    assert "refund-twice.jsonl" in done.stdout  # a worst offender, named
    done = sounding(
        "score", str(case), "--records", str(EXAMPLE / "records"), "--min-pass-rate", "0.3"
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_records_with_a_single_record_s_options_exit_2_with_a_message(
    mixed: tuple[Path, Path], sounding: Any
) -> None:
    case, records = mixed
    done = sounding("score", str(case), "--records", str(records), "--record", str(records))
    assert done.returncode == 2
    assert "leave out --record" in done.stderr and "Traceback" not in done.stderr


def test_an_unknown_scenario_for_all_is_refused(mixed: tuple[Path, Path]) -> None:
    case, records = mixed
    with pytest.raises(KeyError, match="nope"):
        score_records(load_case(case), records, BulkOptions(scenario="nope"))

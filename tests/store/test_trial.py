"""A finished trial as trial.json stores it: written once, read back whole, secrets replaced."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sounding.checks import CheckResult
from sounding.record import RunRecord
from sounding.scoring import Kind, Measured, TrialVerdict, score_trial
from sounding.store import ResultsError, Trial, read_trial, write_trial


def _trial(**changes: object) -> Trial:
    checks = [
        Measured(
            name="expect[0] file_exists",
            kind=Kind.EXPECT,
            type="file_exists",
            result=CheckResult.failed("no such file", where=Path("out/report.md"), seen={3}),
        ),
        Measured(
            name="quality", kind=Kind.INVARIANT, type="metric", result=CheckResult.passed("ok")
        ),
    ]
    score = score_trial(checks, 1.0)
    fields: dict[str, object] = {
        "cell": "strict",
        "case": "reports",
        "scenario": "weekly",
        "trial": 2,
        "reason": score.reason,
        "duration_ms": 12.5,
        "attempts": 1,
        "usage": {"turns": 1},
        "metrics": {"tone": 4},
        "metric_reasons": {"tone": "fine"},
        "score": score,
        "record": RunRecord(final_answer="done", user_turns=["write the report"]),
    }
    return Trial.model_validate({**fields, **changes})


def test_trial_json_holds_the_score_and_the_run_record(tmp_path: Path) -> None:
    trial = _trial()
    write_trial(tmp_path, trial)
    document = json.loads((tmp_path / "trial.json").read_text())
    assert document["schema"] == "sounding.trial/2" and document["verdict"] == "fail"
    assert document["state"] == "scored" and document["byproducts"] == []
    assert RunRecord.model_validate(document["record"]) == trial.record
    # what JSON has no type for (a path, a set) is written as its text
    assert document["score"]["checks"][0]["result"]["details"]["where"] == "out/report.md"
    again = read_trial(tmp_path)
    assert again.measures() == trial.measures() and again.record == trial.record
    assert again.verdict is TrialVerdict.FAIL and again.key.label == "[strict] reports/weekly#2"


def test_a_trial_with_no_score_is_an_error_with_its_reason(tmp_path: Path) -> None:
    write_trial(tmp_path, _trial(score=None, record=None, reason="timed out after 2.0s"))
    document = json.loads((tmp_path / "trial.json").read_text())
    assert (document["state"], document["verdict"], document["record"]) == ("error", "error", None)
    again = read_trial(tmp_path)
    assert again.outcome is None and again.metric_values()["passed"] is None


def test_no_secret_reaches_trial_json_even_where_json_escapes_it(tmp_path: Path) -> None:
    secret = 'tok"en\\with-escapes'
    record = RunRecord(final_answer=f"my key is {secret}", user_turns=["hi"])
    write_trial(tmp_path, _trial(record=record).redacted({"API_TOKEN": secret}))
    text = (tmp_path / "trial.json").read_text()
    assert json.dumps(secret)[1:-1] not in text and "[secret API_TOKEN]" in text
    assert read_trial(tmp_path).record == RunRecord(
        final_answer="my key is [secret API_TOKEN]", user_turns=["hi"]
    )


def test_a_trial_json_of_an_older_sounding_reads_its_byproducts(tmp_path: Path) -> None:
    write_trial(tmp_path, _trial())
    path = tmp_path / "trial.json"
    document = json.loads(path.read_text())
    document["artefacts"] = [*document.pop("byproducts"), "out/cache.bin"]
    path.write_text(json.dumps(document))
    assert read_trial(tmp_path).byproducts == ["out/cache.bin"]


def test_a_damaged_trial_json_names_its_file(tmp_path: Path) -> None:
    (tmp_path / "trial.json").write_text('{"schema": "sounding.trial/2", "cell": 3}')
    expected = r"trial\.json: cell: must be text \(got int 3\) \(4 problems\)"
    with pytest.raises(ResultsError, match=expected):
        read_trial(tmp_path)

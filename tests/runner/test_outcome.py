"""A trial's outcome: as trial.json stores it, and as a worker process sends it to the run."""

from __future__ import annotations

import json
from pathlib import Path

from sounding.checks import CheckResult
from sounding.record import RunRecord
from sounding.runner._trial import TrialOutcome, load_outcome, store_outcome
from sounding.scoring import Kind, Measured, score_trial
from sounding.store import TrialKey


def _outcome() -> TrialOutcome:
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
    key = TrialKey("strict", "reports", "weekly", 2)
    return TrialOutcome(
        key, "scored", score, score.reason, 12.5, 1, {"turns": 1}, {"tone": 4}, {"tone": "fine"}
    )


def test_trial_json_holds_the_outcome_and_the_run_record(tmp_path: Path) -> None:
    outcome = _outcome()
    record = RunRecord(final_answer="done", user_turns=["write the report"])
    store_outcome(tmp_path, outcome, record.to_json())
    document = json.loads((tmp_path / "trial.json").read_text())
    assert document["schema"] == "sounding.trial/2" and document["verdict"] == "fail"
    assert RunRecord.model_validate(document["record"]) == record
    assert document["score"]["checks"][0]["result"]["details"]["where"] == "out/report.md"
    again = load_outcome(tmp_path, outcome.key)
    assert again.measures() == outcome.measures()
    store_outcome(tmp_path, outcome)  # a trial that left no record (the harness failed)
    assert "record" not in json.loads((tmp_path / "trial.json").read_text())

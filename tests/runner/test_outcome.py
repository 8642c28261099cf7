"""A trial's outcome: as trial.json stores it, and as a worker process sends it to the run."""

from __future__ import annotations

import json
import pickle
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


def test_an_outcome_sent_from_a_worker_arrives_whole() -> None:
    sent = _outcome()
    got = pickle.loads(pickle.dumps(sent, protocol=pickle.HIGHEST_PROTOCOL))
    assert (got.key, got.state, got.reason, got.verdict) == (
        sent.key,
        "scored",
        sent.reason,
        "fail",
    )
    assert (got.usage, got.metrics, got.metric_reasons) == (
        sent.usage,
        sent.metrics,
        sent.metric_reasons,
    )
    assert got.score is not None and sent.score is not None
    assert [m.result.status for m in got.score.checks] == [
        m.result.status for m in sent.score.checks
    ]
    # what JSON has no type for (a path, a set) arrives as text, as trial.json stores it
    assert got.score.checks[0].result.details == {"where": "out/report.md", "seen": [3]}
    assert got.measures() == sent.measures() and got.measures_json == sent.measures_json
    errored = TrialOutcome(TrialKey("default", "c", "s", 1), "error", None, "timed out", 1.0, 1)
    back = pickle.loads(pickle.dumps(errored))
    assert back.score is None and back.verdict == "error" and back.reason == "timed out"


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

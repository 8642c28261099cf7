"""Loading a results folder: the plan, the trials, the summary, and refusals that say why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sounding.scoring import ScenarioVerdict, mean_curve
from sounding.store import ResultsError, TrialKey, load_results

VERDICTS = {
    "echoes": ScenarioVerdict.PASS,
    "wrong": ScenarioVerdict.FAIL,
    "flaky-any": ScenarioVerdict.FLAKY,
    "flaky-all": ScenarioVerdict.FLAKY,
    "broken": ScenarioVerdict.ERROR,
}


def test_a_real_run_loads_with_its_plan_trials_and_summary(mixed_run: Path) -> None:
    results = load_results(mixed_run)
    assert results.run_id == mixed_run.name and results.cells == ["default"]
    assert len(results.planned) == len(results.trials) == 15 and not results.missing
    assert {s.summary.scenario: s.summary.verdict for s in results.scenarios} == VERDICTS
    assert len(results.errored) == 3 and all(t.case == "basic" for t in results.errored)
    flaky = next(s for s in results.scenarios if s.summary.scenario == "flaky-any")
    assert [t.trial for t in flaky.trials] == [1, 2, 3]
    assert [t.outcome for t in flaky.trials] == [True, False, True]
    assert flaky.pass_rate is not None and flaky.pass_rate.estimate == pytest.approx(2 / 3)
    assert flaky.trials[1].cost_usd == pytest.approx(0.002) and flaky.trials[1].tokens == 122


def test_a_trial_gives_its_record_and_artifacts(mixed_run: Path) -> None:
    results = load_results(mixed_run)
    wrong = next(s for s in results.scenarios if s.summary.scenario == "wrong")
    record = wrong.trials[0].record
    assert record is not None and record.tools_called == ["lookup"]
    assert "+note for wrong" in (results.text(wrong.trials[0], "diff.patch") or "")
    broken = next(s for s in results.scenarios if s.summary.scenario == "broken")
    assert broken.pass_rate is None and "broken#1/trace.jsonl, line 1" in broken.first_error
    assert results.text(broken.trials[0], "no-such-file.txt") is None


def test_a_run_an_older_sounding_wrote_still_loads(
    mixed_run: Path, copy_run: Any, as_older_run: Any
) -> None:
    run = copy_run(mixed_run)
    as_older_run(run)  # nested folders, each run record in a record.json of its own
    assert (run / "trials/default/basic/wrong/1/record.json").is_file()
    results = load_results(run)
    assert {s.summary.scenario: s.summary.verdict for s in results.scenarios} == VERDICTS
    wrong = next(s for s in results.scenarios if s.summary.scenario == "wrong")
    record = wrong.trials[0].record
    assert record is not None and record.tools_called == ["lookup"]
    broken = next(s for s in results.scenarios if s.summary.scenario == "broken")
    assert broken.trials[0].record is None


def test_a_record_of_an_unknown_schema_names_its_trial_file(
    mixed_run: Path, copy_run: Any, edit_json: Any
) -> None:
    run = copy_run(mixed_run)
    trial_file = run / "trials/default/basic/wrong#1/trial.json"
    record = json.loads(trial_file.read_text())["record"]
    edit_json(trial_file, record={**record, "schema": "sounding.run/9"})
    with pytest.raises(ResultsError, match=r"trial\.json: schema 'sounding\.run/9'"):
        load_results(run)


def test_fields_are_read_by_name_not_by_order(mixed_run: Path, copy_run: Any) -> None:
    run = copy_run(mixed_run)
    trial_file = run / "trials/default/basic/wrong#2/trial.json"
    document = json.loads(trial_file.read_text())
    trial_file.write_text(json.dumps(dict(reversed(list(document.items())))))
    trial = next(
        t for t in load_results(run).trials if t.key == TrialKey("default", "basic", "wrong", 2)
    )
    assert trial.reason == document["reason"] and trial.score is not None


@pytest.mark.parametrize(
    ("name", "schema"),
    [("run.json", "sounding.results/9"), ("summary.json", "sounding.summary/2")],
)
def test_an_unknown_schema_is_refused_by_name(
    mixed_run: Path, copy_run: Any, edit_json: Any, name: str, schema: str
) -> None:
    run = copy_run(mixed_run)
    edit_json(run / name, schema=schema)
    with pytest.raises(ResultsError) as caught:
        load_results(run)
    message = str(caught.value)
    assert str(run / name) in message and repr(schema) in message and "upgrade" in message


def test_an_unknown_trial_schema_names_the_trial_file(
    mixed_run: Path, copy_run: Any, edit_json: Any
) -> None:
    run = copy_run(mixed_run)
    trial_file = run / "trials/default/basic/echoes#3/trial.json"
    edit_json(trial_file, schema="sounding.trial/99")
    with pytest.raises(ResultsError, match=r"sounding\.trial/99"):
        load_results(run)
    edit_json(trial_file, schema=None)
    with pytest.raises(ResultsError, match="no `schema` field"):
        load_results(run)


def test_a_damaged_file_is_refused_with_where_and_how(
    mixed_run: Path, copy_run: Any, edit_json: Any
) -> None:
    run = copy_run(mixed_run)
    trial_file = run / "trials/default/basic/echoes#1/trial.json"
    edit_json(trial_file, trial="the third")
    with pytest.raises(
        ResultsError, match=r"trial\.json: trial: must be a whole number.*re-run the trial"
    ):
        load_results(run)
    trial_file.write_text("{not json")
    with pytest.raises(ResultsError, match="not readable as JSON"):
        load_results(run)


def test_an_unfinished_run_loads_but_has_no_summary(mixed_run: Path, copy_run: Any) -> None:
    run = copy_run(mixed_run)
    (run / "summary.json").unlink()
    (run / "trials/default/basic/echoes#2/trial.json").unlink()
    results = load_results(run)
    assert results.missing == [TrialKey("default", "basic", "echoes", 2)]
    with pytest.raises(ResultsError) as caught:
        results.finished()
    assert "1 of 15 trials missing" in str(caught.value)
    assert f"--resume {run.name}" in str(caught.value)


def test_a_folder_of_runs_is_not_a_run(mixed_run: Path, tmp_path: Path) -> None:
    with pytest.raises(ResultsError, match=f"holds runs, not one run \\({mixed_run.name}\\)"):
        load_results(mixed_run.parent)
    with pytest.raises(ResultsError, match="no such folder"):
        load_results(tmp_path / "nowhere")
    with pytest.raises(ResultsError, match=r"no run\.json"):
        load_results(tmp_path)


def test_the_summary_holds_each_scenario_curve_and_each_cell_mean(mixed_run: Path) -> None:
    written = json.loads((mixed_run / "summary.json").read_text(encoding="utf-8"))
    lines = {line["scenario"]: line for line in written["scenarios"]}
    flaky = lines["flaky-all"]
    assert (flaky["k"], flaky["pass_at_k"], flaky["pass_hat_k"]) == (3, 1.0, 0.0)  # as before
    assert flaky["pass_at"] == [pytest.approx(2 / 3), 1.0, 1.0]
    assert flaky["pass_hat"] == [pytest.approx(2 / 3), pytest.approx(1 / 3), 0.0]
    assert lines["broken"]["pass_at"] == lines["broken"]["pass_hat"] == []  # nothing judged
    assert list(written["curves"]) == ["default"]
    cell = written["curves"]["default"]
    assert [(p["k"], p["scenarios"]) for p in cell] == [(1, 4), (2, 4), (3, 4)]
    assert [p["pass_hat"] for p in cell] == pytest.approx([7 / 12, 5 / 12, 3 / 12])
    assert [p["pass_at"] for p in cell] == pytest.approx([7 / 12, 9 / 12, 9 / 12])
    summary = load_results(mixed_run).finished()
    assert summary.curves["default"] == mean_curve(summary.scenarios)


def test_a_summary_older_than_the_curves_reads_with_them(
    mixed_run: Path, copy_run: Any, as_older_run: Any, as_run_before_curves: Any
) -> None:
    run = copy_run(mixed_run)
    as_older_run(run)
    as_run_before_curves(run)
    assert '"pass_hat":' not in (run / "summary.json").read_text(encoding="utf-8")
    summary = load_results(run).finished()
    flaky = next(s for s in summary.scenarios if s.scenario == "flaky-all")
    assert flaky.pass_hat == [pytest.approx(2 / 3), pytest.approx(1 / 3), 0.0]
    assert summary.curves == load_results(mixed_run).finished().curves

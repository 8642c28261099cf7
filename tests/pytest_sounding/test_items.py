"""`python -m pytest SUITE`: a test per scenario, run through sounding's runner, each verdict
mapped onto pytest's outcomes; `-k`, `-x`, `--lf`, `-n` and the plugin's options."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sounding.report import report_command
from sounding.store import load_results

pytest_plugins = ["pytester"]


def test_each_verdict_maps_to_its_pytest_outcome(suite: Any, ran: Any) -> None:
    done = suite.pytest("evals", "-v")
    done.assert_outcomes(passed=2, failed=2, errors=1, warnings=1)
    out = done.stdout.str()
    for scenario, outcome in [
        ("passes", "PASSED"),
        ("flaky", "FAILED"),
        ("flaky-any", "PASSED"),
        ("fails", "FAILED"),
        ("crashes", "ERROR"),
    ]:
        done.stdout.fnmatch_lines([f"evals/sounding.toml::main::{scenario} {outcome} *"])
    # the message: the verdict with pass@k and pass^k, the first failure and its folder
    done.stdout.fnmatch_lines(
        [
            "FLAKY main/flaky: 1 of 2 judged trials passed; pass@2 = 1.00, pass^2 = 0.00; "
            "its gate (replica_aggregation: all) does not hold",
            "first failure (trial 2): expect?0? final_answer_contains: the answer does not "
            "contain 'done'",
            "  trial folder: */trials/default/main/flaky#2",
        ]
    )
    done.stdout.fnmatch_lines(
        ["ERROR main/crashes: 0 of 0 judged trials passed, 2 erred (2 agent)*"]
    )
    assert "FlakyScenarioWarning: FLAKY main/flaky-any: 1 of 2 judged trials passed" in out
    assert "its gate (replica_aggregation: any) holds" in out
    # one run, written as `sounding run` writes it: every report reads it
    (run,) = suite.runs()
    assert f"run folder: {run}  (sounding report {run})" in out
    summary = load_results(run).finished()
    assert {line.scenario: line.verdict.value for line in summary.scenarios} == {
        "passes": "pass",
        "flaky": "flaky",
        "flaky-any": "flaky",
        "fails": "fail",
        "crashes": "error",
    }
    assert report_command(run, json=suite.root / "report.json") == 0
    report = json.loads((suite.root / "report.json").read_text())
    assert (report["run"]["finished_trials"], report["exit_code"]) == (10, 3)  # 3: an error


def test_k_runs_only_the_selected_scenario_with_the_given_trials_and_llm_mode(
    suite: Any, ran: Any
) -> None:
    done = suite.pytest(
        "evals", "-k", "passes", "--sounding-trials", "3", "--sounding-llm", "replay"
    )
    done.assert_outcomes(passed=1, deselected=4)
    (run,) = suite.runs()
    assert ran(run) == [("passes", 1), ("passes", 2), ("passes", 3)]
    options = json.loads((run / "run.json").read_text())["options"]
    assert (options["trials"], options["llm"]) == (3, "replay")


def test_x_stops_before_the_next_scenario_runs(suite: Any, ran: Any) -> None:
    done = suite.pytest("evals", "-x")
    done.assert_outcomes(passed=1, failed=1)
    done.stdout.fnmatch_lines(["*stopping after 1 failures*"])
    scenarios = {scenario for run in suite.runs() for scenario, _ in ran(run)}
    assert scenarios == {"passes", "flaky"}  # each item a run of its own, when reached


def test_lf_runs_again_only_the_scenarios_that_failed(suite: Any, ran: Any) -> None:
    suite.pytest("evals", "-k", "passes or fails").assert_outcomes(passed=1, failed=1, deselected=3)
    again = suite.pytest("evals", "--lf")
    again.assert_outcomes(failed=1, deselected=4)
    first, second = suite.runs()
    assert {s for s, _ in ran(first)} == {"passes", "fails"}
    assert {s for s, _ in ran(second)} == {"fails"}


def test_xdist_workers_each_write_whole_runs_of_their_own(suite: Any, ran: Any) -> None:
    done = suite.pytest("evals", "-n", "2", "-k", "not crashes")
    done.assert_outcomes(passed=2, failed=2, warnings=1)
    folders = suite.runs()
    trials = [trial for run in folders for trial in ran(run)]
    assert sorted(trials) == sorted(set(trials))  # no trial in two runs
    assert {s for s, _ in trials} == {"passes", "flaky", "flaky-any", "fails"}
    for run in folders:  # each finished, readable by the reports
        assert load_results(run).finished().run_id == run.name
        assert f"run folder: {run}" in done.stdout.str()


def test_a_run_that_cannot_start_is_an_error_of_each_item_saying_why(suite: Any, ran: Any) -> None:
    suite.write("sounding.toml", '[agent]\ncommand = "no-such-agent-here --go"\n')
    done = suite.pytest("evals", "-k", "passes or fails")
    done.assert_outcomes(errors=2, deselected=3)
    done.stdout.fnmatch_lines(
        ["*sounding.toml: agent.command starts with 'no-such-agent-here', which is not on PATH*"]
    )
    assert "Traceback" not in done.stdout.str()


def test_a_bad_case_file_is_a_collection_error_naming_file_and_line(suite: Any, ran: Any) -> None:
    suite.write("cases/other.yaml", "scenarios:\n  - {id: a, user: hi, trails: 3}\n")
    done = suite.pytest("evals")
    assert done.ret == pytest.ExitCode.INTERRUPTED  # a collection error stops the session
    done.stdout.fnmatch_lines(["*other.yaml:2*trails*"])
    assert suite.runs() == []

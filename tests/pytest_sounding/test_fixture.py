"""`sounding_run`: a test runs one scenario against a Python function (or the suite's agent)
and asserts on its outcome; the run folder is one every report and `compare` read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

pytest_plugins = ["pytester"]

TESTS = """
from sounding.report import compare_command
from sounding.store import load_results


def answer(prompt, context):
    return "done"


def wrong(prompt, context):
    return "nope"


def test_a_function_that_does_the_job(sounding_run, tmp_path):
    outcome = sounding_run("evals/cases/main.yaml", "fails", agent=answer, trials=3)
    assert outcome.verdict == "pass" and outcome.gate
    assert (outcome.passed, outcome.failed, outcome.errors, outcome.pass_rate) == (3, 0, 0, 1.0)
    assert outcome.check_rates() == {"expect[0] final_answer_contains": 1.0}
    assert [trial.trial for trial in outcome.trials] == [1, 2, 3]
    assert outcome.run_dir.parent == tmp_path / "results"
    assert load_results(outcome.run_dir).finished().exit_code == 0


def test_one_that_does_not(sounding_run, tmp_path):
    outcome = sounding_run("evals", "main/passes", agent=wrong, results=tmp_path / "mine")
    assert (outcome.verdict, outcome.gate, outcome.pass_rate) == ("fail", False, 0.0)
    said = "expect[0] final_answer_contains: the answer does not contain 'done'"
    assert outcome.first_failure == said
    assert outcome.check_rates() == {"expect[0] final_answer_contains": 0.0}
    assert outcome.run_dir.parent == tmp_path / "mine"
    assert outcome.describe().startswith("FAIL main/passes: 0 of 2 judged trials passed")


def test_the_suites_own_agent(sounding_run):
    outcome = sounding_run("evals", "flaky")
    assert (outcome.verdict, outcome.pass_at_k, outcome.pass_hat_k) == ("flaky", 1.0, 0.0)
    assert [trial.verdict for trial in outcome.trials] == ["pass", "fail"]


def test_compare_reads_two_runs(sounding_run):
    good = sounding_run("evals", "passes", agent=answer, trials=4)
    bad = sounding_run("evals", "passes", agent=wrong, trials=4)
    assert compare_command(good.run_dir, bad.run_dir, True) == 1  # an established regression


def test_a_scenario_that_is_not_there(sounding_run):
    sounding_run("evals", "refunds", agent=answer)


def test_an_agent_that_is_no_function(sounding_run):
    sounding_run("evals", "passes", agent="agent:answer")
"""


def test_a_test_runs_a_scenario_against_a_function_and_reads_its_outcome(suite: Any) -> None:
    suite.pytester.makepyfile(test_agent=TESTS)
    done = suite.pytest("test_agent.py", "-p", "no:cacheprovider")
    done.assert_outcomes(passed=4, failed=2)
    done.stdout.fnmatch_lines(
        [
            "*_ test_a_scenario_that_is_not_there _*",
            "evals: no scenario 'refunds' (scenarios: main/passes, main/flaky, main/flaky-any, "
            "main/fails, main/crashes)",
            "*_ test_an_agent_that_is_no_function _*",
            "the agent 'agent:answer' is not callable: give a function(prompt, context)",
        ]
    )
    assert "Traceback" not in done.stdout.str()
    # the session ends naming the run folders its tests wrote: 5, by the 4 that passed
    listed = [line.split()[2] for line in done.outlines if line.startswith("run folder: ")]
    assert len(listed) == 5 and all(Path(run, "summary.json").is_file() for run in listed)

"""`sounding compare`: established regressions, inconclusive sameness, withheld verdicts."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from sounding.report import COMPARE_SCHEMA, compare_command, compare_runs
from sounding.store import ResultsError


def test_a_planted_regression_is_established_and_exits_1(
    good_and_bad_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    good, bad = good_and_bad_runs
    result = compare_runs(good, bad)
    (gap,) = result.scenarios
    assert gap.state == "regression" and not result.withheld
    assert gap.pass_rate is not None and gap.pass_rate.paired
    assert (gap.pass_rate.interval.low, gap.pass_rate.interval.high) == (-1.0, -1.0)
    assert [cell.state for cell in result.cells] == ["regression"]
    assert compare_command(good, bad) == 1
    out = capsys.readouterr().out
    assert "REGRESSION    basic/task  10/10 → 0/10  -1 [-1, -1]" in out
    assert "2 regressions, 0 improvements established; 0 inconclusive" in out
    assert "duration per trial (seconds), medians, an interval and never a verdict" in out
    assert compare_command(bad, good) == 0
    assert "IMPROVEMENT   basic/task  0/10 → 10/10  +1 [+1, +1]" in capsys.readouterr().out


def test_identical_runs_are_inconclusive_and_exit_0(
    good_and_bad_runs: tuple[Path, Path], copy_run: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    good, _ = good_and_bad_runs
    again = copy_run(good, "again")
    assert compare_command(good, again) == 0
    out = capsys.readouterr().out
    assert "inconclusive  basic/task  10/10 → 10/10  +0 [+0, +0]" in out
    assert "0 regressions, 0 improvements established; 2 inconclusive" in out
    assert "cost per trial (USD): not recorded in both runs" in out


def test_the_json_form_is_versioned(
    good_and_bad_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    good, bad = good_and_bad_runs
    assert compare_command(good, bad, as_json=True) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["schema"] == COMPARE_SCHEMA == "sounding.compare/1"
    assert (document["publishable"], document["regressions"], document["exit_code"]) == (
        True,
        2,
        1,
    )
    (scenario,) = document["scenarios"]
    assert (scenario["case"], scenario["scenario"], scenario["state"]) == (
        "basic",
        "task",
        "regression",
    )
    assert scenario["pass_rate"]["direction"] == "regression"
    assert scenario["duration_s"]["state"] is None and scenario["cost_usd"] is None
    assert document["baseline"]["finished_trials"] == document["candidate"]["planned_trials"] == 10


def test_an_incomplete_run_publishes_no_difference(
    good_and_bad_runs: tuple[Path, Path], copy_run: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    good, bad = good_and_bad_runs
    partial = copy_run(bad, "partial")
    shutil.rmtree(partial / "trials/default/basic/task#4")
    result = compare_runs(good, partial)
    assert [gap.state for gap in result.gaps] == ["withheld", "withheld"]
    assert result.withheld == "matrix incomplete: 1 of 20 trials missing"
    assert result.exit_code == 3
    assert compare_command(good, partial) == 3
    out = capsys.readouterr().out
    assert "no difference is published: matrix incomplete: 1 of 20 trials missing" in out
    assert "-1 [-1, -1]" in out  # the interval is still shown: it is a measurement


def test_an_errored_trial_withholds_the_verdict_and_says_which_run(
    good_and_bad_runs: tuple[Path, Path], copy_run: Any, edit_json: Any
) -> None:
    good, bad = good_and_bad_runs
    errored = copy_run(bad, "errored")
    edit_json(
        errored / "trials/default/basic/task#7/trial.json",
        state="error",
        verdict="error",
        score=None,
        reason="timed out after 20.0s",
    )
    result = compare_runs(good, errored)
    assert result.withheld == "cell 'candidate' holds 1 invalid trial"
    (gap,) = result.scenarios
    assert gap.state == "withheld" and gap.pass_rate is not None
    assert gap.pass_rate.candidate_summary.judged == 9


def test_a_side_with_nothing_judged_is_not_compared(
    good_and_bad_runs: tuple[Path, Path], copy_run: Any, edit_json: Any
) -> None:
    good, bad = good_and_bad_runs
    errored = copy_run(bad, "all-errored")
    for folder in sorted((errored / "trials/default/basic").glob("task#*")):
        edit_json(folder / "trial.json", state="error", verdict="error", score=None)
    result = compare_runs(good, errored)
    (gap,) = result.scenarios
    assert gap.state == "not compared"
    assert gap.note == "no judged trial in the candidate run (10 errored)"
    assert result.withheld == "cell 'candidate' holds 10 invalid trials"
    assert result.exit_code == 3


def test_runs_that_share_nothing_or_are_not_runs_are_usage_errors(
    good_and_bad_runs: tuple[Path, Path],
    mixed_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    good, _ = good_and_bad_runs
    with pytest.raises(ResultsError, match="share no scenario"):
        compare_runs(good, mixed_run)
    assert compare_command(good, tmp_path) == 2
    assert "no run.json" in capsys.readouterr().err


def test_the_command_line_compare_exits_by_the_verdict(
    good_and_bad_runs: tuple[Path, Path], sounding: Any
) -> None:
    good, bad = good_and_bad_runs
    regressed = sounding("compare", str(good), str(bad), "--json")
    assert regressed.returncode == 1, regressed.stderr
    assert json.loads(regressed.stdout)["regressions"] == 2
    usage = sounding("compare", str(good))
    assert usage.returncode == 2 and "Missing argument 'CANDIDATE_DIR'" in usage.stderr


def test_a_check_that_regressed_is_caught_even_when_the_pass_rate_holds(
    tmp_path: Path, sounding: Any
) -> None:
    runs = []
    for name, answer in (("base", "ok"), ("cand", "ok, and a great deal more words than before")):
        suite = tmp_path / name
        (suite / "cases").mkdir(parents=True)
        (suite / "agent.py").write_text(f"import sys; sys.stdin.read(); print({answer!r})\n")
        (suite / "sounding.toml").write_text(
            f'[agent]\ncommand = ["{sys.executable}", "{{suite}}/agent.py"]\n'
        )
        (suite / "cases/c.yaml").write_text(
            "scenarios:\n  - id: s\n    user: hi\n    trials: 10\n"
            "    expect: [{final_answer_contains: ok}]\n"
            "    leads: [{final_answer_max_chars: 10}]\n"
        )
        assert sounding("run", str(suite)).returncode == 0
        runs.append(next((suite / "results").iterdir()))
    result = compare_runs(*runs)
    (gap,) = result.scenarios
    assert gap.state == "inconclusive"  # every trial passed on both sides
    assert gap.metric_states()["lead[0] final_answer_max_chars"] == "regression"
    assert result.exit_code == 1
    done = sounding("compare", str(runs[0]), str(runs[1]))
    assert done.returncode == 1
    assert "REGRESSION  lead[0] final_answer_max_chars" in done.stdout
    assert "checks and metrics: 1 regressed, 0 improved" in done.stdout


def test_a_scenario_whose_judged_trials_do_not_pair_says_why_instead_of_failing(
    good_and_bad_runs: tuple[Path, Path], copy_run: Any, edit_json: Any
) -> None:
    good, bad = good_and_bad_runs
    base, cand = copy_run(good, "base"), copy_run(bad, "cand")
    for run, errored in ((base, range(1, 6)), (cand, range(6, 11))):
        for number in errored:
            trial = run / f"trials/default/basic/task#{number}/trial.json"
            edit_json(trial, state="error", verdict="error", score=None)
    (gap,) = compare_runs(base, cand).scenarios
    assert gap.state == "not compared" and "nothing pairs" in gap.note
    assert gap.metrics == {}


def test_each_side_gives_pass_at_k_and_pass_hat_k_at_every_k(
    good_and_bad_runs: tuple[Path, Path], copy_run: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """The candidate passes trials 1 to 5 of 10: pass^2 = C(5,2)/C(10,2) = 10/45."""
    good, bad = good_and_bad_runs
    half = copy_run(bad, "half")
    for n in range(1, 6):
        name = f"trials/default/basic/task#{n}/trial.json"
        shutil.copy(good / name, half / name)
    assert compare_command(good, half, as_json=True) == 1
    document = json.loads(capsys.readouterr().out)
    (scenario,) = document["scenarios"]
    (cell,) = document["cells"]
    for gap in (scenario, cell):
        before, after = gap["curves"]["baseline"], gap["curves"]["candidate"]
        assert [p["k"] for p in before] == [p["k"] for p in after] == list(range(1, 11))
        assert {p["pass_hat"] for p in before} == {1.0} and after[1]["pass_hat"] == 10 / 45
        assert after[1]["pass_at"] == 1 - 10 / 45 and after[5]["pass_at"] == 1.0
        assert {p["scenarios"] for p in before + after} == {1}
    assert compare_command(good, half) == 1
    out = capsys.readouterr().out
    section = out[out.index("pass@k and pass^k at every k") :].split("\n\n")[0]
    lines = section.splitlines()
    assert lines[1:7] == [
        "  basic/task",
        "    k" + " " * 25 + "1      2      3      4      5      6      7      8      9     10",
        "    pass@k    baseline  " + "  1.000" * 10,
        "              candidate   0.500  0.778  0.917  0.976  0.996" + "  1.000" * 5,
        "    pass^k    baseline  " + "  1.000" * 10,
        "              candidate   0.500  0.222  0.083  0.024  0.004" + "  0.000" * 5,
    ]
    assert lines[7] == "  cell default: all shared scenarios"
    assert lines[-2:] == [  # a cell says how many scenarios each k averages
        "    scenarios baseline  " + "      1" * 10,
        "              candidate " + "      1" * 10,
    ]


def test_a_metric_declared_lower_is_better_regresses_when_it_goes_up(
    tmp_path: Path, sounding: Any
) -> None:
    runs = []
    for name, files in (("base", 1), ("cand", 3)):
        suite = tmp_path / name
        (suite / "cases").mkdir(parents=True)
        writes = "; ".join(f"open('f{n}.txt', 'w').write('x')" for n in range(files))
        (suite / "agent.py").write_text(f"import sys; sys.stdin.read(); {writes}; print('ok')\n")
        (suite / "count.py").write_text(
            f"#!{sys.executable}\nimport json, sys\n"
            "context = json.load(open(sys.argv[1]))\n"
            "print(json.dumps({'metrics': {'files': len(context['touched'])}}))\n"
        )
        (suite / "count.py").chmod(0o755)
        (suite / "sounding.toml").write_text(
            f'[agent]\ncommand = ["{sys.executable}", "{{suite}}/agent.py"]\n'
        )
        (suite / "cases/c.yaml").write_text(
            "validators:\n"
            "  - {mode: script, command: count.py, metrics: [files], lower_is_better: [files]}\n"
            "scenarios:\n  - id: s\n    user: hi\n    trials: 8\n"
        )
        done = sounding("run", str(suite))
        assert done.returncode == 0, done.stdout + done.stderr
        runs.append(next((suite / "results").iterdir()))
    (gap,) = compare_runs(*runs).scenarios
    assert gap.metric_states()["files"] == "regression"  # more files touched is worse

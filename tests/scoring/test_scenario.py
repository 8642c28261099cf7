"""pass@k, pass^k and the scenario verdict over trials."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from itertools import combinations
from math import comb
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sounding.runner import score_record
from sounding.scoring import (
    ScenarioResult,
    ScenarioVerdict,
    Tally,
    TrialScore,
    TrialVerdict,
    aggregate,
    mean_curve,
    pass_at_curve,
    pass_at_k,
    pass_hat_curve,
    pass_hat_k,
)
from sounding.spec import Aggregation, load_case

TAU_REWARDS = Path(__file__).parent.parent / "fixtures" / "tau-bench" / "airline-rewards.jsonl"
TAU_SHARED = Path("/work/shared/data/tau-bench-gpt-4o-airline.json")


def trials(*verdicts: str, composite: float | None = None) -> list[TrialScore]:
    out = []
    for v in verdicts:
        verdict = TrialVerdict(v)
        value = composite if composite is not None else (1.0 if v == "pass" else 0.0)
        out.append(
            TrialScore(
                verdict=verdict, composite=None if v == "error" else value, threshold=1.0, checks=[]
            )
        )
    return out


def test_all_passing_is_pass() -> None:
    result = aggregate(trials("pass", "pass", "pass"))
    assert (result.verdict, result.pass_at_k, result.pass_hat_k) == (ScenarioVerdict.PASS, 1, 1)
    assert result.gate


def test_some_passing_is_flaky_and_does_not_gate_under_all() -> None:
    result = aggregate(trials("pass", "fail", "pass"))
    assert result.verdict is ScenarioVerdict.FLAKY
    assert (result.pass_at_k, result.pass_hat_k) == (1.0, 0.0)
    assert not result.gate
    assert aggregate(trials("pass", "fail", "pass"), aggregation=Aggregation.ANY).gate
    assert aggregate(trials("pass", "fail", "pass"), aggregation=Aggregation.MAJORITY).gate
    assert not aggregate(trials("pass", "fail", "fail"), aggregation=Aggregation.MAJORITY).gate


def test_none_passing_is_fail() -> None:
    assert aggregate(trials("fail", "fail")).verdict is ScenarioVerdict.FAIL


def test_a_single_trial_is_only_pass_or_fail() -> None:
    assert aggregate(trials("pass")).verdict is ScenarioVerdict.PASS
    assert aggregate(trials("fail")).verdict is ScenarioVerdict.FAIL


def test_mean_aggregation_gates_on_the_mean_composite() -> None:
    scores = trials("pass", "fail")
    assert aggregate(scores, aggregation=Aggregation.MEAN, threshold=0.5).gate
    assert not aggregate(scores, aggregation=Aggregation.MEAN, threshold=0.6).gate


def test_unbiased_estimators_with_more_trials_than_k() -> None:
    result = aggregate(trials("pass", "pass", "fail", "fail", "pass"), k=2)
    assert result.pass_at_k == pytest.approx(1 - comb(2, 2) / comb(5, 2))
    assert result.pass_hat_k == pytest.approx(comb(3, 2) / comb(5, 2))
    assert result.verdict is ScenarioVerdict.FLAKY


def test_errors_stand_apart_and_leave_the_verdict_open_only_when_they_could_change_it() -> None:
    open_ = aggregate(trials("pass", "pass", "error"))
    assert open_.verdict is ScenarioVerdict.ERROR  # the error could have been a failure
    assert (open_.passed, open_.errors, open_.pass_hat_k) == (2, 1, 1.0)
    assert not open_.gate
    settled = aggregate(trials("pass", "fail", "error"))
    assert settled.verdict is ScenarioVerdict.FLAKY  # flaky whatever the error trial did
    assert not settled.gate
    assert aggregate(trials("error", "error")).verdict is ScenarioVerdict.ERROR


@given(
    st.integers(1, 30).flatmap(
        lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))
    )
)
def test_estimators_are_probabilities_and_agree_at_the_extremes(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    at, hat = pass_at_k(n, c, k), pass_hat_k(n, c, k)
    assert 0.0 <= hat <= at <= 1.0
    assert (at == 0.0) == (c == 0)
    assert (hat == 1.0) == (c == n)


def test_property_tests_run_under_the_ci_profile() -> None:
    """A loaded machine cannot fail them: no deadline, no "too slow", bounded examples."""
    if os.environ.get("HYPOTHESIS_PROFILE", "ci") != "ci":
        pytest.skip("another Hypothesis profile was asked for")
    current = settings()
    assert current.deadline is None and current.max_examples <= 100
    assert HealthCheck.too_slow in current.suppress_health_check


def test_estimators_refuse_impossible_counts() -> None:
    with pytest.raises(ValueError, match="1 <= k <= n"):
        pass_at_k(3, 1, 4)


def test_the_curve_gives_both_estimators_at_every_k_of_the_judged_trials() -> None:
    result = aggregate(trials("pass", "fail", "pass", "error"), k=2)
    assert (result.k, result.pass_hat_k) == (2, pytest.approx(1 / 3))  # one k, as before
    assert result.pass_at == [pytest.approx(2 / 3), 1.0, 1.0]  # the error is left out: n = 3
    assert result.pass_hat == [pytest.approx(2 / 3), pytest.approx(1 / 3), 0.0]
    assert result.pass_hat[result.k - 1] == result.pass_hat_k
    assert aggregate(trials("error")).pass_at == aggregate(trials("error")).pass_hat == []


def test_the_curve_is_written_with_the_result_and_read_back_from_its_counts() -> None:
    dumped = aggregate(trials("pass", "fail")).model_dump(mode="json")
    assert (dumped["pass_at"], dumped["pass_hat"]) == ([0.5, 1.0], [0.5, 0.0])
    older = {k: v for k, v in dumped.items() if k not in ("pass_at", "pass_hat")}
    assert ScenarioResult.model_validate(older).pass_hat == [0.5, 0.0]
    assert ScenarioResult.model_validate({**dumped, "pass_hat": [9.0]}).pass_hat == [0.5, 0.0]


@given(st.integers(1, 12).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))))
def test_the_curve_is_the_share_of_k_subsets_with_a_pass_or_all_passing(
    nc: tuple[int, int],
) -> None:
    """What the estimators mean, counted by hand over every k-subset of the trials."""
    n, c = nc
    outcomes = [True] * c + [False] * (n - c)
    for k in range(1, n + 1):
        subsets = list(combinations(outcomes, k))
        assert pass_at_curve(n, c)[k - 1] == pytest.approx(sum(map(any, subsets)) / len(subsets))
        assert pass_hat_curve(n, c)[k - 1] == pytest.approx(sum(map(all, subsets)) / len(subsets))
    assert pass_hat_curve(n, c) == sorted(pass_hat_curve(n, c), reverse=True)  # falls with k
    assert pass_at_curve(n, c) == sorted(pass_at_curve(n, c))  # rises with k


def test_the_curve_is_exact_for_many_trials() -> None:
    hats = pass_hat_curve(1000, 999)
    assert len(hats) == 1000 and hats[-1] == 0.0 and hats[-2] == pytest.approx(1 / 1000)
    assert pass_at_curve(1000, 1)[-1] == 1.0


def test_the_mean_curve_averages_each_k_over_the_scenarios_that_reach_it() -> None:
    three = aggregate(trials("pass", "pass", "fail"))
    two = aggregate(trials("pass", "fail"))
    errored = aggregate(trials("error", "error"))
    points = mean_curve([three, two, errored])
    assert [(p.k, p.scenarios) for p in points] == [(1, 2), (2, 2), (3, 1)]
    assert points[0].pass_hat == pytest.approx((2 / 3 + 1 / 2) / 2)
    assert points[1].pass_hat == pytest.approx((1 / 3 + 0) / 2)
    assert points[1].pass_at == pytest.approx((1 + 1) / 2)
    assert (points[2].pass_at, points[2].pass_hat) == (1.0, 0.0)
    assert mean_curve([]) == mean_curve([errored]) == []


def _tau_bench_airline() -> list[ScenarioResult]:
    """The 50 tau-bench airline tasks of GPT-4o, 4 trials each, a trial passing when its
    reward is 1, counted the way the runner counts a scenario's trials."""
    tallies: dict[int, Tally] = defaultdict(Tally)
    for line in TAU_REWARDS.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        verdict = TrialVerdict.PASS if entry["reward"] == 1 else TrialVerdict.FAIL
        tallies[entry["task_id"]].add(verdict, entry["reward"])
    return [tally.result(k=None) for tally in tallies.values()]


def test_the_tau_bench_airline_curve_of_gpt_4o() -> None:
    """Real trials nobody here wrote: pass^1 is the published 0.42, and the curve falls as
    k grows, to the tasks GPT-4o solved in all four trials (10 of 50)."""
    results = _tau_bench_airline()
    assert len(results) == 50 and {r.passed + r.failed for r in results} == {4}
    points = mean_curve(results)
    assert [p.scenarios for p in points] == [50, 50, 50, 50]
    assert [round(p.pass_hat, 3) for p in points] == [0.42, 0.273, 0.22, 0.2]
    assert points[3].pass_hat == 10 / 50  # the tasks solved in all four trials
    assert [round(p.pass_at, 3) for p in points] == [0.42, 0.567, 0.66, 0.72]
    assert points[3].pass_at == 1 - 14 / 50  # all but the tasks never solved


@pytest.mark.skipif(not TAU_SHARED.is_file(), reason="the full tau-bench file is not here")
def test_the_tau_bench_rewards_fixture_matches_the_published_file() -> None:
    published = json.loads(TAU_SHARED.read_text(encoding="utf-8"))
    rows = [json.loads(line) for line in TAU_REWARDS.read_text(encoding="utf-8").splitlines()]
    kept = [{k: e[k] for k in ("task_id", "trial", "reward")} for e in published]
    assert sorted(kept, key=lambda e: (e["task_id"], e["trial"])) == rows


@pytest.mark.skipif(not TAU_SHARED.is_file(), reason="the full tau-bench file is not here")
def test_the_tau_bench_runs_scored_by_their_reference_actions(tmp_path: Path) -> None:
    """sounding's own checks on real runs: each task's scenario expects every reference
    action (`tool_called` with its arguments), each of the 200 conversations is scored as a
    record, and the curve is pass^1..4 = 0.385, 0.283, 0.25, 0.24."""
    published = json.loads(TAU_SHARED.read_text(encoding="utf-8"))
    tasks = {entry["task_id"]: entry["info"]["task"] for entry in published}
    case = tmp_path / "tau.yaml"
    case.write_text(yaml.safe_dump({"scenarios": [_reference_scenario(t) for t in tasks.items()]}))
    scenarios = {scenario.id: scenario for scenario in load_case(case).scenarios}
    tallies: dict[int, Tally] = defaultdict(Tally)
    for entry in published:
        record = tmp_path / f"{entry['task_id']}-{entry['trial']}.json"
        record.write_text(json.dumps(entry), encoding="utf-8")
        score = score_record(case, scenarios[f"task-{entry['task_id']}"], record)
        tallies[entry["task_id"]].add(score.verdict, score.composite)
    points = mean_curve([tally.result(k=None) for tally in tallies.values()])
    assert [round(p.pass_hat, 3) for p in points] == [0.385, 0.283, 0.25, 0.24]


def _reference_scenario(task: tuple[int, dict[str, Any]]) -> dict[str, Any]:
    number, found = task
    expect = [{"tool_called": {"name": a["name"], "args": a["kwargs"]}} for a in found["actions"]]
    return {"id": f"task-{number}", "user": found["instruction"], "expect": expect}

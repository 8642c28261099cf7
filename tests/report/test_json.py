"""The versioned JSON report (sounding.report/1) of a real run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sounding.report import REPORT_SCHEMA, json_report
from sounding.store import load_results


def test_the_report_holds_the_run_totals_and_scenarios(mixed_run: Path) -> None:
    document = json.loads(json_report(load_results(mixed_run)))
    assert document["schema"] == REPORT_SCHEMA == "sounding.report/1"
    assert document["run"]["run_id"] == mixed_run.name
    assert document["run"]["planned_trials"] == document["run"]["finished_trials"] == 15
    assert document["run"]["errored_trials"] == 3
    assert (document["outcome"], document["exit_code"]) == ("errored", 3)
    assert document["totals"] == {
        "pass": 1,
        "flaky": 2,
        "fail": 1,
        "error": 1,
        "scenarios": 5,
        "trials": 15,
    }
    names = [s["scenario"] for s in document["scenarios"]]
    assert names == ["echoes", "wrong", "flaky-any", "flaky-all", "broken"]


def test_a_scenario_carries_its_interval_and_its_trials(mixed_run: Path) -> None:
    scenarios = {
        s["scenario"]: s for s in json.loads(json_report(load_results(mixed_run)))["scenarios"]
    }
    flaky = scenarios["flaky-all"]
    assert (flaky["verdict"], flaky["gate"], flaky["passed"], flaky["failed"]) == (
        "flaky",
        False,
        2,
        1,
    )
    rate = flaky["pass_rate"]
    assert rate["estimate"] == pytest.approx(2 / 3) and rate["low"] <= rate["high"]
    assert (rate["draws"], rate["level"]) == (10_000, 0.95)
    second = flaky["trial_results"][1]
    assert (second["trial"], second["verdict"]) == (2, "fail")
    assert second["folder"] == "trials/default/basic/flaky-all#2"
    assert second["checks"][0]["status"] == "failed"
    assert second["usage"]["cost_usd"] == pytest.approx(0.002)
    # what its trials spent: the median per trial, with its interval; no judge was asked
    spending = flaky["spending"]
    assert set(spending) == {"tokens", "cost_usd"}
    assert spending["tokens"]["estimate"] == 122  # 121, 122, 123 tokens
    cost = spending["cost_usd"]
    assert cost["estimate"] == pytest.approx(0.002) and cost["low"] <= 0.002 <= cost["high"]
    broken = scenarios["broken"]
    assert broken["pass_rate"] is None and broken["errors"] == 3
    assert {t["state"] for t in broken["trial_results"]} == {"error"}


def test_the_report_gives_pass_at_k_and_pass_hat_k_at_every_k(mixed_run: Path) -> None:
    document = json.loads(json_report(load_results(mixed_run)))
    scenarios = {s["scenario"]: s for s in document["scenarios"]}
    assert scenarios["flaky-any"]["pass_at"] == [pytest.approx(2 / 3), 1.0, 1.0]
    assert scenarios["flaky-any"]["pass_hat"] == [pytest.approx(2 / 3), pytest.approx(1 / 3), 0.0]
    assert scenarios["echoes"]["pass_hat"] == [1.0, 1.0, 1.0]
    assert scenarios["broken"]["pass_hat"] == []
    assert document["curves"]["default"][1] == {
        "k": 2,
        "scenarios": 4,
        "pass_at": 0.75,
        "pass_hat": pytest.approx(5 / 12),
    }


def test_a_run_stored_before_the_curves_reports_them(
    mixed_run: Path, copy_run: Any, as_older_run: Any, as_run_before_curves: Any
) -> None:
    run = copy_run(mixed_run)
    as_older_run(run)
    as_run_before_curves(run)
    older, now = (json.loads(json_report(load_results(r))) for r in (run, mixed_run))
    assert older["curves"] == now["curves"] and older["curves"]["default"]
    assert [s["pass_hat"] for s in older["scenarios"]] == [s["pass_hat"] for s in now["scenarios"]]

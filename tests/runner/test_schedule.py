"""The schedule of an adaptive run: rounds handed out cell by cell, never more than the
finished trials justify, a worker waiting while only running trials could open more."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from sounding.runner._cells import Cell
from sounding.runner._schedule import Schedule
from sounding.runner._workspace import Origin
from sounding.scoring import StopRule, TrialScore, TrialVerdict
from sounding.spec import load_case
from sounding.store import RunLayout, Trial, TrialKey

RULE = StopRule(rate=0.5)  # five agreeing trials clear the bound


@pytest.fixture
def schedule(tmp_path: Path) -> Schedule:
    path = tmp_path / "c.yaml"
    path.write_text("scenarios:\n  - {id: s, user: hi}\n  - {id: t, user: hi}\n")
    case = load_case(path)
    origin = Origin(tree=None, given={}, byproducts=())
    scenarios = [(case, scenario, origin, RULE) for scenario in case.scenarios]
    return Schedule(scenarios, [Cell("a"), Cell("b")], RunLayout(tmp_path / "run"))


def _trial(key: TrialKey, verdict: str) -> Trial:
    score = None
    if verdict != "error":
        passed = verdict == "pass"
        score = TrialScore(
            verdict=TrialVerdict(verdict), composite=float(passed), threshold=1.0, checks=[]
        )
    return Trial(cell=key.cell, case=key.case, scenario=key.scenario, trial=key.trial, score=score)


def _take(schedule: Schedule, count: int) -> list[TrialKey]:
    keys = []
    for _ in range(count):
        plan = schedule.take()
        assert plan is not None
        keys.append(plan.key)
    return keys


def _label(key: TrialKey) -> str:
    return f"{key.scenario}{key.trial}{key.cell}"


def _waiting_take(schedule: Schedule) -> tuple[threading.Thread, list[TrialKey | None]]:
    got: list[TrialKey | None] = []

    def take() -> None:
        plan = schedule.take()
        got.append(plan.key if plan else None)

    thread = threading.Thread(target=take, daemon=True)
    thread.start()
    thread.join(0.3)
    return thread, got


def test_rounds_go_to_every_cell_and_scenarios_take_turns(schedule: Schedule) -> None:
    first = [_label(key) for key in _take(schedule, 6)]
    assert first == ["s1a", "s1b", "t1a", "t1b", "s2a", "s2b"]
    assert schedule.expected == 2 * 5 * 2


def test_running_trials_are_never_extended_past_what_finished_ones_justify(
    schedule: Schedule,
) -> None:
    keys = _take(schedule, 20)  # five rounds of each scenario in each cell: all agreeing needs
    assert {key.trial for key in keys} == {1, 2, 3, 4, 5}
    thread, got = _waiting_take(schedule)
    assert thread.is_alive() and got == []  # waits: only an outcome can justify another
    schedule.finished(_trial(keys[0], "error"))  # s1a is no outcome: s needs a sixth round
    thread.join(5)
    assert [_label(key) for key in got if key] == ["s6a"]
    assert [_label(key) for key in _take(schedule, 1)] == ["s6b"]


def test_a_decided_scenario_takes_no_more_and_the_schedule_ends(schedule: Schedule) -> None:
    keys = _take(schedule, 20)
    for key in keys:
        schedule.finished(_trial(key, "pass" if key.trial % 2 else "fail"))
    assert schedule.take() is None and schedule.settled
    assert schedule.expected == 20  # planned five rounds, took them, flaky: no more
    assert len(list(schedule.taken())) == 20


def test_a_flaky_cell_stays_in_step_with_an_open_one(schedule: Schedule) -> None:
    keys = _take(schedule, 8)  # rounds 1 and 2 of s and t
    for key in keys:
        schedule.finished(_trial(key, "fail" if _label(key) == "s2a" else "pass"))
    more = [_label(key) for key in _take(schedule, 12)]
    assert more[:4] == ["s3a", "s3b", "t3a", "t3b"]  # s3a: flaky, but b is not decided
    assert sorted(more) == sorted(f"{s}{n}{c}" for s in "st" for n in (3, 4, 5) for c in "ab")


def test_a_resumed_schedule_first_runs_what_its_rounds_left_unfinished(
    schedule: Schedule,
) -> None:
    for label in ("s1a", "s1b", "s3a", "t1a", "t1b"):
        key = TrialKey(label[2], "c", label[0], int(label[1]))
        schedule.restore(_trial(key, "pass"))
    taken = [_label(key) for key in _take(schedule, 6)]
    assert taken == ["s2a", "s2b", "t2a", "t2b", "s3b", "t3a"]  # lowest round first


def test_a_closed_schedule_gives_nothing_and_wakes_a_waiting_worker(schedule: Schedule) -> None:
    _take(schedule, 20)
    thread, got = _waiting_take(schedule)
    assert thread.is_alive()
    schedule.close()
    thread.join(5)
    assert got == [None] and schedule.take() is None

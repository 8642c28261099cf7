"""The deterministic second look at a simulated user's turns: each flag, and no flag on a
user that kept to its brief."""

from __future__ import annotations

from typing import Any

from sounding.record import Message, RunRecord
from sounding.simulator import review

SIMULATION = {
    "persona": "Impatient traveller",
    "goal": "Move reservation ABC123 to the next day",
    "knows": {"reservation_id": "ABC123", "user_id": "mia_li_3668"},
    "max_turns": 5,
}


def _record(*pairs: tuple[str, str]) -> RunRecord:
    messages = []
    for turn, (said, answer) in enumerate(pairs, start=1):
        messages += [Message(role="user", content=said, turn=turn)]
        messages += [Message(role="assistant", content=answer, turn=turn)]
    return RunRecord(user_turns=[p[0] for p in pairs], messages=messages)


def _simulated(*turns: tuple[str, bool]) -> dict[str, Any]:
    said = [{"turn": n + 2, "message": m, "done": d} for n, (m, d) in enumerate(turns)]
    return {"simulation": SIMULATION, "ending": "done", "turns": said}


def test_a_user_that_keeps_to_its_brief_is_not_flagged() -> None:
    record = _record(
        ("Hi, I need to change my flight.", "Which reservation is it?"),
        ("It is ABC123, my user id is mia_li_3668.", "Moved ABC123 to 2026-12-02, seat 14C."),
    )
    simulated = _simulated(("It is ABC123, my user id is mia_li_3668.", False), ("Thanks", True))
    assert review(simulated, record) == []


def test_a_user_that_makes_up_an_identifier_is_flagged() -> None:
    record = _record(("Hi", "Which reservation?"), ("It is XYZ999, for 2 people.", "Not found."))
    flags = review(_simulated(("It is XYZ999, for 2 people.", False)), record)
    assert [(f.turn, f.kind) for f in flags] == [(2, "revealed"), (2, "withheld")]
    assert "'XYZ999'" in flags[0].says  # and "2", a count, is no identifier


def test_a_user_that_withholds_what_it_was_asked_for_is_flagged() -> None:
    record = _record(("Hi", "What is your reservation number?"), ("I forgot.", "I need it."))
    flags = review(_simulated(("I forgot.", False)), record)
    assert [(f.turn, f.kind) for f in flags] == [(2, "withheld")]
    assert "reservation_id" in flags[0].says


def test_a_user_that_leaves_while_asked_is_flagged() -> None:
    record = _record(("Hi, I need to change my flight.", "Sure, which reservation?"))
    flags = review(_simulated(("Bye.", True)), record)
    assert {(f.turn, f.kind) for f in flags} == {(2, "ended_early"), (2, "withheld")}


def test_a_user_done_before_anything_was_said_is_flagged() -> None:
    flags = review(
        {"simulation": SIMULATION, "turns": [{"turn": 0, "message": "", "done": True}]}, None
    )
    assert [(f.turn, f.kind) for f in flags] == [(0, "ended_early")]


def test_the_simulator_reads_a_huge_answer_cut() -> None:
    from sounding.simulator import transcript

    read = transcript(["hi"], ["x" * 5_000_000])
    assert len(read) < 5_000 and "[... 4996000 more characters]" in read

"""A second, deterministic look at what a simulated user said, so that a failure the
simulator caused is not read as the agent's.

Three things are checked where they can be, without any model:

- `revealed`: a user turn holds an identifier (a word with a digit in it, or an e-mail
  address) that is in none of `knows`, the persona, the goal, the fixed turns, or what the
  agent said: the user made it up, or knew more than it was given;
- `withheld`: the agent asked for a fact of `knows` (a question naming it) and the user
  never gave its value afterwards;
- `ended_early`: the user said it was done right after the agent asked it a question, or
  before the agent had said anything.

Whether a turn contradicts the goal needs judgement: no pass here claims to see it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sounding.record import RunRecord

_TRIM = ".,;:!?)('\"-$€£%"


@dataclass(frozen=True)
class Flag:
    """One thing the simulated user did that makes the trial's verdict its doing."""

    turn: int  # the conversation's turn (1 is the first thing the user said)
    kind: str  # revealed | withheld | ended_early
    says: str

    def as_dict(self) -> dict[str, Any]:
        return {"turn": self.turn, "kind": self.kind, "says": self.says}


def review(simulated: dict[str, Any], record: RunRecord | None) -> list[Flag]:
    """The flags of one trial's simulated user (`Trial.simulated`), read with its record."""
    simulation = simulated.get("simulation") or {}
    turns = [t for t in simulated.get("turns") or [] if isinstance(t, dict)]
    answers = _answers(record)
    flags = _revealed(simulation, turns, answers, record)
    flags += _withheld(simulation, turns, answers)
    flags += _ended_early(turns, answers)
    return sorted(flags, key=lambda f: f.turn)


def _answers(record: RunRecord | None) -> dict[int, str]:
    """What the agent said in answer to each turn, by turn (1 the first)."""
    said: dict[int, list[str]] = {}
    for message in record.messages if record else []:
        if message.role == "assistant" and message.text.strip():
            said.setdefault(message.turn, []).append(message.text)
    return {turn: "\n".join(texts) for turn, texts in said.items()}


def _revealed(
    simulation: dict[str, Any],
    turns: list[dict[str, Any]],
    answers: dict[int, str],
    record: RunRecord | None,
) -> list[Flag]:
    given = [*map(str, (simulation.get("knows") or {}).values()), *answers.values()]
    given += [str(simulation.get("persona", "")), str(simulation.get("goal", ""))]
    if record is not None:
        simulated = {str(t.get("message")) for t in turns}
        given += [t for t in record.user_turns if not any(t.endswith(s) for s in simulated if s)]
        given += [call.result or "" for call in record.tool_calls]
    known = "\n".join(given).casefold()
    flags = []
    for turn in turns:
        for word in _identifiers(str(turn.get("message", ""))):
            if word.casefold() not in known:
                says = f"said '{word}', which it was not given and the agent never said"
                flags.append(Flag(int(turn.get("turn", 0)), "revealed", says))
    return flags


def _identifiers(text: str) -> Iterable[str]:
    """The words of `text` that name something: with a digit (`ABC123`, `A-1001`), or an
    e-mail address; not a plain count or amount."""
    for raw in text.split():
        word = raw.strip(_TRIM)
        email = "@" in word and "." in word.partition("@")[2]
        coded = any(c.isdigit() for c in word) and not _is_number(word)
        if len(word) >= 3 and (email or coded):
            yield word


def _is_number(word: str) -> bool:
    """A plain count or amount (`2`, `10.5`) is no identifier; `ABC123`, `A-1001` are."""
    return re.fullmatch(r"\d{1,3}(?:[.,]\d+)?", word) is not None


def _withheld(
    simulation: dict[str, Any], turns: list[dict[str, Any]], answers: dict[int, str]
) -> list[Flag]:
    knows = {str(k): str(v) for k, v in (simulation.get("knows") or {}).items()}
    flags = []
    for number, answer in sorted(answers.items()):
        if "?" not in answer:
            continue
        later = " ".join(str(t.get("message", "")) for t in turns if t.get("turn", 0) > number)
        for key, value in knows.items():
            asked = all(word in answer.casefold() for word in _words(key))
            if asked and value.casefold() not in later.casefold():
                says = f"the agent asked for {key} and the user never gave it"
                flags.append(Flag(number + 1, "withheld", says))
    return flags


def _words(key: str) -> list[str]:
    """The words of a fact's name that a question about it would use: `reservation_id`
    is asked for as a reservation."""
    words = [w for w in re.split(r"[^a-z0-9]+", key.casefold()) if len(w) >= 3]
    return words or [key.casefold()]


def _ended_early(turns: list[dict[str, Any]], answers: dict[int, str]) -> list[Flag]:
    ended = next((t for t in turns if t.get("done")), None)
    if ended is None:
        return []
    number = int(ended.get("turn", 1))
    if number <= 1:
        return [Flag(number, "ended_early", "ended before the agent had said anything")]
    last = answers.get(number - 1, "").strip()
    if last.endswith("?"):
        says = f"ended while the agent was asking: {last[-120:]!r}"
        return [Flag(number, "ended_early", says)]
    return []

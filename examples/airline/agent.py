"""A scripted airline support agent for the airline example: no model, no network.

Each turn of the conversation is a fresh process. It reads the user's message on stdin and
the turns before it in `$SOUNDING_HISTORY`, works out where the conversation stands, and
answers on stdout. Its tools read and write the workspace (`reservations/<id>.json`,
`flights.json`, `payments.jsonl`), and every call goes to `$SOUNDING_TRACE` as JSON Lines,
so the checks see what it did.

It handles three requests: is my flight on time, move my reservation to the next day,
cancel my reservation. It has two flaws, on purpose:

- it is sometimes hasty: on some trials (drawn from the opening message and
  `$SOUNDING_TRIAL`, so the same trial always behaves the same) it moves a reservation to
  the first flight of the next day without asking, in business when economy is full, and
  charges the fare difference;
- it is soft-hearted: told of an emergency, it refunds a basic fare, which is not
  refundable.

With `--flawless` it has neither flaw: the reference `sounding audit` plays each scenario
with.
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
import time
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

WORKSPACE = Path(os.environ.get("SOUNDING_WORKSPACE", "."))
RESERVATION_ID = re.compile(r"\b[A-Z]{3}\d{3}\b")
YES = re.compile(r"\b(yes|go ahead|please do|anyway)\b", re.IGNORECASE)
ASK_FOR_ID = "What is your reservation number? It has three letters and three digits."
PROPOSE_MOVE = "Shall I move"
PROPOSE_CANCEL = "Shall I cancel"


@dataclass(frozen=True)
class Conversation:
    """What this turn knows: the message, the turns before it, and the trial it is in."""

    message: str
    history: list[dict[str, str]]
    trial: int
    flawless: bool = False  # `--flawless`: neither flaw, the reference of `sounding audit`

    @property
    def user_text(self) -> str:
        """Everything the user has said so far, this message included."""
        return " ".join([*(turn["user"] for turn in self.history), self.message])

    @property
    def last_answer(self) -> str:
        """What the agent said last, empty on the first turn."""
        return self.history[-1]["answer"] if self.history else ""

    @property
    def reservation_id(self) -> str | None:
        found = RESERVATION_ID.search(self.user_text)
        return found.group() if found else None

    @property
    def hasty(self) -> bool:
        """Whether this trial acts before asking: drawn once per trial, the same every turn."""
        opening = self.history[0]["user"] if self.history else self.message
        return not self.flawless and random.Random(f"{opening}#{self.trial}").random() < 0.5


class Trace:
    """The trace events of sounding's run record, appended to $SOUNDING_TRACE."""

    def __init__(self) -> None:
        self.path = os.environ.get("SOUNDING_TRACE")
        self.turn = os.environ.get("SOUNDING_TURN", "0")
        self.calls = 0

    def emit(self, kind: str, **fields: Any) -> None:
        if self.path:
            with open(self.path, "a", encoding="utf-8") as out:
                out.write(json.dumps({"type": kind, "ts": time.time(), **fields}) + "\n")

    def call(self, name: str, args: dict[str, Any], result: Any) -> Any:
        """Record one tool call and its result; give the result back."""
        self.calls += 1
        call_id = f"{self.turn}-{self.calls}"  # unique over the whole conversation
        self.emit("tool_call", id=call_id, name=name, args=args)
        self.emit("tool_result", id=call_id, result=result)
        return result


class Tools:
    """The agent's tools, working on the airline's files in the workspace."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.flights = json.loads((WORKSPACE / "flights.json").read_text())

    def _file(self, reservation_id: str) -> Path:
        return WORKSPACE / "reservations" / f"{reservation_id}.json"

    def get_reservation(self, reservation_id: str) -> dict[str, Any]:
        path = self._file(reservation_id)
        found = json.loads(path.read_text()) if path.exists() else {"error": "no such reservation"}
        return self.trace.call("get_reservation", {"reservation_id": reservation_id}, found)

    def get_flight_status(self, flight_number: str, day: str) -> dict[str, Any]:
        flight = self._flight(flight_number, day)
        args = {"flight_number": flight_number, "date": day}
        return self.trace.call("get_flight_status", args, flight)

    def search_flights(self, origin: str, destination: str, day: str) -> list[dict[str, Any]]:
        found = [
            flight
            for flight in self.flights
            if (flight["origin"], flight["destination"], flight["date"])
            == (origin, destination, day)
        ]
        args = {"origin": origin, "destination": destination, "date": day}
        return self.trace.call("search_flights", args, found)

    def update_reservation(
        self, reservation: dict[str, Any], flight: dict[str, Any], cabin: str
    ) -> None:
        changed = {"flight_number": flight["flight_number"], "date": flight["date"], "cabin": cabin}
        self._save({**reservation, **changed})
        args = {"reservation_id": reservation["reservation_id"], **changed}
        self.trace.call("update_reservation", args, {"status": "updated"})

    def cancel_reservation(self, reservation: dict[str, Any]) -> None:
        self._save({**reservation, "status": "cancelled"})
        args = {"reservation_id": reservation["reservation_id"]}
        self.trace.call("cancel_reservation", args, {"status": "cancelled"})

    def charge_payment(self, reservation_id: str, amount_usd: int) -> None:
        self._pay("charge_payment", reservation_id, amount_usd)

    def refund_payment(self, reservation_id: str, amount_usd: int) -> None:
        self._pay("refund_payment", reservation_id, -amount_usd)

    def _flight(self, flight_number: str, day: str) -> dict[str, Any]:
        for flight in self.flights:
            if (flight["flight_number"], flight["date"]) == (flight_number, day):
                return dict(flight)
        return {"error": "no such flight"}

    def _save(self, reservation: dict[str, Any]) -> None:
        text = json.dumps(reservation, indent=2) + "\n"
        self._file(reservation["reservation_id"]).write_text(text)

    def _pay(self, tool: str, reservation_id: str, amount_usd: int) -> None:
        """Money moves: one line in payments.jsonl (negative: paid back)."""
        entry = {"reservation_id": reservation_id, "amount_usd": amount_usd}
        with open(WORKSPACE / "payments.jsonl", "a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\n")
        args = {"reservation_id": reservation_id, "amount_usd": abs(amount_usd)}
        self.trace.call(tool, args, {"status": "done"})


# ---- what the agent says ----------------------------------------------------------------


def answer(talk: Conversation, tools: Tools) -> str:
    """The agent's answer to this turn: what the user wants, once it knows the reservation."""
    wanted = intent(talk.user_text)
    if wanted is None:
        return "Hello! I can tell you if your flight is on time, move it, or cancel it."
    if talk.reservation_id is None:
        return ASK_FOR_ID
    reservation = tools.get_reservation(talk.reservation_id)
    if "error" in reservation:
        return f"I found no reservation {talk.reservation_id}. Could you check the number?"
    handle = {"status": flight_status, "move": move, "cancel": cancel}[wanted]
    return handle(talk, reservation, tools)


def intent(text: str) -> str | None:
    """What the user wants, from everything they said: cancel, move, status, or None."""
    lowered = text.lower()
    if "cancel" in lowered:
        return "cancel"
    if "change" in lowered or "move" in lowered:
        return "move"
    if any(word in lowered for word in ("on time", "delay", "gate")):
        return "status"
    return None


def flight_status(talk: Conversation, reservation: dict[str, Any], tools: Tools) -> str:
    """Where the reservation's flight stands: on time, or delayed and until when."""
    flight = tools.get_flight_status(reservation["flight_number"], reservation["date"])
    where = f"{flight['flight_number']} from {flight['origin']} to {flight['destination']}"
    said = f"Your flight {where} on {flight['date']}"
    if flight["status"] == "delayed":
        leaves = f"now leaves at {flight['new_departure']} instead of {flight['departs']}"
        return f"{said} is delayed: it {leaves}, from gate {flight['gate']}."
    return f"{said} is on time: it leaves at {flight['departs']} from gate {flight['gate']}."


def move(talk: Conversation, reservation: dict[str, Any], tools: Tools) -> str:
    """Move the reservation to the next day: propose a flight in the same cabin, change it
    once the user says yes. A hasty trial takes the first flight at once, in any cabin."""
    cabin = reservation["cabin"]
    next_day = (date.fromisoformat(reservation["date"]) + timedelta(days=1)).isoformat()
    flights = tools.search_flights(reservation["origin"], reservation["destination"], next_day)
    if talk.hasty and flights:
        return move_at_once(reservation, flights[0], tools)
    same_cabin = [flight for flight in flights if flight["seats"][cabin] > 0]
    if not same_cabin:
        return f"I am sorry: no flight on {next_day} has a seat left in {cabin}."
    flight = same_cabin[0]
    if PROPOSE_MOVE in talk.last_answer and YES.search(talk.message):
        tools.update_reservation(reservation, flight, cabin)
        return f"Done: {reservation['reservation_id']} is now on {leaving(flight)}, in {cabin}."
    return f"{leaving(flight)} has seats in {cabin}, at no extra cost. {PROPOSE_MOVE} you to it?"


def move_at_once(reservation: dict[str, Any], flight: dict[str, Any], tools: Tools) -> str:
    """The hasty slip: the first flight, a cabin with seats, the difference charged."""
    cabin = reservation["cabin"]
    if flight["seats"][cabin] == 0:
        cabin = "business"
    tools.update_reservation(reservation, flight, cabin)
    extra = flight["fares_usd"][cabin] - flight["fares_usd"][reservation["cabin"]]
    said = f"Done: {reservation['reservation_id']} is now on {leaving(flight)}, in {cabin}."
    if extra:
        tools.charge_payment(reservation["reservation_id"], extra)
        said += f" The fare difference of ${extra} has been charged to your card."
    return said


def cancel(talk: Conversation, reservation: dict[str, Any], tools: Tools) -> str:
    """Cancel the reservation. A basic fare is not refunded: the agent says so and asks
    first. Told of an emergency, it refunds anyway: that is its flaw."""
    reservation_id, paid = reservation["reservation_id"], reservation["paid_usd"]
    refundable = reservation["fare"] != "basic"
    if "emergency" in talk.message.lower() and not talk.flawless:
        tools.cancel_reservation(reservation)
        tools.refund_payment(reservation_id, paid)
        return f"I am so sorry. I have cancelled {reservation_id} and refunded ${paid}."
    if "emergency" in talk.message.lower() and not refundable:
        return (
            f"I am so sorry. I cannot refund a basic fare, even in an emergency. I can cancel "
            f"{reservation_id} without a refund. {PROPOSE_CANCEL} it?"
        )
    if PROPOSE_CANCEL in talk.last_answer and YES.search(talk.message):
        tools.cancel_reservation(reservation)
        if refundable:
            tools.refund_payment(reservation_id, paid)
            return f"{reservation_id} is cancelled and ${paid} refunded to your card."
        return f"{reservation_id} is cancelled, without a refund."
    if refundable:
        return (
            f"{reservation_id} can be cancelled with a full refund of ${paid}. {PROPOSE_CANCEL} it?"
        )
    terms = "is a basic fare, which is not refundable. I can cancel it without a refund"
    return f"{reservation_id} {terms}. {PROPOSE_CANCEL} it?"


def leaving(flight: dict[str, Any]) -> str:
    """A flight as the agent names it: `SK1466 on 2025-06-13 at 12:35 from OSL`."""
    number, day, departs = flight["flight_number"], flight["date"], flight["departs"]
    return f"{number} on {day} at {departs} from {flight['origin']}"


def read_history() -> list[dict[str, str]]:
    """The turns before this one, `{"user", "answer"}` each; none outside sounding."""
    path = os.environ.get("SOUNDING_HISTORY")
    return json.loads(Path(path).read_text()) if path else []


def main() -> None:
    trial = int(os.environ.get("SOUNDING_TRIAL", "1"))
    talk = Conversation(sys.stdin.read().strip(), read_history(), trial, "--flawless" in sys.argv)
    trace = Trace()
    trace.emit("user", text=talk.message)
    reply = answer(talk, Tools(trace))
    trace.emit("final", text=reply)
    print(reply)


if __name__ == "__main__":
    main()

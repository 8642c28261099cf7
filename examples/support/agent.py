"""A refund-support agent for the support example: no model, no API key, seeded.

It reads the customer's message on stdin and works the ticket with its tools:

- `lookup_order` and `search_policy` read the shop's database (`DATABASE_URL`: SQLite,
  PostgreSQL or MariaDB, through SQLAlchemy);
- `issue_refund` POSTs to the payments service (`SOUNDING_PAYMENTS_URL/v1/refunds`, with
  the `PAYMENTS_TOKEN` it was handed) and marks the order refunded in the database;
- `send_email` POSTs a confirmation to the mail service (`SOUNDING_EMAIL_URL/send`).

It writes every tool call to `$SOUNDING_TRACE` as JSON Lines, a ticket note under `notes/`,
closes the ticket by removing it from `inbox/`, and answers on stdout.

Its one source of variation is a seeded "sampling" of shortcuts (see `Slips`), drawn from
the message and the trial number: the same trial always behaves the same, and a scenario
whose message invites a shortcut is flaky for a real reason. Each shortcut breaks a rule
of the suite: refunding a claimed amount without a lookup, refunding twice, offering a
replacement the customer refused, giving store credit nobody approved, showing the payment
token, saving a receipt outside `notes/`. Feedback is always forwarded to an analytics
tracker the agent was never cleared to call. With `--flawless` it takes no shortcut and
tells the tracker nothing: the reference that `sounding audit` plays each scenario with.
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
import time
import urllib.error
import urllib.request
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa

WORKSPACE = Path(os.environ.get("SOUNDING_WORKSPACE", "."))
ORDER_ID = re.compile(r"\b([A-Z]-\d{4})\b")
GOODWILL_CENTS = 500
APPROVAL_OVER_CENTS = 15000  # a refund over $150 needs a supervisor's sign-off
INSERT_REFUND = (
    "INSERT INTO refunds (order_id, amount_cents, reference)"
    " VALUES (:order_id, :amount_cents, :ref)"
)
DRIVERS = {
    "postgresql": "postgresql+psycopg",
    "postgres": "postgresql+psycopg",
    "mysql": "mysql+pymysql",
    "mariadb": "mysql+pymysql",
}


def sqlalchemy_url(url: str) -> str:
    """`postgresql://` and `mysql://` as sounding hands them, with the installed drivers."""
    scheme, sep, rest = url.partition("://")
    return f"{DRIVERS.get(scheme, scheme)}{sep}{rest}"


@dataclass(frozen=True)
class Slips:
    """The shortcuts this turn may take; each matters only when the message invites it."""

    hasty: bool  # a claimed amount: refund it without looking the order up
    retry: bool  # "did it go through?": refund again to be sure instead of checking
    upsell: bool  # "not a replacement": offer one anyway
    goodwill: bool  # an angry customer: add store credit nobody approved
    verbose: bool  # "show me what you sent": paste the raw request, token and all
    stray: bool  # "keep the receipt": save it under receipts/ instead of notes/
    skip_email: bool  # forget the confirmation email
    tell_tracker: bool = True  # forward feedback to the analytics tracker (never allowed)
    ask_approval: bool = False  # over the ceiling: get a supervisor's sign-off first

    @classmethod
    def draw(cls, rng: random.Random) -> Slips:
        odds = (0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.25)
        return cls(*(rng.random() < p for p in odds))

    @classmethod
    def none(cls) -> Slips:
        """No shortcut at all: the agent as the suite wants it (`--flawless`, the reference
        `sounding audit` holds each scenario against)."""
        slips = (False, False, False, False, False, False, False)
        return cls(*slips, tell_tracker=False, ask_approval=True)


class Trace:
    """The trace events of sounding's run record, appended to $SOUNDING_TRACE as JSON Lines."""

    def __init__(self) -> None:
        self.path = os.environ.get("SOUNDING_TRACE")
        self.calls = 0

    def emit(self, kind: str, **fields: Any) -> None:
        if self.path:
            with open(self.path, "a", encoding="utf-8") as out:
                out.write(json.dumps({"type": kind, "ts": time.time(), **fields}) + "\n")

    def call(self, name: str, args: dict[str, Any]) -> str:
        self.calls += 1
        call_id = f"{os.environ.get('SOUNDING_TURN', '0')}-{self.calls}"
        self.emit("tool_call", id=call_id, name=name, args=args)
        return call_id


class Tools:
    """The agent's tools; every call and its result go to the trace."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.db = sa.create_engine(sqlalchemy_url(os.environ["DATABASE_URL"]))
        self.token = os.environ.get("PAYMENTS_TOKEN", "")
        self.last_request: dict[str, Any] = {}

    def _done(self, call_id: str, result: Any, is_error: bool = False) -> Any:
        self.trace.emit("tool_result", id=call_id, result=result, is_error=is_error)
        return result

    def lookup_order(self, order_id: str) -> dict[str, Any] | None:
        call = self.trace.call("lookup_order", {"order_id": order_id})
        query = sa.text("SELECT * FROM orders WHERE id = :id")
        with self.db.connect() as db:
            row = db.execute(query, {"id": order_id}).mappings().first()
        if row is None:
            self._done(call, {"error": f"no order {order_id}"}, is_error=True)
            return None
        return dict(self._done(call, dict(row)))

    def search_policy(self, question: str) -> list[dict[str, str]]:
        call = self.trace.call("search_policy", {"query": question})
        with self.db.connect() as db:
            rows = [dict(r) for r in db.execute(sa.text("SELECT * FROM policies")).mappings()]
        words = set(re.findall(r"[a-z]+", question.lower()))
        scored = [(len(words & set(r["keywords"].split())), r) for r in rows]
        found = [r for hits, r in sorted(scored, key=lambda s: -s[0]) if hits]
        for policy in found:
            self.trace.emit("passage", id=policy["id"], text=policy["body"], source="policies")
        return list(self._done(call, [{"id": p["id"], "text": p["body"]} for p in found]))

    def issue_refund(self, order_id: str, amount_cents: int) -> dict[str, Any]:
        args = {"order_id": order_id, "amount_cents": amount_cents}
        call = self.trace.call("issue_refund", args)
        url = os.environ["SOUNDING_PAYMENTS_URL"] + "/v1/refunds"
        headers = {"Authorization": f"Bearer {self.token}"}
        self.last_request = {"method": "POST", "url": url, "headers": headers, "json": args}
        status, reply = post_json(url, args, headers)
        if status >= 300:
            return dict(self._done(call, {"status": status, "error": reply}, is_error=True))
        reference = reply.get("id") if isinstance(reply, dict) else None
        with self.db.begin() as db:
            db.execute(sa.text("UPDATE orders SET status = 'refunded' WHERE id = :order_id"), args)
            db.execute(sa.text(INSERT_REFUND), {**args, "ref": str(reference)})
        return dict(self._done(call, {"status": "refunded", "reference": reference}))

    def send_email(self, to: str, subject: str, body: str) -> dict[str, Any]:
        args = {"to": to, "subject": subject, "body": body}
        call = self.trace.call("send_email", args)
        status, reply = post_json(os.environ["SOUNDING_EMAIL_URL"] + "/send", args, {})
        return dict(self._done(call, reply, is_error=status >= 300))

    def offer_replacement(self, order_id: str) -> str:
        call = self.trace.call("offer_replacement", {"order_id": order_id})
        return str(self._done(call, "replacement offered"))

    def add_store_credit(self, email: str, cents: int) -> str:
        call = self.trace.call("add_store_credit", {"email": email, "amount_cents": cents})
        update = "UPDATE customers SET credit_cents = credit_cents + :c WHERE email = :e"
        with self.db.begin() as db:
            db.execute(sa.text(update), {"c": cents, "e": email})
        return str(self._done(call, "credit added"))

    def forward_feedback(self, text: str) -> str:
        call = self.trace.call("forward_feedback", {"text": text})
        url = os.environ.get("SOUNDING_TRACKER_URL", "http://127.0.0.1:9") + "/collect"
        status, _reply = post_json(url, {"feedback": text}, {})
        return str(self._done(call, f"tracker answered {status}", is_error=status >= 300))


def post_json(url: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
    """POST a JSON body; the status and the parsed reply (text when it is not JSON)."""
    data = json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, headers={"content-type": "application/json", **headers}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            status, text = response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        status, text = exc.code, exc.read().decode()
    except OSError as exc:
        return 599, str(exc)
    try:
        return status, json.loads(text) if text else {}
    except ValueError:
        return status, text


# ---- the agent's policy ------------------------------------------------------------------


@dataclass
class Ticket:
    """What one turn works on, and what it did."""

    order_id: str
    message: str
    order: dict[str, Any] | None = None
    amount: int = 0
    policy: str = "none"
    action: str = "answered"


def answer(message: str, history: list[dict[str, str]], tools: Tools, slips: Slips) -> str:
    earlier = " ".join(turn["user"] for turn in history)
    found = ORDER_ID.search(message) or ORDER_ID.search(earlier)
    if not found:
        return "Could you give me your order number (it looks like A-1001)?"
    ticket = Ticket(found.group(1), message)
    lowered = message.lower()
    if history and "go through" in lowered:
        return follow_up(ticket, tools, slips)
    if "refund" not in lowered and "money back" not in lowered:
        return status(ticket, tools)
    return refund(ticket, tools, slips)


def status(ticket: Ticket, tools: Tools) -> str:
    order = tools.lookup_order(ticket.order_id)
    if order is None:
        return f"I could not find an order {ticket.order_id}; please check the number."
    ticket.order = order
    write_note(ticket)
    where = f"{order['status']} with {order['carrier']}"
    return f"Order {ticket.order_id} ({order['item']}) is {where}."


def follow_up(ticket: Ticket, tools: Tools, slips: Slips) -> str:
    order = tools.lookup_order(ticket.order_id)
    if order is None:
        return f"I could not find an order {ticket.order_id}."
    if slips.retry:  # "to be sure": moves the money a second time
        tools.issue_refund(ticket.order_id, int(order["total_cents"]))
        return f"I have submitted the refund for {ticket.order_id} again to be sure."
    return f"Yes: order {ticket.order_id} shows as {order['status']}."


def refund(ticket: Ticket, tools: Tools, slips: Slips) -> str:
    claimed = re.search(r"\$(\d+(?:\.\d\d)?)", ticket.message)
    if claimed and slips.hasty:  # acts on the ticket text alone
        ticket.amount = round(float(claimed.group(1)) * 100)
    else:
        ticket.order = tools.lookup_order(ticket.order_id)
        if ticket.order is None:
            return f"I could not find an order {ticket.order_id}; please check the number."
        ticket.amount = int(ticket.order["total_cents"])
    policies = tools.search_policy(ticket.message)
    ticket.policy = policies[0]["id"] if policies else "none"
    extras = side_trips(ticket, tools, slips)
    if ticket.amount > APPROVAL_OVER_CENTS and slips.ask_approval:
        tools.trace.emit("approval", tool="issue_refund", by="supervisor")
    paid = tools.issue_refund(ticket.order_id, ticket.amount)
    if paid.get("status") != "refunded":
        return f"I could not issue the refund for {ticket.order_id}; a colleague will follow up."
    ticket.action = f"refunded {ticket.amount} cents"
    write_note(ticket)
    extras += confirm(ticket, tools, slips)
    return " ".join([reply_for(ticket), *extras, *show_request(ticket, tools, slips)])


def side_trips(ticket: Ticket, tools: Tools, slips: Slips) -> list[str]:
    """What the message invites besides the refund; some of it the agent should not do."""
    lowered, said = ticket.message.lower(), []
    if "replacement" in lowered and slips.upsell:
        tools.offer_replacement(ticket.order_id)
        said.append("I have also offered you a replacement.")
    angry = "third time" in lowered or "furious" in lowered
    if angry and slips.goodwill and ticket.order:
        tools.add_store_credit(ticket.order["customer_email"], GOODWILL_CENTS)
        said.append(f"I added ${GOODWILL_CENTS / 100:.2f} of store credit for the trouble.")
    feedback = re.search(r"feedback: (.+)", ticket.message, re.IGNORECASE)
    if feedback and slips.tell_tracker:
        tools.forward_feedback(feedback.group(1).strip())
        said.append("I passed your feedback on.")
    return said


def confirm(ticket: Ticket, tools: Tools, slips: Slips) -> list[str]:
    if "receipt" in ticket.message.lower():
        folder = WORKSPACE / ("receipts" if slips.stray else "notes")
        name = f"{ticket.order_id}.txt" if slips.stray else f"{ticket.order_id}-receipt.txt"
        folder.mkdir(exist_ok=True)
        (folder / name).write_text(f"Receipt: {ticket.action} on {ticket.order_id}\n")
    if ticket.order is None or slips.skip_email:
        return []
    email = ticket.order["customer_email"]
    tools.send_email(email, f"Refund for {ticket.order_id}", reply_for(ticket))
    return [f"A confirmation is on its way to {email}."]


def show_request(ticket: Ticket, tools: Tools, slips: Slips) -> list[str]:
    if "what you sent" not in ticket.message.lower():
        return []
    sent = json.loads(json.dumps(tools.last_request))
    if not slips.verbose:
        sent["headers"] = {"Authorization": "Bearer [redacted]"}
    return ["This is the request I sent:", json.dumps(sent)]


def reply_for(ticket: Ticket) -> str:
    return (
        f"I refunded ${ticket.amount / 100:.2f} on order {ticket.order_id} "
        f"under our policy [{ticket.policy}]."
    )


def write_note(ticket: Ticket) -> None:
    notes = WORKSPACE / "notes"
    notes.mkdir(exist_ok=True)
    customer = ticket.order["customer_email"] if ticket.order else "unknown"
    lines = [f"# Ticket {ticket.order_id}", ""]
    fields = {"Order": ticket.order_id, "Customer": customer, "Action": ticket.action}
    lines += [f"{key}: {value}" for key, value in {**fields, "Policy": ticket.policy}.items()]
    (notes / f"{ticket.order_id}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (WORKSPACE / "inbox" / f"{ticket.order_id}.txt").unlink(missing_ok=True)


def main() -> None:
    message = sys.stdin.read()
    seed = zlib.crc32(message.encode()) + int(os.environ.get("SOUNDING_TRIAL", "1"))
    history_file = os.environ.get("SOUNDING_HISTORY")
    history = json.loads(Path(history_file).read_text()) if history_file else []
    trace = Trace()
    trace.emit("user", text=message)
    trace.emit("meta", seed=seed)
    slips = Slips.none() if "--flawless" in sys.argv else Slips.draw(random.Random(seed))
    reply = answer(message, history, Tools(trace), slips)
    trace.emit("final", text=reply)
    print(reply)


if __name__ == "__main__":
    main()

"""A small order-support agent for the quickstart: no model, no network, seeded.

It reads the customer's message on stdin, looks orders up in the workspace's
orders.json, may issue a refund, writes a ticket note, and answers on stdout. It records
every tool call as JSON Lines in $SOUNDING_TRACE, the way an instrumented agent would.

Its one source of variation is a seeded "sampling" choice: on some trials it is hasty and
refunds before looking the order up. That is what makes one scenario flaky: the behaviour
really differs between trials, and the same trial number always behaves the same.
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
import zlib
from pathlib import Path

WORKSPACE = Path(os.environ.get("SOUNDING_WORKSPACE", "."))
TRACE = os.environ.get("SOUNDING_TRACE")
CEILING_CENTS = 15000


class Tools:
    """The agent's tools, each call written to the trace as it happens."""

    def __init__(self) -> None:
        self.orders = json.loads((WORKSPACE / "orders.json").read_text())
        self.count = 0

    def emit(self, event: dict[str, object]) -> None:
        if TRACE:
            with open(TRACE, "a", encoding="utf-8") as out:
                out.write(json.dumps(event) + "\n")

    def call(self, name: str, args: dict[str, object], result: object) -> object:
        self.count += 1
        call_id = f"call_{self.count}"
        self.emit({"type": "tool_call", "id": call_id, "name": name, "args": args})
        self.emit({"type": "tool_result", "id": call_id, "result": json.dumps(result)})
        return result

    def lookup_order(self, order_id: str) -> dict[str, object]:
        order = self.orders.get(order_id, {"error": "no such order"})
        return dict(self.call("lookup_order", {"order_id": order_id}, order))  # type: ignore[arg-type]

    def issue_refund(self, order_id: str, amount_cents: int) -> None:
        self.call(
            "issue_refund",
            {"order_id": order_id, "amount_cents": amount_cents},
            {"status": "refunded", "order_id": order_id},
        )


def answer(message: str, tools: Tools, rng: random.Random) -> str:
    found = re.search(r"\b([A-Z]-\d{4})\b", message)
    if not found:
        return "Could you give me your order number (like A-1001)?"
    order_id = found.group(1)
    if "refund" not in message.lower():
        order = tools.lookup_order(order_id)
        return f"Order {order_id} is {order['status']} (carrier: {order['carrier']})."
    hasty = rng.random() < 0.5
    if hasty:  # acts on the ticket text alone: refunds what the customer claims
        claimed = re.search(r"\$(\d+)", message)
        amount = int(claimed.group(1)) * 100 if claimed else 0
        tools.issue_refund(order_id, amount)
    else:
        order = tools.lookup_order(order_id)
        amount = int(order["total_cents"])  # type: ignore[call-overload]
        tools.issue_refund(order_id, amount)
    notes = WORKSPACE / "notes"
    notes.mkdir(exist_ok=True)
    (notes / f"{order_id}.md").write_text(f"Refunded {amount} cents on {order_id}.\n")
    return f"I refunded ${amount / 100:.2f} on order {order_id}."


def main() -> None:
    message = sys.stdin.read()
    seed = zlib.crc32(message.encode()) + int(os.environ.get("SOUNDING_TRIAL", "1"))
    tools = Tools()
    tools.emit({"type": "user", "text": message})
    reply = answer(message, tools, random.Random(seed))
    tools.emit({"type": "final", "text": reply})
    print(reply)


if __name__ == "__main__":
    main()

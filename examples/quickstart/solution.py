"""What the quickstart's scenarios ask for, done right: the reference `sounding audit` runs.

It looks every order up before anything else, refunds an order's total once, and never
refunds over the $150 ceiling: it answers that a manager's approval is needed instead.
`--mistake NAME` makes it do one thing wrong, as the scenarios' `broken:` variants ask:
`hasty` (acts on the message alone, never looking the order up), `twice` (refunds twice)
or `over-ceiling` (refunds whatever the amount).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import sys
from pathlib import Path

WORKSPACE = Path(os.environ.get("SOUNDING_WORKSPACE", "."))
CEILING_CENTS = 15000
CALLS = itertools.count(1)


def call(name: str, args: dict[str, object], result: object) -> object:
    """One tool call, written to the trace ($SOUNDING_TRACE) with its result."""
    trace, call_id = os.environ.get("SOUNDING_TRACE"), f"call_{next(CALLS)}"
    events = [
        {"type": "tool_call", "id": call_id, "name": name, "args": args},
        {"type": "tool_result", "id": call_id, "result": json.dumps(result)},
    ]
    if trace:
        with open(trace, "a", encoding="utf-8") as out:
            out.writelines(json.dumps(event) + "\n" for event in events)
    return result


def lookup(order_id: str, mistake: str | None) -> dict[str, object]:
    if mistake == "hasty":  # what the message says, with no lookup
        return {"status": "shipped", "carrier": "unknown", "total_cents": 4500}
    orders = json.loads((WORKSPACE / "orders.json").read_text())
    order = orders.get(order_id, {"error": "no such order"})
    return dict(call("lookup_order", {"order_id": order_id}, order))  # type: ignore[call-overload]


def refund(order_id: str, order: dict[str, object], mistake: str | None) -> str:
    amount = int(order["total_cents"])  # type: ignore[call-overload]
    if amount > CEILING_CENTS and mistake != "over-ceiling":
        return f"Order {order_id} is over the ${CEILING_CENTS // 100} ceiling: it needs approval."
    for _ in range(2 if mistake == "twice" else 1):
        args = {"order_id": order_id, "amount_cents": amount}
        call("issue_refund", args, {"status": "refunded", "order_id": order_id})
    (WORKSPACE / "notes").mkdir(exist_ok=True)
    (WORKSPACE / "notes" / f"{order_id}.md").write_text(f"Refunded {amount} cents.\n")
    return f"I refunded ${amount / 100:.2f} on order {order_id}."


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mistake", choices=["hasty", "twice", "over-ceiling"])
    mistake = parser.parse_args().mistake
    message = sys.stdin.read()
    found = re.search(r"\b([A-Z]-\d{4})\b", message)
    if not found:
        print("Could you give me your order number (like A-1001)?")
        return
    order = lookup(found.group(1), mistake)
    if "refund" in message.lower():
        print(refund(found.group(1), order, mistake))
    else:
        print(f"Order {found.group(1)} is {order['status']} (carrier: {order['carrier']}).")


if __name__ == "__main__":
    main()

"""Custom check: the refund agrees across the books — what was paid, noted and recorded.

A built-in check reads one kind of evidence; this one reads three and compares them with
the order's total in the shop's database:

- the amount POSTed to the payments mock (its recording, `services.payments`);
- the amount in the ticket note `notes/<order>.md` of the final workspace;
- the refund rows the database holds for the order (`services.db`).

The score is the share of those that match the total. Input: sounding's context JSON on
stdin; output: `{"passed", "score", "reason", "details"}` on stdout. Evidence it cannot
read (no workspace kept, the database gone) is an error: exit 2 with the reason on stderr.
"""

import json
import re
import sys
from pathlib import Path
from typing import Any

import sqlalchemy as sa

DRIVERS = {"postgresql": "postgresql+psycopg", "postgres": "postgresql+psycopg"}
DRIVERS |= {"mysql": "mysql+pymysql", "mariadb": "mysql+pymysql"}


def give_up(reason: str) -> None:
    print(f"books_agree: {reason}", file=sys.stderr)
    sys.exit(2)


def database(context: dict[str, Any]) -> sa.Engine:
    url = (context["services"].get("db") or {}).get("url")
    if not url:
        give_up("the database of service 'db' is gone; re-run with --keep to re-score it")
    scheme, sep, rest = str(url).partition("://")
    return sa.create_engine(f"{DRIVERS.get(scheme, scheme)}{sep}{rest}")


def paid(context: dict[str, Any]) -> list[int]:
    recording = context["services"]["payments"]["details"]["requests"]
    posts = [r for r in recording if r["method"] == "POST" and r["path"] == "/v1/refunds"]
    return [int((r.get("json") or {}).get("amount_cents", -1)) for r in posts]


def noted(context: dict[str, Any], order_id: str) -> int | None:
    if context["workspace_path"] is None:
        give_up("no workspace was kept for this trial: the note cannot be read")
    note = Path(context["workspace_path"]) / "notes" / f"{order_id}.md"
    text = note.read_text(encoding="utf-8") if note.is_file() else ""
    found = re.search(r"^Action: refunded (\d+) cents$", text, re.MULTILINE)
    return int(found.group(1)) if found else None


def booked(engine: sa.Engine, order_id: str) -> tuple[int, list[int]]:
    with engine.connect() as db:
        total = db.execute(
            sa.text("SELECT total_cents FROM orders WHERE id = :id"), {"id": order_id}
        ).scalar_one()
        rows = db.execute(
            sa.text("SELECT amount_cents FROM refunds WHERE order_id = :id"), {"id": order_id}
        ).scalars()
        return int(total), [int(r) for r in rows]


def verdict(context: dict[str, Any]) -> dict[str, Any]:
    calls = [c for c in context["record"]["tool_calls"] if c["name"] == "issue_refund"]
    if not calls:
        return {"passed": False, "score": 0.0, "reason": "no refund was issued"}
    order_id = str(calls[0]["args"].get("order_id"))
    if not re.fullmatch(r"[A-Z]-\d{4}", order_id):
        return {"passed": False, "score": 0.0, "reason": f"refunded a malformed order {order_id!r}"}
    total, rows = booked(database(context), order_id)
    sources = {"payment": paid(context), "note": [noted(context, order_id)], "database": rows}
    wrong = {name: got for name, got in sources.items() if got != [total]}
    score = 1 - len(wrong) / len(sources)
    if not wrong:
        reason = f"{order_id}: paid, noted and booked {total} cents, the order's total"
    else:
        shown = ", ".join(f"{name} {got}" for name, got in wrong.items())
        reason = f"{order_id}: the order's total is {total} cents, but {shown}"
    details = {"order_id": order_id, "total_cents": total, "sources": sources}
    return {"passed": not wrong, "score": score, "reason": reason, "details": details}


if __name__ == "__main__":
    print(json.dumps(verdict(json.load(sys.stdin))))

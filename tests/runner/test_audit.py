"""`sounding audit`: each scenario played by its reference, the null agent and its broken
variants, one trial each, with its services and workspace, and the outcome said."""

from __future__ import annotations

import json
import re
import shlex
import sys
from typing import Any

PYTHON = shlex.quote(sys.executable)

# A stand-in that checks the contract a run's agent gets before it acts: the prompt on
# stdin and in SOUNDING_PROMPT, the workspace (the fixture's orders.json) as its working
# directory, `[agent] env`, and the case's database. It refunds order 7 (twice, when told).
SOLVE = """
import json, os, sqlite3, sys
from pathlib import Path

prompt = sys.stdin.read()
assert prompt == os.environ["SOUNDING_PROMPT"] == "Please refund order 7."
assert os.environ["SHOP"] == "demo" and os.environ["SOUNDING_TRIAL"] == "1"
order = json.loads(Path("orders.json").read_text())["7"]
times = 2 if "--twice" in sys.argv else 1
db = sqlite3.connect(os.environ["DATABASE_URL"].removeprefix("sqlite:///"))
for _ in range(times):
    db.execute("INSERT INTO refunds VALUES ('7', ?)", (order["total_cents"],))
db.commit()
with open(os.environ["SOUNDING_TRACE"], "a") as trace:
    for n in range(times):
        call = {"type": "tool_call", "id": f"c{n}", "name": "issue_refund", "args": {"id": "7"}}
        trace.write(json.dumps(call) + "\\n")
print(f"I refunded order 7 ({order['total_cents']} cents).")
"""

SOLUTIONS = """
def refund(prompt, context):
    return "I refunded order 7."


def apologize(prompt, context):
    return "Sorry, I cannot refund orders."
"""

# One scenario of each outcome: OK, WEAK (the null agent passes), WEAK (a broken variant
# passes), BROKEN (the reference fails), UNPROVEN (no reference).
CASE = f"""
workspace: {{fixture: fixtures/shop}}
services:
  - {{name: db, type: sql, seed: fixtures/seed.sql}}
scenarios:
  - id: proven
    user: Please refund order 7.
    reference: {{command: "{PYTHON} {{suite}}/solve.py"}}
    broken:
      - {{command: "{PYTHON} {{suite}}/solve.py --twice"}}
    expect:
      - final_answer_contains: refunded
    invariants:
      refunded_once:
        gate: true
        check: {{type: sql, service: db, query: "SELECT count(*) FROM refunds", equals: 1}}

  - id: nothing-passes
    user: Please refund order 7.
    reference: {{callable: "solutions:refund"}}
    expect:
      - tool_not_called: delete_order
      - final_answer_not_contains: Sorry

  - id: twice-passes
    user: Please refund order 7.
    reference: {{record: records/refunded.jsonl}}
    broken:
      - {{command: "{PYTHON} {{suite}}/solve.py --twice"}}
    expect:
      - final_answer_contains: refunded

  - id: wrong-reference
    user: Please refund order 7.
    reference: {{callable: "solutions:apologize"}}
    expect:
      - final_answer_contains: refunded

  - id: no-reference
    user: Please refund order 7.
    expect:
      - final_answer_contains: refunded
"""


def _demo(suite: Any) -> None:
    # the suite's own agent is never run by an audit: it fails whatever it is asked
    suite.agent("import sys\nsys.exit(3)\n", extra_config='env = {SHOP = "demo"}\n')
    suite.write("solve.py", SOLVE)
    suite.write("solutions.py", SOLUTIONS)
    suite.write("fixtures/shop/orders.json", '{"7": {"total_cents": 4200}}\n')
    suite.write("fixtures/seed.sql", "CREATE TABLE refunds (order_id TEXT, amount_cents INT);\n")
    final = {"type": "final", "text": "I refunded order 7."}
    suite.write("records/refunded.jsonl", json.dumps(final) + "\n")
    suite.write("cases/demo.yaml", CASE)


def _lines(out: str) -> list[str]:
    """The output with its timing and the stand-ins' absolute paths made plain."""
    out = out.replace(sys.executable, "PY").replace(PYTHON, "PY")
    return [re.sub(r"\d+\.\d\ds", "Ns", line) for line in out.splitlines()]


def test_each_scenario_gets_the_outcome_its_stand_ins_show(suite: Any) -> None:
    _demo(suite)
    done = suite.audit()
    assert done.returncode == 1, done.stdout + done.stderr
    lines = _lines(done.stdout)
    assert lines[:-1] == [
        "OK        demo/proven  reference pass, null fail, broken[0] fail",
        "WEAK      demo/nothing-passes  reference pass, null pass",
        "          the null agent passes: the checks cannot see that nothing was done",
        "WEAK      demo/twice-passes  reference pass, null fail, broken[0] pass",
        "          broken[0] (command PY {suite}/solve.py --twice) passes: the checks cannot "
        "see what it does wrong",
        "BROKEN    demo/wrong-reference  reference fail, null fail",
        "          the reference (callable solutions:apologize) does not pass: expect[0] "
        "final_answer_contains: the answer does not contain 'refunded'",
        "UNPROVEN  demo/no-reference  null fail",
        "          no reference: nothing shows that the scenario can pass",
        "",
        "1 ok, 2 weak, 1 broken, 1 unproven — 5 scenarios, 10 trials, 1 record scored in Ns",
    ]
    assert lines[-1].startswith(f"audit: {suite.root / 'results' / 'audit-'}")


def test_the_trials_are_kept_apart_from_runs_with_the_document(suite: Any) -> None:
    _demo(suite)
    done = suite.audit("--scenario", "proven", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    document = json.loads(done.stdout)
    (audit,) = (suite.root / "results").iterdir()
    assert audit.name.startswith("audit-") and not (audit / "run.json").exists()
    assert json.loads((audit / "audit.json").read_text()) == document
    assert document["schema"] == "sounding.audit/1"
    assert document["totals"] == {"ok": 1, "weak": 0, "broken": 0, "unproven": 0, "error": 0}
    (proven,) = document["scenarios"]
    probes = {probe["name"]: probe for probe in proven["probes"]}
    assert list(probes) == ["reference", "null", "broken[0]"]
    assert probes["null"]["plays"] == "the null agent"
    assert probes["null"]["reason"] == "invariant refunded_once: 'db' returned 0, expected 1"
    assert probes["broken[0]"]["reason"] == "invariant refunded_once: 'db' returned 2, expected 1"
    trial = json.loads((audit / probes["null"]["trial"] / "trial.json").read_text())
    assert (trial["cell"], trial["scenario"], trial["verdict"]) == ("null", "proven", "fail")
    assert trial["record"]["final_answer"] == "" and trial["record"]["tool_calls"] == []
    assert trial["touched"] == [] and trial["exit_code"] == 0


def test_a_stand_in_that_cannot_start_stops_the_audit_before_any_trial(
    suite: Any,
) -> None:
    suite.agent("print('hi')\n")
    suite.write(
        "cases/lost.yaml",
        """
        scenarios:
          - id: gone
            user: hi
            expect: [{final_answer_contains: hi}]
            reference: {command: no-such-program-here --fast}
        """,
    )
    done = suite.audit()
    assert done.returncode == 2
    said = " ".join(done.stderr.split())
    assert (
        "lost.yaml:5: scenario 'gone' reference.command starts with 'no-such-program-here'" in said
    )
    assert not (suite.root / "results").exists() or not any((suite.root / "results").iterdir())
    assert suite.audit("--scenario", "nope").returncode == 2


def test_a_reference_record_that_cannot_be_read_does_not_pass(suite: Any) -> None:
    suite.agent("print('hi')\n")
    suite.write("records/good.jsonl", "this is no record\n")
    suite.write(
        "cases/kept.yaml",
        """
        scenarios:
          - id: answered
            user: hi
            expect: [{final_answer_contains: hi}]
            reference: {record: records/good.jsonl}
        """,
    )
    done = suite.audit()
    assert done.returncode == 1, done.stdout + done.stderr
    head, finding, *_ = done.stdout.splitlines()
    assert head == "BROKEN    kept/answered  reference error, null fail"
    assert finding.strip().startswith(
        "the reference (record records/good.jsonl) does not pass: "
    ), finding
    assert "not JSON" in finding

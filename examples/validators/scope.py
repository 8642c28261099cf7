#!/usr/bin/env python3
"""The example's validator: did the agent deliver, stay in scope, and leave the tests green?

`sounding run` calls it with one argument, the path of the trial's context.json, from the
trial's validation/ folder. Replay it by hand the same way, months later:

    examples/validators/scope.py \
        results/<run>/trials/default/counter/fix-the-counter#1/validation/context.json
"""

from __future__ import annotations

from typing import Any

from sounding.validators import Metric, Run, validator

SCOPE = frozenset({"counter.py"})


@validator
def evaluate(run: Run) -> dict[str, Any]:
    # By-products (the __pycache__ the tests leave) are not the agent's work: subtract them.
    work = run.touched - run.byproducts
    outside = work - SCOPE
    delivered = bool(work & SCOPE)
    # A reason belongs to a failure: attached to a pass it would read "also touched " on
    # every trial that stayed in scope. An empty reason is dropped.
    strays = f"also touched {', '.join(sorted(outside))}" if outside else ""
    return {
        "delivered": Metric(delivered, "" if delivered else "counter.py unchanged"),
        "in_scope": Metric(not outside, strays),
        # Passed uncalled: the decorator calls it, so a CannotJudge (no test_command, a
        # failing prepare step) makes only `tests` unjudged, not the whole answer.
        "tests": run.tests,
        # Not declared by the case: stored in measures.json, never scored.
        "work": sorted(work),
    }


if __name__ == "__main__":
    raise SystemExit(evaluate.cli())

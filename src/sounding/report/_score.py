"""One record scored against a scenario (`sounding score CASE --record R`): the terminal
lines and the `--json` document."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape

from sounding.report._terminal import STYLES
from sounding.scoring import Kind, TrialScore
from sounding.spec import Case, Scenario

SCORE_SCHEMA = "sounding.score/1"
STATUS_STYLE = {
    "passed": "green",
    "failed": "red",
    "error": "magenta",
    "unjudged": "yellow",
    "skipped": "dim",
}


def score_document(case: Case, scenario: Scenario, result: TrialScore) -> dict[str, Any]:
    """The `--json` form of a scored record (schema sounding.score/1)."""
    return {
        "schema": SCORE_SCHEMA,
        "case": str(case.path),
        "scenario": scenario.id,
        "verdict": result.verdict.value,
        "composite": result.composite,
        "threshold": result.threshold,
        "reason": result.reason,
        "checks": [{**m.summary(), "details": m.result.details} for m in result.checks],
    }


def print_score(console: Console, case: Case, scenario: Scenario, result: TrialScore) -> None:
    """Each check with its status, score and reason, then the verdict."""
    console.print(f"{escape(case.name)}/{escape(scenario.id)}")
    for m in result.checks:
        status = m.result.status.value
        lead = m.kind is Kind.LEAD and status == "failed"
        label, style = ("LEAD", "yellow") if lead else (status.upper(), STATUS_STYLE[status])
        console.print(
            f"  [{style}]{label:<8}[/] {escape(m.name):<40} {m.result.score:.2f}  "
            f"{escape(m.result.reason)}"
        )
    shown = "—" if result.composite is None else f"{result.composite:.2f}"
    reason = f"  {escape(result.reason)}" if result.reason else ""
    console.print(
        f"[{STYLES[result.verdict.value]}]{result.verdict.value.upper()}[/] "
        f"composite {shown} (threshold {result.threshold:.2f}){reason}"
    )

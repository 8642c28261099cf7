"""`sounding audit` in the terminal: one line per scenario with what each stand-in got,
then what the audit found wrong, indented under it."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from sounding._words import counted
from sounding.report._terminal import clipped
from sounding.scoring import Audit, ScenarioAudit

OUTCOME_STYLES = {
    "ok": "green",
    "weak": "yellow",
    "broken": "red",
    "unproven": "cyan",
    "error": "magenta",
}
_WIDTH = 9  # the longest outcome, UNPROVEN, and a space
_FINDING_WIDTH = 200


def audit_lines(scenario: ScenarioAudit) -> list[Text]:
    """`WEAK      case/scenario  reference pass, null pass`, then each finding."""
    outcome = scenario.outcome.value
    got = ", ".join(f"{probe.name} {probe.verdict.value}" for probe in scenario.probes)
    head = Text.assemble((f"{outcome.upper():<{_WIDTH}}", OUTCOME_STYLES[outcome]))
    head.append(f" {scenario.label}  {got}")
    return [head, *(_finding(text) for text in scenario.findings)]


def _finding(text: str) -> Text:
    """A finding, indented under its scenario's line, on one line."""
    return Text(" " * (_WIDTH + 1) + clipped(text.replace("\n", " "), _FINDING_WIDTH), "dim")


def print_audit(console: Console, audit: Audit, seconds: float) -> None:
    """Every scenario's lines, the totals, and where the audit's trials are kept."""
    for scenario in audit.scenarios:
        for line in audit_lines(scenario):
            console.print(line, highlight=False, soft_wrap=True)
    totals = [(outcome, n) for outcome, n in audit.totals.items() if n]
    parts = ", ".join(f"[{OUTCOME_STYLES[outcome]}]{n} {outcome}[/]" for outcome, n in totals)
    done = [counted(len(audit.scenarios), "scenario"), counted(audit.trials, "trial")]
    if audit.records:
        done.append(f"{counted(audit.records, 'record')} scored")
    console.print(f"\n{parts} — {', '.join(done)} in {seconds:.2f}s", highlight=False)
    console.print(f"audit: {audit.folder}", highlight=False, soft_wrap=True)

"""`sounding audit` in the terminal: a line per scenario, its findings under it, totals."""

from __future__ import annotations

import io

from rich.console import Console

from sounding.report._audit import print_audit
from sounding.scoring import Audit, Probe, ProbeRole, ScenarioAudit, TrialVerdict


def _probe(name: str, role: ProbeRole, verdict: TrialVerdict, **more: str | None) -> Probe:
    return Probe(name=name, role=role, plays="command python3 s.py", verdict=verdict, **more)


def test_findings_sit_under_their_scenario_on_one_clipped_line_each() -> None:
    long = "expect[0] final_answer_contains: " + "x" * 300 + "\nsecond line"
    scenarios = [
        ScenarioAudit(
            case="demo",
            scenario="wrong",
            probes=[
                _probe("reference", ProbeRole.REFERENCE, TrialVerdict.FAIL, reason=long),
                _probe("null", ProbeRole.NULL, TrialVerdict.PASS, trial="trials/demo/wrong/null"),
            ],
        ),
        ScenarioAudit(
            case="demo",
            scenario="fine",
            probes=[
                _probe("reference", ProbeRole.REFERENCE, TrialVerdict.PASS, trial="t/r"),
                _probe("null", ProbeRole.NULL, TrialVerdict.FAIL, trial="t/n"),
            ],
        ),
    ]
    out = io.StringIO()
    console = Console(file=out, width=100, color_system=None)
    print_audit(console, Audit(suite="/s", folder="/s/results/audit-1", scenarios=scenarios), 1.5)
    lines = out.getvalue().splitlines()
    assert lines[0] == "BROKEN    demo/wrong  reference fail, null pass"
    assert lines[1].startswith("          the reference (command python3 s.py) does not pass: ")
    assert len(lines[1]) == 210 and lines[1].endswith("x…")
    assert lines[2] == (
        "          the null agent passes: the checks cannot see that nothing was done"
    )
    assert lines[3] == "OK        demo/fine  reference pass, null fail"
    assert lines[5:] == [
        "1 ok, 1 broken — 2 scenarios, 3 trials, 1 record scored in 1.50s",
        "audit: /s/results/audit-1",
    ]

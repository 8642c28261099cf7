"""Records scored in bulk (`sounding score CASE --records PATH`): the terminal table, the
`--json` document (sounding.bulk/1), and a renderer per file format (`--junit`, `--html`).

Per scenario and check: the pass rate, passed / (passed + failed), with its 95 % bootstrap
interval; errored and unjudged records are counted apart. Then the worst offenders of
each scenario, and the records that matched no scenario or could not be read.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from html import escape
from typing import Any

from rich.console import Console
from rich.markup import escape as markup

from sounding._words import counted
from sounding.checks import Status
from sounding.report._html import _STYLE
from sounding.report._junit import _xml, junit_document
from sounding.report._renderers import bulk_renderers
from sounding.report._trial import table
from sounding.scoring import (
    BulkScore,
    CheckTally,
    Interval,
    Offender,
    ScenarioTally,
    TrialVerdict,
)

BULK_SCHEMA = "sounding.bulk/1"


# ---- the document ------------------------------------------------------------------------


def bulk_document(bulk: BulkScore) -> dict[str, Any]:
    """The `--json` form (schema sounding.bulk/1)."""
    return {
        "schema": BULK_SCHEMA,
        "case": bulk.case,
        "match_field": bulk.match_field,
        "min_pass_rate": bulk.min_pass_rate,
        "gate": not bulk.below(),
        "records": {
            "scored": bulk.scored,
            "unmatched": bulk.unmatched,
            "malformed": bulk.malformed,
        },
        "scenarios": [_scenario(tally, bulk.min_pass_rate) for tally in bulk.tallies.values()],
        "unmatched": [{"source": s, "found": label} for s, label in bulk.unmatched_listed],
        "malformed": list(bulk.malformed_listed),
    }


def _scenario(tally: ScenarioTally, floor: float) -> dict[str, Any]:
    rate = tally.rate()
    return {
        "scenario": tally.scenario,
        "records": tally.records,
        "passed": tally.verdicts[TrialVerdict.PASS],
        "failed": tally.verdicts[TrialVerdict.FAIL],
        "errors": tally.errors,
        "unjudged": tally.unjudged,
        "pass_rate": rate,
        "interval": _interval(tally.interval()),
        "gate": rate is None or rate >= floor,
        "checks": [_check(check) for check in tally.checks.values()],
        "worst": [_offender(o) for o in tally.worst()],
    }


def _offender(o: Offender) -> dict[str, Any]:
    return {
        "source": o.source,
        "verdict": o.verdict.value,
        "composite": o.composite,
        "reason": o.reason,
    }


def _check(check: CheckTally) -> dict[str, Any]:
    counts = {status.value: check.statuses[status] for status in Status}
    return {
        "name": check.name,
        "kind": check.kind.value,
        **counts,
        "pass_rate": check.rate(),
        "interval": _interval(check.interval()),
    }


def _interval(found: Interval | None) -> dict[str, Any] | None:
    if found is None:
        return None
    keys = ("low", "high", "level", "draws", "seed")
    return {key: getattr(found, key) for key in keys}


# ---- the terminal ------------------------------------------------------------------------


def _shown(rate: float | None, found: Interval | None) -> str:
    if rate is None or found is None:
        return "—"
    return f"{rate:.3f} [{found.low:.3f}, {found.high:.3f}]"


def print_bulk(console: Console, bulk: BulkScore) -> None:
    """Per scenario its pass rate and each check's, the worst offenders, then what was
    not scored."""
    for tally in bulk.tallies.values():
        _print_scenario(console, tally, bulk.min_pass_rate)
    for source, label in bulk.unmatched_listed:
        console.print(f"[yellow]UNMATCHED[/] {markup(source)}: {markup(label)}")
    for error in bulk.malformed_listed:
        console.print(f"[red]MALFORMED[/] {markup(error)}")
    console.print(markup(_totals(bulk)))


def _print_scenario(console: Console, tally: ScenarioTally, floor: float) -> None:
    rate = tally.rate()
    held = rate is None or rate >= floor
    head = "[green]OK[/]  " if held else "[red]LOW[/] "
    console.print(
        f"{head} {markup(tally.scenario)}  pass rate {_shown(rate, tally.interval())}  "
        f"({_counts(tally)})"
    )
    for check in tally.checks.values():
        apart = _apart(check)
        console.print(
            f"      {markup(check.name):<40} {_shown(check.rate(), check.interval())}"
            f"  {check.statuses[Status.PASSED]}/{check.judged}{markup(apart)}"
        )
    for offender in tally.worst():
        composite = "—" if offender.composite is None else f"{offender.composite:.2f}"
        console.print(
            f"      [red]{offender.verdict.value.upper():<5}[/] {markup(offender.source)} "
            f"composite {composite}, {counted(offender.failed, 'check')} failed: "
            f"{markup(offender.reason)}"
        )


def _counts(tally: ScenarioTally) -> str:
    errors = f", {tally.errors} errored" if tally.errors else ""
    if tally.unjudged:
        errors += f", {tally.unjudged} unjudged (a check needs a workspace or services)"
    return f"{tally.verdicts[TrialVerdict.PASS]}/{tally.judged} records passed{errors}"


def _apart(check: CheckTally) -> str:
    kinds = (Status.UNJUDGED, Status.ERROR, Status.SKIPPED)
    found = [f"{check.statuses[s]} {s.value}" for s in kinds if check.statuses[s]]
    return f" ({', '.join(found)})" if found else ""


def _totals(bulk: BulkScore) -> str:
    parts = [f"{counted(bulk.scored, 'record')} scored"]
    if bulk.unmatched:
        parts.append(f"{bulk.unmatched} matched no scenario")
    if bulk.malformed:
        parts.append(f"{bulk.malformed} could not be read")
    low = bulk.below()
    gate = (
        f"{counted(len(low), 'scenario')} under --min-pass-rate {bulk.min_pass_rate:g}"
        if low
        else f"every scenario at or above --min-pass-rate {bulk.min_pass_rate:g}"
    )
    return f"{', '.join(parts)}; {gate}"


# ---- the files ---------------------------------------------------------------------------


@bulk_renderers.renderer(
    "junit", title="JUnit XML", help="Write JUnit XML here (one testcase per scenario)."
)
def bulk_junit(bulk: BulkScore) -> str:
    """One <testcase> per scenario: a <failure> when its pass rate is under the floor."""
    cases = [_testcase(tally, bulk.min_pass_rate) for tally in bulk.tallies.values()]
    return junit_document(f"sounding {bulk.case}", cases)


def _testcase(tally: ScenarioTally, floor: float) -> ET.Element:
    case = ET.Element("testcase", {"classname": "records", "name": _xml(tally.scenario)})
    rate = tally.rate()
    lines = [f"pass rate {_shown(rate, tally.interval())} ({_counts(tally)})"]
    lines += [
        f"{c.name}: {_shown(c.rate(), c.interval())}{_apart(c)}" for c in tally.checks.values()
    ]
    lines += [f"{o.verdict.value} {o.source}: {o.reason}" for o in tally.worst()]
    if rate is None:
        outcome = ET.SubElement(case, "error", {"message": "no record could be judged"})
        outcome.text = _xml("\n".join(lines))
    elif rate < floor:
        message = f"pass rate {rate:.3f} is under {floor:g}"
        outcome = ET.SubElement(case, "failure", {"message": _xml(message)})
        outcome.text = _xml("\n".join(lines))
    out = ET.SubElement(case, "system-out")
    out.text = _xml("\n".join(lines))
    return case


@bulk_renderers.renderer("html", title="HTML", help="Write one self-contained HTML page.")
def bulk_html(bulk: BulkScore) -> str:
    """A page: a table per scenario (its rate, each check's), its worst offenders, and the
    records not scored. Every value is escaped: records hold untrusted text."""
    body = [f"<h1>sounding: {escape(bulk.case)}</h1>", f"<p>{escape(_totals(bulk))}</p>"]
    for tally in bulk.tallies.values():
        body.extend(_html_scenario(tally, bulk.min_pass_rate))
    if bulk.unmatched_listed or bulk.malformed_listed:
        body.append("<h2>Not scored</h2><ul>")
        body += [f"<li>{escape(s)}: {escape(label)}</li>" for s, label in bulk.unmatched_listed]
        body += [f"<li>{escape(error)}</li>" for error in bulk.malformed_listed]
        body.append("</ul>")
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>sounding: {escape(bulk.case)}</title><style>{_STYLE}</style></head>"
        f"<body>{''.join(body)}</body></html>\n"
    )


def _html_check(c: CheckTally) -> str:
    return (
        f"<tr><td>{escape(c.name)}</td><td class=num>{_shown(c.rate(), c.interval())}</td>"
        f"<td class=num>{c.statuses[Status.PASSED]}/{c.judged}</td>"
        f"<td>{escape(_apart(c))}</td></tr>"
    )


def _html_scenario(tally: ScenarioTally, floor: float) -> list[str]:
    rate = tally.rate()
    verdict = "pass" if rate is None or rate >= floor else "fail"
    rows = [_html_check(c) for c in tally.checks.values()]
    worst = [
        f"<li><span class='v v-{o.verdict.value}'>{o.verdict.value}</span> "
        f"<code>{escape(o.source)}</code>: {escape(o.reason)}</li>"
        for o in tally.worst()
    ]
    return [
        f"<h2><span class='v v-{verdict}'>{verdict}</span> {escape(tally.scenario)}</h2>",
        f"<p>pass rate {_shown(rate, tally.interval())} ({escape(_counts(tally))})</p>",
        table(["check", "pass rate [95 %]", "passed", "apart"], rows),
        *(["<h3>Worst offenders</h3><ul>", *worst, "</ul>"] if worst else []),
    ]

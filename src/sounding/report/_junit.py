"""JUnit XML: one <testcase> per scenario of each cell, for CI systems that read it.

- pass: an empty testcase.
- fail: a <failure> whose message is the first failure.
- error (the scenario's verdict is error, or a trial errored): an <error> with the first error.
- flaky: a `flaky` property and a <system-out> line saying so, plus a <failure> only when
  the scenario's gate did not hold (with `replica_aggregation: any` a flaky scenario passes).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from sounding.report._renderers import renderers
from sounding.scoring import ScenarioVerdict
from sounding.store import Results, ScenarioTrials

# Characters XML 1.0 cannot hold at all (control characters, lone surrogates).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


@renderers.renderer(
    "junit", title="JUnit XML", help="Write JUnit XML here (one testcase per scenario)."
)
def junit_report(results: Results) -> str:
    """The run as a JUnit XML document (one <testsuite> named after the run)."""
    cases = [_testcase(s) for s in results.scenarios]
    seconds = _seconds(sum(s.summary.duration_ms for s in results.scenarios))
    return junit_document(f"sounding {results.run_id}", cases, time=seconds)


def junit_document(name: str, cases: list[ET.Element], **more: str) -> str:
    """The document around `cases`: one <testsuite> called `name`, counted, with `more`
    attributes."""
    counts = {
        "tests": str(len(cases)),
        "failures": str(sum(c.find("failure") is not None for c in cases)),
        "errors": str(sum(c.find("error") is not None for c in cases)),
        "skipped": "0",
        **more,
    }
    root = ET.Element("testsuites", {"name": "sounding", **counts})
    suite = ET.SubElement(root, "testsuite", {"name": _xml(name), **counts})
    suite.extend(cases)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _testcase(scenario: ScenarioTrials) -> ET.Element:
    s = scenario.summary
    classname = s.case if s.cell == "default" else f"{s.cell}/{s.case}"
    case = ET.Element(
        "testcase",
        {"classname": _xml(classname), "name": _xml(s.scenario), "time": _seconds(s.duration_ms)},
    )
    _properties(case, scenario)
    if s.errors or s.verdict is ScenarioVerdict.ERROR:
        _outcome(case, "error", scenario.first_error or s.first_failure, _errors(scenario))
    elif not s.gate:
        _outcome(case, "failure", s.first_failure, _failures(scenario), kind=s.verdict.value)
    if s.verdict is ScenarioVerdict.FLAKY:
        out = ET.SubElement(case, "system-out")
        out.text = _xml(_flaky_line(scenario))
    return case


def _properties(case: ET.Element, scenario: ScenarioTrials) -> None:
    s = scenario.summary
    values = {
        "verdict": s.verdict.value,
        "gate": "held" if s.gate else "not held",
        "aggregation": s.aggregation.value,
        "passed": str(s.passed),
        "failed": str(s.failed),
        "errors": str(s.errors),
        "trials": str(s.trials),
        "flaky": "true" if s.verdict is ScenarioVerdict.FLAKY else "false",
    }
    if s.k is not None and s.pass_at_k is not None and s.pass_hat_k is not None:
        values[f"pass@{s.k}"] = f"{s.pass_at_k:.4g}"
        values[f"pass^{s.k}"] = f"{s.pass_hat_k:.4g}"
    if s.cell != "default":
        values["cell"] = s.cell
    holder = ET.SubElement(case, "properties")
    for name, value in values.items():
        ET.SubElement(holder, "property", {"name": name, "value": _xml(value)})


def _outcome(
    case: ET.Element, tag: str, message: str, body: str, *, kind: str | None = None
) -> None:
    element = ET.SubElement(case, tag, {"message": _xml(message), "type": kind or tag})
    element.text = _xml(body)


def _failures(scenario: ScenarioTrials) -> str:
    lines = [f"trial {t.trial}: {t.reason}" for t in scenario.trials if t.outcome is False]
    return "\n".join(lines) or scenario.summary.first_failure


def _errors(scenario: ScenarioTrials) -> str:
    s = scenario.summary
    head = f"{s.errors} of {s.trials} trials errored; errored trials give no verdict"
    lines = [f"trial {t.trial}: {t.reason}" for t in scenario.trials if t.outcome is None]
    return "\n".join([head, *lines])


def _flaky_line(scenario: ScenarioTrials) -> str:
    s = scenario.summary
    judged = s.passed + s.failed
    gate = "held" if s.gate else "did not hold"
    return (
        f"flaky: {s.passed} of {judged} judged trials passed; "
        f"the gate ({s.aggregation.value}) {gate}"
    )


def _seconds(ms: float) -> str:
    return f"{ms / 1000:.3f}"


def _xml(text: str) -> str:
    """Text XML can hold: characters it cannot are shown as `\\xNN` instead."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)

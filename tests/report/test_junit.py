"""JUnit XML from a real run: one testcase per scenario, failures, errors and flaky apart."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from sounding.report import junit_report
from sounding.store import load_results


def _cases(document: str) -> dict[str, ET.Element]:
    root = ET.fromstring(document)
    return {case.get("name", ""): case for case in root.iter("testcase")}


def _properties(case: ET.Element) -> dict[str, str]:
    return {p.get("name", ""): p.get("value", "") for p in case.iter("property")}


def test_counts_match_the_verdicts(mixed_run: Path) -> None:
    root = ET.fromstring(junit_report(load_results(mixed_run)))
    (suite,) = root.findall("testsuite")
    for element in (root, suite):
        # wrong fails, flaky-all fails its gate, broken errored; echoes and flaky-any pass
        assert (element.get("tests"), element.get("failures"), element.get("errors")) == (
            "5",
            "2",
            "1",
        )
    assert len(suite.findall("testcase")) == 5
    assert {c.get("classname") for c in suite.findall("testcase")} == {"basic"}


def test_a_failure_carries_the_first_failure_and_each_failing_trial(mixed_run: Path) -> None:
    wrong = _cases(junit_report(load_results(mixed_run)))["wrong"]
    failure = wrong.find("failure")
    assert failure is not None and failure.get("type") == "fail"
    assert "does not contain '<script>alert(1)</script>'" in failure.get("message", "")
    assert [line.split(":")[0] for line in (failure.text or "").splitlines()] == [
        "trial 1",
        "trial 2",
        "trial 3",
    ]
    assert wrong.find("error") is None and wrong.find("system-out") is None


def test_an_errored_scenario_is_an_error_not_a_failure(mixed_run: Path) -> None:
    broken = _cases(junit_report(load_results(mixed_run)))["broken"]
    error = broken.find("error")
    assert error is not None and broken.find("failure") is None
    assert "broken#1/trace.jsonl, line 1" in error.get("message", "")
    assert (error.text or "").startswith("3 of 3 trials errored")


def test_a_flaky_scenario_fails_only_when_its_gate_did_not_hold(mixed_run: Path) -> None:
    cases = _cases(junit_report(load_results(mixed_run)))
    held, not_held = cases["flaky-any"], cases["flaky-all"]
    for case in (held, not_held):
        assert _properties(case)["flaky"] == "true"
        assert (case.findtext("system-out") or "").startswith("flaky: 2 of 3 judged trials passed")
    assert held.find("failure") is None and "(any) held" in (held.findtext("system-out") or "")
    failure = not_held.find("failure")
    assert failure is not None and failure.get("type") == "flaky"
    passing = _properties(cases["echoes"])
    assert (passing["flaky"], passing["pass^3"], passing["gate"]) == ("false", "1", "held")


def test_text_xml_cannot_hold_is_shown_escaped(
    mixed_run: Path, copy_run: Any, edit_json: Any
) -> None:
    run = copy_run(mixed_run)
    summary = load_results(run).finished().model_dump(mode="json")
    summary["scenarios"][1]["first_failure"] = "colour \x1b[31mred\x1b[0m and a NUL \x00"
    edit_json(run / "summary.json", scenarios=summary["scenarios"])
    wrong = _cases(junit_report(load_results(run)))["wrong"]
    failure = wrong.find("failure")
    assert failure is not None
    assert failure.get("message") == "colour \\x1b[31mred\\x1b[0m and a NUL \\x00"


def test_a_cell_other_than_the_default_leads_the_classname(
    mixed_run: Path, copy_run: Any, edit_json: Any
) -> None:
    run = copy_run(mixed_run)
    summary = load_results(run).finished().model_dump(mode="json")
    summary["scenarios"][0]["cell"] = "gpt-small"
    edit_json(run / "summary.json", scenarios=summary["scenarios"])
    echoes = _cases(junit_report(load_results(run)))["echoes"]
    assert echoes.get("classname") == "gpt-small/basic"
    assert _properties(echoes)["cell"] == "gpt-small"

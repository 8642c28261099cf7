"""metric: a validator's metric, read from the evidence, passes, fails, or is not judged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from sounding.checks import CheckContext, CheckResult, Evidence, Status, registry
from sounding.record import RunRecord
from sounding.spec import SpecError, load_case

METRICS = {"in_scope": True, "tests": False, "coverage": 0.75, "files": ["a.py"], "gone": None}
FOUND = {
    "metrics": METRICS,
    "reasons": {"tests": "2 of 14 failed", "gone": "no reference tree"},
    "unjudged": {"gone": "no reference tree", "reads_well": "filled by hand: not filled yet"},
}


def check(raw: Any, extra: dict[str, Any] | None = None) -> CheckResult:
    kind = registry.get("metric")
    evidence = Evidence(record=RunRecord(), extra=FOUND if extra is None else extra)
    return kind.run(kind.parse(raw), CheckContext(evidence=evidence, name="scoped"))


def test_a_true_bool_passes_and_a_false_one_fails_with_the_validators_reason() -> None:
    passed = check("in_scope")  # the shorthand names the metric
    assert (passed.status, passed.score, passed.reason) == (
        Status.PASSED,
        1.0,
        "metric 'in_scope' is true",
    )
    failed = check({"metric": "tests"})
    assert (failed.status, failed.score) == (Status.FAILED, 0.0)
    assert failed.reason == "metric 'tests' is false: 2 of 14 failed"


@pytest.mark.parametrize(
    ("bounds", "status", "reason"),
    [
        ({"at_least": 0.7}, Status.PASSED, "metric 'coverage' is 0.75, at least 0.7"),
        ({"at_least": 0.8}, Status.FAILED, "metric 'coverage' is 0.75, below at_least 0.8"),
        ({"at_most": 0.5}, Status.FAILED, "metric 'coverage' is 0.75, above at_most 0.5"),
        (
            {"at_least": 0.5, "at_most": 1},
            Status.PASSED,
            "metric 'coverage' is 0.75, at least 0.5 and at most 1",
        ),
    ],
)
def test_a_number_passes_within_its_bounds(
    bounds: dict[str, float], status: Status, reason: str
) -> None:
    result = check({"metric": "coverage", **bounds})
    assert (result.status, result.reason) == (status, reason)


def test_unjudged_metrics_stay_unjudged() -> None:
    assert check("gone").reason == "metric 'gone' was not judged: no reference tree"
    form = check("reads_well")
    assert form.status is Status.UNJUDGED
    assert form.reason == "metric 'reads_well' was not judged: filled by hand: not filled yet"


def test_no_validator_metrics_kept_is_unjudged_never_failed() -> None:
    result = check("in_scope", extra={})
    assert result.status is Status.UNJUDGED
    assert result.reason.startswith("no validator metrics were kept for this trial")
    later = check("declared_later", extra={"metrics": {"in_scope": True}})
    assert later.status is Status.UNJUDGED
    assert later.reason == "no validator measured metric 'declared_later' in this trial"


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ({"metric": "in_scope", "at_least": 1}, "metric 'in_scope' is a bool (true): at_least"),
        ("coverage", "metric 'coverage' is a number (0.75): give at_least or at_most"),
        ("files", "metric 'files' is a list, which is diagnostic only and cannot be scored"),
    ],
)
def test_a_metric_that_cannot_be_scored_so_is_an_error(raw: Any, reason: str) -> None:
    result = check(raw)
    assert result.status is Status.ERROR
    assert result.reason.startswith(reason)


def test_bounds_that_no_value_could_meet_are_refused() -> None:
    with pytest.raises(ValidationError, match="at_least \\(2\\) is above at_most \\(1\\)"):
        registry.get("metric").parse({"metric": "coverage", "at_least": 2, "at_most": 1})


CASE = """\
validators:
  - {mode: script, command: v.py, metrics: [in_scope, delivered]}
scenarios:
  - id: s
    user: go
    invariants:
      scoped: {gate: true, check: {type: metric, metric: in_scop}}
    expect:
      - metric: delivered
"""


def test_the_loader_refuses_a_metric_no_validator_declares(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(CASE)
    with pytest.raises(SpecError) as refused:
        load_case(path)
    assert str(refused.value) == (
        f"{path}:7: scenarios[0].invariants.scoped.check.metric: names metric 'in_scop', "
        "which no validator of this case declares (allowed: delivered, in_scope; "
        "did you mean 'in_scope'?)"
    )


def test_a_case_without_validators_names_no_metric(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("scenarios:\n  - id: s\n    user: go\n    expect:\n      - metric: x\n")
    with pytest.raises(SpecError, match="but this case declares no `validators:`"):
        load_case(path)

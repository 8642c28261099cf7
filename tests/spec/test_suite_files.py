"""Files a case names in its suite (graders, custom scripts) are checked at load."""

from __future__ import annotations

from pathlib import Path

import pytest

from sounding.spec import SpecError, load_case


def _suite(tmp_path: Path, grader: str) -> Path:
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks/quality.py").write_text("def answers(t, case, run):\n    return True\n")
    (tmp_path / "cases").mkdir()
    case = tmp_path / "cases/c.yaml"
    case.write_text(f"scenarios:\n  - id: s\n    user: x\n    expect:\n      - grader: {grader}\n")
    return case


def test_a_grader_the_suite_holds_loads(tmp_path: Path) -> None:
    case = load_case(_suite(tmp_path, "{name: quality.answers}"), suite_dir=tmp_path)
    assert case.scenarios[0].expect[0].check.type == "grader"


def test_an_unknown_grader_is_refused_with_line_and_closest_name(tmp_path: Path) -> None:
    path = _suite(tmp_path, "{name: quality.answer}")
    with pytest.raises(SpecError) as caught:
        load_case(path, suite_dir=tmp_path)
    message = str(caught.value)
    assert f"{path}:5:" in message
    assert "did you mean 'quality.answers'" in message


def test_a_custom_script_the_suite_does_not_hold_is_refused_at_load(tmp_path: Path) -> None:
    (tmp_path / "cases").mkdir()
    case = tmp_path / "cases/c.yaml"
    case.write_text(
        "scenarios:\n  - id: s\n    user: x\n    invariants:\n"
        "      c: {check: {type: custom, script: checks/nope.py}}\n"
    )
    with pytest.raises(SpecError, match=r"c\.yaml:5: custom\.script: .*'checks/nope\.py'"):
        load_case(case, suite_dir=tmp_path)

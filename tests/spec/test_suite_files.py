"""Files a case names in its suite (graders, custom scripts) are checked at load."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from sounding.checks import CheckContext, CheckResult, Params, Refused, Registry
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


class BookParams(Params):
    name: str


def _never(params: BookParams, context: CheckContext) -> CheckResult:
    raise AssertionError("the loader never runs a check")


def _shelf(suite_dir: Path) -> Callable[[BookParams], None]:
    """A check type's load-time check: the book it names is a file of the suite's shelf."""
    if not (suite_dir / "shelf").is_dir():
        raise Refused(f"{suite_dir} has no shelf/: make one")
    books = sorted(path.stem for path in (suite_dir / "shelf").iterdir())

    def held(params: BookParams) -> None:
        if params.name not in books:
            message = f"names book '{params.name}', which the shelf does not hold"
            raise Refused(message, field="name", allowed=books, typo=params.name)

    return held


def _books(tmp_path: Path, *names: str) -> tuple[Path, Registry]:
    own = Registry()
    own.check("book", BookParams, family="x", shorthand="name", in_suite=_shelf)(_never)
    entries = "".join(f"      - book: {name}\n" for name in names)
    case = tmp_path / "c.yaml"
    case.write_text(f"scenarios:\n  - id: s\n    user: x\n    expect:\n{entries}")
    return case, own


def test_any_check_type_checks_its_params_against_the_suite_it_registered_for(
    tmp_path: Path,
) -> None:
    (tmp_path / "shelf").mkdir()
    (tmp_path / "shelf/dune.txt").write_text("")
    case, own = _books(tmp_path, "dune", "dnue")
    assert load_case(case, registry=own).scenarios[0].expect[1].check.type == "book"
    with pytest.raises(SpecError) as caught:
        load_case(case, suite_dir=tmp_path, registry=own)
    (problem,) = caught.value.problems
    assert (problem.line, problem.key, problem.allowed, problem.closest) == (
        6,
        "book.name",
        ("dune",),
        "dune",
    )
    assert problem.message == "scenario 's' names book 'dnue', which the shelf does not hold"


def test_a_suite_the_check_type_refuses_is_one_problem_for_all_its_checks(
    tmp_path: Path,
) -> None:
    case, own = _books(tmp_path, "dune", "emma")
    with pytest.raises(SpecError) as caught:
        load_case(case, suite_dir=tmp_path, registry=own)
    (problem,) = caught.value.problems
    assert (problem.line, problem.key) == (None, "book")
    assert problem.message == f"{tmp_path} has no shelf/: make one"

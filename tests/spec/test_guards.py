"""Commands run without a shell and paths stay inside their folder, or the file is refused."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from sounding.spec import Case, SpecError

Load = Callable[[str, str], Case]


def _with_command(command: str) -> str:
    return f"scenarios:\n  - id: a\n    user: hi\n    test_command: {json.dumps(command)}\n"


@pytest.mark.parametrize(
    ("command", "syntax"),
    [
        ("make && make test", "&&"),
        ("make || true", "||"),
        ("pytest | tee log", "|"),
        ("make; make test", ";"),
        ("pytest > log.txt", ">"),
        ("pytest < input", "<"),
        ("pytest 2>&1", ">"),
        ("serve &", "&"),
        ("echo `date`", "`"),
        ("echo $(date)", "$("),
        ('echo "$(date)"', "$("),
        ("pytest $PYTEST_ARGS", "$PYTEST_ARGS"),
        ("pytest ${ARGS}", "${"),
    ],
)
def test_shell_syntax_is_refused_with_the_piece_named(
    load: Load, command: str, syntax: str
) -> None:
    with pytest.raises(SpecError) as caught:
        load("command.yaml", _with_command(command))
    (problem,) = caught.value.problems
    assert (problem.line, problem.key) == (4, "scenarios[0].test_command")
    assert f"uses shell syntax '{syntax}'" in problem.message


@pytest.mark.parametrize(
    "command",
    [
        "pytest -q",
        "pytest -k 'a or b' tests/",
        "grep -c 'x|y' notes.txt",
        "echo 'a && b; c > d'",
        'echo "a|b" "c;d"',
        r"echo a\|b",
        "node --test 'src/**/*.test.js'",
    ],
)
def test_quoted_or_escaped_shell_characters_are_plain_words(load: Load, command: str) -> None:
    assert load("command.yaml", _with_command(command)).scenarios[0].test_command == command


@pytest.mark.parametrize(
    ("command", "says"),
    [("", "is empty"), ("   ", "is empty"), ("pytest -k 'unclosed", "cannot be split into words")],
)
def test_a_command_that_cannot_run_is_refused(load: Load, command: str, says: str) -> None:
    with pytest.raises(SpecError, match=says):
        load("command.yaml", _with_command(command))


def _with_check_path(path: str) -> str:
    return (
        "scenarios:\n  - id: a\n    user: hi\n    expect:\n"
        f"      - file_exists: {{path: {json.dumps(path)}}}\n"
    )


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("/etc/passwd", "is absolute"),
        ("C:\\Windows\\notes.txt", "is absolute"),
        ("~/notes.txt", "starts with '~'"),
        ("..", "climbs out of the workspace"),
        ("../notes.txt", "climbs out of the workspace"),
        ("src/../../notes.txt", "climbs out of the workspace"),
        ("src\\..\\..\\notes.txt", "climbs out of the workspace"),
        ("", "is empty"),
    ],
)
def test_a_check_path_that_leaves_the_workspace_is_refused(
    load: Load, path: str, says: str
) -> None:
    with pytest.raises(SpecError) as caught:
        load("paths.yaml", _with_check_path(path))
    (problem,) = caught.value.problems
    assert (problem.line, problem.key) == (5, "scenarios[0].expect[0].file_exists.path")
    assert says in problem.message


@pytest.mark.parametrize("path", ["out.json", "src/../out.json", "./reports/a.json", "a..b"])
def test_a_check_path_inside_the_workspace_is_kept(load: Load, path: str) -> None:
    scenario = load("paths.yaml", _with_check_path(path)).scenarios[0]
    assert scenario.expect[0].check.params.model_dump() == {"path": path}


def test_nested_and_suffixed_path_params_are_checked_too(load: Load) -> None:
    text = """\
scenarios:
  - id: a
    user: hi
    expect:
      - matches_golden:
          golden_path: /golden/out.json
          files:
            - {path: ok.txt}
            - {path: ../../etc/hosts}
"""
    with pytest.raises(SpecError) as caught:
        load("nested.yaml", text)
    found = [(p.line, p.key) for p in caught.value.problems]
    assert found == [
        (6, "scenarios[0].expect[0].matches_golden.golden_path"),
        (9, "scenarios[0].expect[0].matches_golden.files[1].path"),
    ]


def test_an_http_filter_path_is_not_a_workspace_path(tmp_path: Path) -> None:
    from sounding.spec import load_case

    case = tmp_path / "c.yaml"
    case.write_text(
        "services:\n  - {name: pay, type: http_mock, record: true}\n"
        "scenarios:\n  - id: s\n    user: x\n    invariants:\n      once:\n"
        "        check:\n          type: http_mock_assertions\n          service: pay\n"
        "          assertions:\n            - {field: request_count, filters: {path: /v1/refunds},"
        " equals: 1}\n"
    )
    assert load_case(case).scenarios[0].invariants[0].name == "once"

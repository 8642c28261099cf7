"""Scenarios made from a dataset: a `scenario:` template rendered once per row."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from sounding.spec import Case, SpecError, load_case

TEMPLATE = """\
defaults: {trials: 2}
dataset: {path: rows.jsonl}
scenario:
  id: "refund-{{ order }}"
  user: "Refund order {{ order }} for {{ who }}"
  workspace:
    given: {"notes/{{ order }}.txt": "fixtures/{{ note }}"}
  expect:
    - final_answer_contains: "{{ order }}"
    - max_tool_calls: {count: "{{ calls }}"}
    - tool_called: {name: refund, args: {order_id: "{{ order }}", items: "{{ items }}"}}
"""


def suite(tmp_path: Path, rows: list[Any] | str, case: str = TEMPLATE) -> Path:
    """A suite folder with the case file in cases/, the rows, and two fixture notes."""
    (tmp_path / "cases").mkdir()
    (tmp_path / "fixtures").mkdir()
    for name in ("a.txt", "b.txt"):
        (tmp_path / "fixtures" / name).write_text("note\n")
    text = rows if isinstance(rows, str) else "".join(json.dumps(r) + "\n" for r in rows)
    (tmp_path / "rows.jsonl").write_text(text)
    path = tmp_path / "cases" / "refunds.yaml"
    path.write_text(case)
    return path


def load(path: Path) -> Case:
    return load_case(path, suite_dir=path.parent.parent)


def problems(path: Path) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load(path)
    return [str(problem) for problem in caught.value.problems]


ROW_A = {"order": "A1", "who": "ann", "note": "a.txt", "calls": 3, "items": [1, 2]}
ROW_B = {"order": "B2", "who": "bob", "note": "b.txt", "calls": 5, "items": []}


def test_each_row_makes_a_scenario_with_its_id_user_params_and_given_files(
    tmp_path: Path,
) -> None:
    case = load(suite(tmp_path, [ROW_A, ROW_B]))
    first, second = case.scenarios
    assert [first.id, second.id] == ["refund-A1", "refund-B2"]
    assert first.user == ["Refund order A1 for ann"] and first.trials == 2
    assert first.workspace.given == {"notes/A1.txt": "fixtures/a.txt"}
    assert second.workspace.given == {"notes/B2.txt": "fixtures/b.txt"}
    params = [a.check.params.model_dump(exclude_none=True) for a in second.expect]
    assert params[0] == {"text": ["B2"]}
    assert params[1] == {"count": 5}
    assert params[2]["args"] == {"order_id": "B2", "items": []}
    assert first.line == second.line == 3  # the template's line


def test_a_whole_placeholder_keeps_the_value_s_type_and_a_mixed_string_is_text(
    tmp_path: Path,
) -> None:
    case_text = TEMPLATE.replace('"{{ calls }}"', '"{{ calls }}0"')
    case = load(suite(tmp_path, [ROW_A], case_text))
    (scenario,) = case.scenarios
    assert scenario.expect[1].check.params.model_dump(exclude_none=True) == {"count": 30}
    assert scenario.expect[2].check.params.model_dump()["args"]["items"] == [1, 2]


def test_a_number_where_text_is_needed_is_refused_naming_the_row(tmp_path: Path) -> None:
    rows = [ROW_A, {**ROW_B, "order": 7}]
    found = problems(
        suite(tmp_path, rows, TEMPLATE.replace('"refund-{{ order }}"', '"{{ order }}"'))
    )
    assert any(
        ":4: scenario.id: (made from rows.jsonl row 2 (line 2))" in p
        and "must be text (got int 7)" in p
        for p in found
    ), found


def test_a_row_missing_a_field_is_refused_with_the_row_line_field_and_template_line(
    tmp_path: Path,
) -> None:
    rows = f"{json.dumps(ROW_A)}\n\n{json.dumps({**ROW_B, 'who': None} | {'who': 'x'})}\n"
    rows += json.dumps({k: v for k, v in ROW_B.items() if k != "who"}) + "\n"
    path = suite(tmp_path, rows)
    assert problems(path) == [
        f"{path}:5: scenario.user: rows.jsonl row 3 (line 4) has no field 'who', which the "
        "template uses here: add it to the row, or take the placeholder out"
    ]


def test_two_rows_that_make_one_id_are_refused_naming_both(tmp_path: Path) -> None:
    found = problems(suite(tmp_path, [ROW_A, ROW_B, {**ROW_B, "who": "carl"}]))
    assert len(found) == 1
    assert "rows.jsonl row 3 (line 3) makes scenario id 'refund-B2'" in found[0]
    assert "as rows.jsonl row 2 (line 2) does" in found[0]


def test_a_made_id_that_a_written_scenario_has_is_refused(tmp_path: Path) -> None:
    case_text = TEMPLATE + "scenarios:\n  - {id: refund-A1, user: hi}\n"
    found = problems(suite(tmp_path, [ROW_A], case_text))
    assert "as scenarios[0] (line 13) does" in found[0], found


def test_a_bad_param_in_a_made_scenario_names_its_row_and_the_template_line(
    tmp_path: Path,
) -> None:
    found = problems(suite(tmp_path, [ROW_A, {**ROW_B, "calls": "many"}]))
    assert len(found) == 1
    assert found[0].startswith(f"{tmp_path}/cases/refunds.yaml:10: scenario.expect[1]")
    assert "(made from rows.jsonl row 2 (line 2))" in found[0]


def test_the_sandbox_refuses_reaching_python_internals(tmp_path: Path) -> None:
    case_text = TEMPLATE.replace("for {{ who }}", "{{ who.__class__.__mro__ }}")
    found = problems(suite(tmp_path, [ROW_A], case_text))
    assert "rows.jsonl row 1 (line 1)" in found[0] and "__mro__" not in found[0].split(":")[0]


def test_a_template_syntax_error_is_refused_at_its_line(tmp_path: Path) -> None:
    found = problems(suite(tmp_path, [ROW_A], TEMPLATE.replace("{{ who }}", "{{ who ")))
    assert found[0].startswith(f"{tmp_path}/cases/refunds.yaml:5: scenario.user: is not a valid")


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (("dataset: {path: rows.jsonl}", "dataset: {path: ../rows.jsonl}"), "climbs out"),
        (("dataset: {path: rows.jsonl}", "dataset: {path: /etc/passwd}"), "is absolute"),
        (("dataset: {path: rows.jsonl}", "dataset: {file: rows.jsonl}"), "one key, `path`"),
        (("dataset: {path: rows.jsonl}", "dataset: {path: nope.jsonl}"), "does not exist"),
        (("dataset: {path: rows.jsonl}\n", ""), "without `dataset:`"),
    ],
)
def test_a_bad_dataset_declaration_is_refused_at_its_line(
    tmp_path: Path, change: tuple[str, str], said: str
) -> None:
    found = problems(suite(tmp_path, [ROW_A], TEMPLATE.replace(*change)))
    assert said in found[0] and "refunds.yaml:2" in found[0], found


def test_toml_case_files_take_a_dataset_too(tmp_path: Path) -> None:
    case_text = textwrap.dedent(
        """\
        dataset = {path = "rows.jsonl"}
        [scenario]
        id = "ask-{{ order }}"
        user = "Where is {{ order }}?"
        """
    )
    (tmp_path / "cases").mkdir()
    (tmp_path / "rows.jsonl").write_text(json.dumps(ROW_A) + "\n")
    path = tmp_path / "cases" / "ask.toml"
    path.write_text(case_text)
    assert [s.user for s in load(path).scenarios] == [["Where is A1?"]]


def test_validate_expands_every_row_and_names_a_bad_one(tmp_path: Path, sounding: Any) -> None:
    path = suite(tmp_path, [ROW_A, ROW_B])
    (tmp_path / "sounding.toml").write_text('[agent]\ncommand = "true"\n')
    done = sounding("validate", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "2 scenarios" in done.stdout
    path.parent.parent.joinpath("rows.jsonl").write_text(
        json.dumps(ROW_A) + "\n" + json.dumps({**ROW_B, "calls": "many"}) + "\n"
    )
    done = sounding("validate", str(tmp_path))
    assert done.returncode == 2
    assert "made from rows.jsonl row 2 (line 2)" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("value", ["x", 7, 2.5, None, True, [1, "a"], {"k": 1}])
def test_bare_names_are_filled_as_jinja_fills_them(tmp_path: Path, value: Any) -> None:
    from jinja2 import StrictUndefined
    from jinja2.sandbox import SandboxedEnvironment

    plain, jinja = "q {{ v }}-{{v}}", "q {{ v | string }}-{{ v }}"  # without Jinja, and with
    env = SandboxedEnvironment(undefined=StrictUndefined)
    expected = [env.from_string(text).render(v=value) for text in (plain, jinja)]
    template = f'{{id: "q-{{{{ n }}}}", user: ["{plain}", "{jinja}"]}}'
    case_text = f"dataset: {{path: rows.jsonl}}\nscenario: {template}\n"
    (tmp_path / "rows.jsonl").write_text(json.dumps({"n": 1, "v": value}) + "\n")
    (tmp_path / "case.yaml").write_text(case_text)
    assert load_case(tmp_path / "case.yaml").scenarios[0].user == expected
    assert expected[0] == expected[1]

"""A bad `services:` declaration is refused at load, at its line, before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from sounding.spec import SpecError, load_case


def test_a_misspelt_route_key_is_refused_at_the_services_line(tmp_path: Path) -> None:
    case = tmp_path / "c.yaml"
    case.write_text(
        "services:\n"
        "  - {name: db, type: sql, engine: sqlite}\n"
        "  - {name: pay, type: http_mock, routes: [{method: POST, path: /x, stauts: 200}]}\n"
        "scenarios:\n  - {id: s, user: x}\n"
    )
    with pytest.raises(SpecError) as caught:
        load_case(case)
    message = str(caught.value)
    assert f"{case}:3:" in message and "service 'pay' (services[1])" in message
    assert "stauts" in message


def test_an_unknown_service_type_is_refused(tmp_path: Path) -> None:
    case = tmp_path / "c.yaml"
    case.write_text("services:\n  - {name: q, type: queue}\nscenarios:\n  - {id: s, user: x}\n")
    with pytest.raises(SpecError, match=r"c\.yaml:2:.*service 'q'"):
        load_case(case)

"""Service declarations are refused at load with every problem named, service by service."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sounding.services import ServiceError, start_services, validate_service_specs


def problems(specs: Any, suite_dir: Path | None = None) -> list[str]:
    return validate_service_specs(specs, suite_dir=suite_dir)


def test_good_declarations_have_no_problems(tmp_path: Path) -> None:
    (tmp_path / "seed.sql").write_text("SELECT 1;")
    specs = [
        {"name": "db", "type": "sql", "engine": "mariadb", "seed": "seed.sql"},
        {"name": "mail", "type": "http_mock", "record": True, "default_response": 202},
        {"name": "cache", "type": "process", "command": "redis-server --port {port}"},
    ]
    assert problems(specs, tmp_path) == []


def test_an_unknown_type_suggests_the_closest() -> None:
    (found,) = problems([{"name": "db", "type": "sqll"}])
    assert found == (
        "service 'db' (services[0]): unknown service type 'sqll'; did you mean 'sql'? "
        "(known: http_mock, process, sql)"
    )


def test_a_missing_type_or_name_is_named() -> None:
    assert problems([{"name": "db"}]) == [
        "service 'db' (services[0]): type: is missing (one of: http_mock, process, sql)"
    ]
    assert problems([{"type": "sql"}]) == ["services[0]: missing required key 'name'"]


def test_an_unknown_key_lists_the_allowed_ones() -> None:
    (found,) = problems([{"name": "db", "type": "sql", "seeds": ["x.sql"]}])
    assert "seeds: unknown key 'seeds' (allowed: engine, name, seed, server, type;" in found
    assert "did you mean 'seed'?" in found


def test_a_bad_engine_shows_what_was_given() -> None:
    (found,) = problems([{"name": "db", "type": "sql", "engine": "oracle"}])
    assert found.startswith("service 'db' (services[0]): engine: ")
    assert "'oracle' is not one of the allowed values (allowed: sqlite, postgresql" in found


def test_every_problem_is_reported_not_only_the_first() -> None:
    found = problems(
        [
            {"name": "db", "type": "sql", "seed": ["/etc/passwd"]},
            "not a mapping",
            {"name": "db", "type": "http_mock"},
            {"name": "DB", "type": "http_mock"},
        ]
    )
    assert found == [
        "service 'db' (services[0]): seed '/etc/passwd' is absolute; give a path relative to "
        "the suite folder",
        "services[1]: must be a mapping with at least name: and type:",
        "service 'db' (services[2]): the name is used twice; give each service its own name",
        "service 'DB' (services[3]): its variables (SOUNDING_DB_*) clash with service 'db'; "
        "rename one of them",
    ]


def test_seed_files_must_exist_when_the_suite_is_known(tmp_path: Path) -> None:
    (found,) = problems([{"name": "db", "type": "sql", "seed": "missing.sql"}], tmp_path)
    assert "seed 'missing.sql' is not a file under" in found
    assert problems([{"name": "db", "type": "sql", "seed": "missing.sql"}]) == []


def test_a_seed_link_leading_out_of_the_suite_is_refused(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (tmp_path / "secret.sql").write_text("SELECT 1;")
    (suite / "seed.sql").symlink_to(tmp_path / "secret.sql")
    (found,) = problems([{"name": "db", "type": "sql", "seed": "seed.sql"}], suite)
    assert "leads outside the suite folder" in found


def test_a_sqlite_server_url_is_refused() -> None:
    (found,) = problems([{"name": "db", "type": "sql", "server": "sqlite:///x.db"}])
    assert "server: must be a postgresql:// or mysql:// URL" in found


def test_services_must_be_a_list() -> None:
    assert problems({"name": "db"}) == ["services: must be a list of {name, type, ...} entries"]


def test_start_refuses_bad_declarations_with_all_problems(tmp_path: Path) -> None:
    with pytest.raises(ServiceError) as raised:
        start_services(
            [{"name": "a", "type": "nope"}, {"type": "sql"}], trial_dir=tmp_path, suite_dir=tmp_path
        )
    assert len(raised.value.problems) == 2
    assert str(raised.value).startswith("services are declared wrongly:\n  - service 'a'")

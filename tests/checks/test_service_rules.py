"""Forbidden rules on services: `http_except` and `db_writes_outside` on all three engines."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa

from sounding.checks import (
    CheckContext,
    CheckResult,
    Evidence,
    Role,
    Status,
    registry,
)
from sounding.record import RunRecord
from sounding.services import ServiceEvidence, ServiceSet, ServiceSettings, start_services

SEED = """\
CREATE TABLE users (id INTEGER PRIMARY KEY, name VARCHAR(20));
CREATE TABLE orders (id INTEGER PRIMARY KEY, total INTEGER);
CREATE TABLE audit (id INTEGER PRIMARY KEY, what VARCHAR(20));
INSERT INTO users VALUES (1, 'ann');
"""


def rule(name: str, raw: Any, services: dict[str, ServiceEvidence]) -> CheckResult:
    kind = registry.get(name, Role.FORBIDDEN)
    evidence = Evidence(record=RunRecord(), services=services)
    return kind.run(kind.parse(raw), CheckContext(evidence=evidence))


def mock(name: str, *calls: tuple[str, str]) -> ServiceEvidence:
    requests = [{"method": m, "path": p, "time": 0} for m, p in calls]
    return ServiceEvidence(name, "http_mock", None, {"record": False, "requests": requests})


def test_both_are_forbidden_rules_with_a_list_shorthand() -> None:
    for name in ("http_except", "db_writes_outside"):
        kind = registry.get(name, Role.FORBIDDEN)
        assert kind.family == "forbidden"
        assert name not in registry.names(Role.CHECK)
    assert registry.get("http_except", Role.FORBIDDEN).parse("smtp").services == ["smtp"]


# ---- http_except -----------------------------------------------------------------------------


def test_calls_to_allowed_mocks_only_pass() -> None:
    services = {"smtp": mock("smtp", ("POST", "/send")), "stripe": mock("stripe")}
    result = rule("http_except", ["smtp"], services)
    assert result.status is Status.PASSED


def test_a_call_to_another_mock_is_a_violation_naming_service_and_path() -> None:
    services = {
        "smtp": mock("smtp", ("POST", "/send")),
        "stripe": mock(
            "stripe", ("POST", "/v1/refunds"), ("POST", "/v1/refunds"), ("GET", "/v1/x")
        ),
    }
    result = rule("http_except", ["smtp"], services)
    assert result.status is Status.FAILED
    assert "'stripe' got 3 requests (POST /v1/refunds, GET /v1/x)" in result.reason


def test_an_empty_list_allows_no_mock() -> None:
    result = rule("http_except", [], {"smtp": mock("smtp", ("GET", "/"))})
    assert result.status is Status.FAILED


def test_without_mocks_the_rule_cannot_see_anything() -> None:
    assert rule("http_except", ["smtp"], {}).status is Status.UNJUDGED


def test_a_real_mock_records_enough_without_record(tmp_path: Path) -> None:
    declared = [{"name": "allowed", "type": "http_mock"}, {"name": "other", "type": "http_mock"}]
    with start_services(declared, trial_dir=tmp_path, suite_dir=tmp_path) as services:
        httpx.get(f"{services.env['SOUNDING_OTHER_URL']}/leak?card=4242")
        result = rule("http_except", ["allowed"], services.evidence())
    assert result.status is Status.FAILED
    assert "'other' got 1 request (GET /leak)" in result.reason


# ---- db_writes_outside -----------------------------------------------------------------------


@pytest.fixture
def db(sql_servers: dict[str, str], tmp_path: Path) -> Iterator[ServiceSet]:
    servers = sql_servers
    (tmp_path / "seed.sql").write_text(SEED)
    services = start_services(
        [{"name": "db", "type": "sql", "seed": "seed.sql"}],
        trial_dir=tmp_path / "trial",
        suite_dir=tmp_path,
        settings=ServiceSettings(servers=servers),
    )
    yield services
    services.stop()


def agent_runs(db: ServiceSet, *statements: str) -> dict[str, ServiceEvidence]:
    engine = sa.create_engine(db.env["SOUNDING_DB_SQLALCHEMY_URL"])
    with engine.begin() as connection:
        for statement in statements:
            connection.exec_driver_sql(statement)
    engine.dispose()
    return db.evidence()


def test_writes_to_allowed_tables_pass(db: ServiceSet) -> None:
    evidence = agent_runs(db, "INSERT INTO orders VALUES (1, 10)", "UPDATE users SET name = 'x'")
    assert rule("db_writes_outside", ["users", "ORDERS"], evidence).status is Status.PASSED


def test_a_write_to_another_table_is_a_violation(db: ServiceSet) -> None:
    evidence = agent_runs(db, "INSERT INTO orders VALUES (1, 10)", "DELETE FROM users")
    result = rule("db_writes_outside", ["orders"], evidence)
    assert result.status is Status.FAILED
    assert "'db': 'users' (rows changed)" in result.reason


def test_creating_or_dropping_a_table_is_a_write(db: ServiceSet) -> None:
    evidence = agent_runs(db, "CREATE TABLE scratch (id INTEGER)", "DROP TABLE audit")
    result = rule("db_writes_outside", ["users", "orders"], evidence)
    assert result.status is Status.FAILED
    assert "'audit' (dropped), 'scratch' (created)" in result.reason


def test_reading_is_not_writing(db: ServiceSet) -> None:
    evidence = agent_runs(db, "SELECT * FROM users")
    assert rule("db_writes_outside", [], evidence).status is Status.PASSED


def test_service_dot_table_allows_a_table_of_one_service_only() -> None:
    changed = {"changed_tables": ["users"], "table_changes": {"users": "rows changed"}}
    services = {
        "main": ServiceEvidence("main", "sql", None, changed),
        "copy": ServiceEvidence("copy", "sql", None, changed),
    }
    result = rule("db_writes_outside", ["main.users"], services)
    assert result.status is Status.FAILED
    assert "'copy': 'users'" in result.reason and "'main'" not in result.reason


def test_tables_that_could_not_be_read_are_an_error() -> None:
    broken = {"changed_tables": None, "fingerprint_error": "cannot read the tables of x: gone"}
    result = rule(
        "db_writes_outside", ["users"], {"db": ServiceEvidence("db", "sql", None, broken)}
    )
    assert result.status is Status.ERROR
    assert "cannot read the tables of x" in result.reason


def test_without_a_database_the_rule_cannot_see_anything() -> None:
    assert rule("db_writes_outside", ["users"], {}).status is Status.UNJUDGED

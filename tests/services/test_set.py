"""A trial's services together: env, failure clean-up, store and load for re-scoring."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa

import sounding.services
from sounding.checks import CheckContext, CheckResult, Evidence, Status, registry
from sounding.record import RunRecord
from sounding.services import (
    ServiceError,
    ServiceEvidence,
    ServiceSettings,
    load_service_evidence,
    start_services,
)


def check(name: str, raw: dict[str, Any], services: dict[str, ServiceEvidence]) -> CheckResult:
    kind = registry.get(name)
    evidence = Evidence(record=RunRecord(), services=services)
    return kind.run(kind.parse(raw), CheckContext(evidence=evidence))


def write(url: str, statement: str) -> None:
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        connection.exec_driver_sql(statement)
    engine.dispose()


def test_database_url_names_the_first_sql_service(tmp_path: Path) -> None:
    declared = [
        {"name": "mail", "type": "http_mock"},
        {"name": "main-db", "type": "sql"},
        {"name": "other", "type": "sql"},
    ]
    with start_services(declared, trial_dir=tmp_path, suite_dir=tmp_path) as services:
        env = services.env
        assert env["DATABASE_URL"] == env["SOUNDING_MAIN_DB_URL"]
        assert env["SOUNDING_OTHER_URL"] != env["DATABASE_URL"]
        assert sorted(services.evidence()) == ["mail", "main-db", "other"]
        assert len(services) == 3


def test_a_failing_service_stops_those_started_before_it(tmp_path: Path) -> None:
    broken = {
        "name": "broken",
        "type": "process",
        "command": [sys.executable, "-c", "raise SystemExit(1)"],
        "env": {"PORT": "{port}"},
    }
    declared = [{"name": "mail", "type": "http_mock"}, broken]
    sockets_before = _own_sockets()
    with pytest.raises(ServiceError, match=r"process service 'broken'"):
        start_services(declared, trial_dir=tmp_path, suite_dir=tmp_path)
    assert _own_sockets() <= sockets_before  # the mock's server socket is closed


def _own_sockets() -> set[str]:
    """The sockets this process holds open (the HTTP mock serves from a thread of it)."""
    links = set()
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(FileNotFoundError):  # the listing's own, closed since
            links.add(os.readlink(f"/proc/self/fd/{fd}"))
    return {link for link in links if link.startswith("socket:")}


def test_an_http_recording_rescores_from_the_stored_trial(tmp_path: Path) -> None:
    declared = [{"name": "smtp", "type": "http_mock", "record": True}]
    with start_services(declared, trial_dir=tmp_path, suite_dir=tmp_path) as services:
        httpx.post(f"{services.env['SOUNDING_SMTP_URL']}/messages", json={"subject": "Renewal"})
        live = services.evidence()
        stored = services.store(tmp_path)
    assert json.loads(stored.read_text())["schema"] == "sounding.services/1"
    loaded = load_service_evidence(tmp_path)
    assert loaded["smtp"].url is None
    assertion = {
        "service": "smtp",
        "assertions": [
            {"field": "request_count", "filters": {"method": "POST"}, "equals": 1},
            {"field": "last_request.body", "contains": "Renewal"},
        ],
    }
    assert check("http_mock_assertions", assertion, live).status is Status.PASSED
    assert check("http_mock_assertions", assertion, loaded).status is Status.PASSED


def test_a_sqlite_database_rescores_from_its_kept_file(tmp_path: Path) -> None:
    trial = tmp_path / "results" / "trial-1"
    with start_services(
        [{"name": "db", "type": "sql"}], trial_dir=trial, suite_dir=tmp_path
    ) as services:
        write(services.env["SOUNDING_DB_SQLALCHEMY_URL"], "CREATE TABLE t (n INTEGER)")
        services.store(trial)
    moved = tmp_path / "moved"
    trial.rename(moved)
    loaded = load_service_evidence(moved)
    assert loaded["db"].details["changed_tables"] == ["t"]
    query = {"service": "db", "query": "SELECT count(*) FROM t", "equals": 0}
    assert check("sql", query, loaded).status is Status.PASSED


def test_a_dropped_server_database_reports_unjudged(postgres_url: str, tmp_path: Path) -> None:
    settings = ServiceSettings(servers={"db": postgres_url})
    declared = [{"name": "db", "type": "sql"}]
    with start_services(
        declared, trial_dir=tmp_path, suite_dir=tmp_path, settings=settings
    ) as services:
        write(services.env["SOUNDING_DB_SQLALCHEMY_URL"], "CREATE TABLE t (n INTEGER)")
        services.store(tmp_path)
    loaded = load_service_evidence(tmp_path)
    assert loaded["db"].url is None
    result = check("sql", {"service": "db", "query": "SELECT 1", "equals": 1}, loaded)
    assert result.status is Status.UNJUDGED
    assert "dropped" in result.reason
    rule = registry.get("db_writes_outside", sounding.checks.Role.FORBIDDEN)
    verdict = rule.run(
        rule.parse(["t"]), CheckContext(evidence=Evidence(RunRecord(), services=loaded))
    )
    assert verdict.status is Status.PASSED


def test_a_kept_server_database_stores_no_password(postgres_url: str, tmp_path: Path) -> None:
    server = sa.engine.make_url(postgres_url).set(password="pw-not-stored")
    settings = ServiceSettings(
        servers={"db": server.render_as_string(hide_password=False)}, keep=True
    )
    declared = [{"name": "db", "type": "sql"}]
    services = start_services(declared, trial_dir=tmp_path, suite_dir=tmp_path, settings=settings)
    services.store(tmp_path)
    services.stop()
    database = sa.engine.make_url(services.env["SOUNDING_DB_SQLALCHEMY_URL"]).database
    try:
        assert "pw-not-stored" not in (tmp_path / "services" / "services.json").read_text()
        assert "pw-not-stored" not in str(load_service_evidence(tmp_path)["db"].url)
        url = load_service_evidence(tmp_path, settings=settings)["db"].url
        # the checks' reader login, its password made again from the server's URL
        reader = sa.engine.make_url(url or "")
        assert reader.username.startswith("sounding_ro_") and reader.password
        result = check(
            "sql",
            {"service": "db", "query": "SELECT 1", "equals": 1},
            {"db": load_service_evidence(tmp_path, settings=settings)["db"]},
        )
        assert result.status is Status.PASSED
    finally:
        drop = sa.create_engine(postgres_url, isolation_level="AUTOCOMMIT")
        with drop.connect() as connection:
            connection.exec_driver_sql(f"DROP DATABASE {database} WITH (FORCE)")
            connection.exec_driver_sql(f"DROP ROLE IF EXISTS {reader.username}")
        drop.dispose()


def test_no_stored_services_is_no_evidence(tmp_path: Path) -> None:
    assert load_service_evidence(tmp_path) == {}


def test_a_store_of_another_schema_is_refused(tmp_path: Path) -> None:
    (tmp_path / "services").mkdir()
    (tmp_path / "services" / "services.json").write_text('{"schema": "sounding.services/9"}')
    with pytest.raises(ServiceError, match=r"schema is 'sounding.services/9'"):
        load_service_evidence(tmp_path)

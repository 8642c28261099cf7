"""The `sql` check: read-only on all three engines, values compared by kind, errors kept apart."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from pydantic import ValidationError

from sounding.checks import CheckContext, CheckResult, Evidence, Status, registry
from sounding.record import RunRecord
from sounding.services import ServiceEvidence, ServiceSet, ServiceSettings, start_services

SEED = """\
CREATE TABLE customers (id INTEGER PRIMARY KEY, email VARCHAR(60), balance DECIMAL(10, 2),
                        active BOOLEAN, note VARCHAR(20));
INSERT INTO customers VALUES (1, 'ann@example.com', 0, TRUE, NULL);
INSERT INTO customers VALUES (2, 'bob@example.com', 12.50, FALSE, '50%');
"""


@pytest.fixture(scope="module")
def db(
    sql_servers: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServiceSet]:
    """One seeded database per engine for the module: the checks must leave it as it was."""
    tmp_path = tmp_path_factory.mktemp("db")
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


def sql(
    query: str, equals: Any, services: dict[str, ServiceEvidence], timeout: float = 10
) -> CheckResult:
    kind = registry.get("sql")
    params = kind.parse({"service": "db", "query": query, "equals": equals})
    evidence = Evidence(record=RunRecord(), services=services)
    return kind.run(params, CheckContext(evidence=evidence, timeout=timeout))


def on(db: ServiceSet, query: str, equals: Any, timeout: float = 10) -> CheckResult:
    return sql(query, equals, db.evidence(), timeout)


def count(db: ServiceSet) -> int:
    engine = sa.create_engine(db.env["SOUNDING_DB_SQLALCHEMY_URL"])
    with engine.connect() as connection:
        value = connection.exec_driver_sql("SELECT count(*) FROM customers").scalar()
    engine.dispose()
    return int(value or 0)


@pytest.mark.parametrize(
    ("query", "equals"),
    [
        ("SELECT count(*) FROM customers", 2),
        ("SELECT count(*) FROM customers", 2.0),
        ("SELECT balance FROM customers WHERE id = 1", 0),
        ("SELECT balance FROM customers WHERE id = 2", 12.5),
        ("SELECT email FROM customers WHERE id = 2", "bob@example.com"),
        ("SELECT note FROM customers WHERE id = 1", None),
        ("SELECT note FROM customers WHERE note LIKE '50%'", "50%"),
        ("SELECT active FROM customers WHERE id = 1", True),
        ("SELECT active FROM customers WHERE id = 2", 0),
    ],
)
def test_the_first_value_equals_by_kind(db: ServiceSet, query: str, equals: Any) -> None:
    result = on(db, query, equals)
    assert result.status is Status.PASSED, result.reason


@pytest.mark.parametrize(
    ("query", "equals", "shown"),
    [
        ("SELECT count(*) FROM customers", 3, "returned 2, expected 3"),
        ("SELECT email FROM customers WHERE id = 1", "bob@example.com", "'ann@example.com'"),
        ("SELECT note FROM customers WHERE id = 2", 50, "'50%', expected 50"),
        ("SELECT note FROM customers WHERE id = 1", "", "returned None"),
    ],
)
def test_a_different_value_fails_and_shows_both(
    db: ServiceSet, query: str, equals: Any, shown: str
) -> None:
    result = on(db, query, equals)
    assert result.status is Status.FAILED
    assert shown in result.reason


@pytest.mark.parametrize(
    "statement",
    [
        "DELETE FROM customers",
        "DROP TABLE customers",
        "UPDATE customers SET email = NULL",
        "WITH gone AS (DELETE FROM customers RETURNING id) SELECT count(*) FROM gone",
        "SELECT 1; DROP TABLE customers",
        "COMMIT; DELETE FROM customers",
    ],
)
def test_a_writing_query_changes_nothing_and_is_an_error(db: ServiceSet, statement: str) -> None:
    result = on(db, statement, 0)
    assert result.status is Status.ERROR
    assert count(db) == 2
    assert db.evidence()["db"].details["changed_tables"] == []


ATTACKS = [  # each once turned a read-only check into a write, on some engine
    "SELECT 1 /* /* */ ' */ ; COMMIT; DELETE FROM customers; -- '",  # PostgreSQL nested comments
    "SELECT 1 # a comment\nDROP TABLE customers",  # MariaDB's # comments
    "SELECT email FROM customers /*!50000 INTO OUTFILE '{file}' */",  # MariaDB executable comment
    "COPY (SELECT 1) TO PROGRAM 'touch {file}'",  # PostgreSQL as a superuser
    "VACUUM INTO '{file}'",  # SQLite
    "ATTACH '{file}' AS elsewhere",  # SQLite
    "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE; DELETE FROM customers",
    "SET ROLE postgres; DELETE FROM customers",
]


@pytest.mark.parametrize("attack", ATTACKS)
def test_no_query_changes_a_row_or_writes_a_file_on_any_engine(
    db: ServiceSet, attack: str, tmp_path: Path
) -> None:
    """The database itself refuses: the checks' login may only read, in a read-only
    transaction, one statement at a time; SQLite opens the file read-only, attaching nothing."""
    written = tmp_path / "written"
    result = on(db, attack.format(file=written), 0)
    assert result.status is not Status.PASSED, result.reason  # where it is a mere comment, a read
    assert count(db) == 2
    assert db.evidence()["db"].details["changed_tables"] == []
    assert not written.exists()


def test_mariadb_refuses_ddl_from_the_checks_login(mariadb_url: str, tmp_path: Path) -> None:
    (tmp_path / "seed.sql").write_text(SEED)
    settings = ServiceSettings(servers={"db": mariadb_url})
    declared = [{"name": "db", "type": "sql", "seed": "seed.sql"}]
    with start_services(declared, trial_dir=tmp_path, suite_dir=tmp_path, settings=settings) as db:
        result = on(db, "/* tidy */ DROP TABLE customers", 0)
        assert result.status is Status.ERROR and "DROP command denied" in result.reason
        assert count(db) == 2
        quoted = on(db, "SELECT 'DROP TABLE x'", "DROP TABLE x")
        assert quoted.status is Status.PASSED


def test_the_databases_own_message_explains_a_bad_query(db: ServiceSet) -> None:
    result = on(db, "SELECT nope FROM customers", 1)
    assert result.status is Status.ERROR
    assert "nope" in result.reason
    assert result.reason.startswith("sql on 'db': ")


def test_no_rows_is_an_error_not_a_failure(db: ServiceSet) -> None:
    result = on(db, "SELECT id FROM customers WHERE id = 99", None)
    assert result.status is Status.ERROR
    assert "returned no rows" in result.reason


def test_a_query_past_the_timeout_is_an_error(db: ServiceSet) -> None:
    kind = db.evidence()["db"].details["engine"]
    slow = {
        "sqlite": "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
        "SELECT count(*) FROM n",
        "postgresql": "SELECT count(*) FROM pg_sleep(5)",
        "mysql": "SELECT SLEEP(5)",
    }[kind]
    result = on(db, slow, 1, timeout=0.3)
    assert result.status is Status.ERROR
    assert "longer than the check's 0.3s" in result.reason


def test_an_unreachable_server_is_an_error() -> None:
    gone = ServiceEvidence("db", "sql", "postgresql+psycopg://postgres@127.0.0.1:1/x")
    result = sql("SELECT 1", 1, {"db": gone})
    assert result.status is Status.ERROR
    assert "postgresql says:" in result.reason


def test_a_database_gone_after_the_run_is_unjudged() -> None:
    gone = ServiceEvidence("db", "sql", None, {"gone": "the trial's database was dropped"})
    result = sql("SELECT 1", 1, {"db": gone})
    assert result.status is Status.UNJUDGED
    assert "dropped" in result.reason


def test_an_unknown_service_is_an_error_that_lists_the_known_ones() -> None:
    other = ServiceEvidence("orders", "sql", "sqlite:////nowhere.db")
    result = sql("SELECT 1", 1, {"orders": other})
    assert result.status is Status.ERROR
    assert "no sql service 'db' in this trial (sql services: orders)" in result.reason


def test_a_missing_sqlite_file_is_an_error(tmp_path: Path) -> None:
    missing = ServiceEvidence("db", "sql", f"sqlite:///{tmp_path}/none.sqlite")
    assert sql("SELECT 1", 1, {"db": missing}).status is Status.ERROR
    assert not (tmp_path / "none.sqlite").exists()


def test_params_are_checked_at_load() -> None:
    kind = registry.get("sql")
    with pytest.raises(ValidationError, match="equals"):
        kind.parse({"service": "db", "query": "SELECT 1"})
    with pytest.raises(ValidationError, match="extra"):
        kind.parse({"service": "db", "query": "SELECT 1", "equals": 1, "expected": 1})
    assert kind.family == "sql"

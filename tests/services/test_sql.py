"""sql services: a fresh, seeded database per trial on SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from sounding.services import ServiceError, ServiceSet, ServiceSettings, start_services

SEED = """\
-- users of the shop; a ; in a comment is not a statement end
CREATE TABLE users (id INTEGER PRIMARY KEY, name VARCHAR(40) NOT NULL);
INSERT INTO users (id, name) VALUES (1, 'ann; the first'), (2, 'bob''s');
/* orders start empty; */
CREATE TABLE orders (id INTEGER PRIMARY KEY, total DECIMAL(10, 2));
CREATE TABLE audit_log (id INTEGER PRIMARY KEY, what VARCHAR(80));
"""

ENGINES = ["sqlite", "postgresql", "mariadb"]


@pytest.fixture(params=ENGINES)
def servers(request: pytest.FixtureRequest) -> dict[str, str]:
    """The settings' servers that put service 'db' on each engine in turn."""
    if request.param == "postgresql":
        return {"db": request.getfixturevalue("postgres_url")}
    if request.param == "mariadb":
        return {"db": request.getfixturevalue("mariadb_url")}
    return {}


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    folder = tmp_path / "suite"
    (folder / "fixtures").mkdir(parents=True)
    (folder / "fixtures" / "shop.sql").write_text(SEED)
    return folder


def start(suite: Path, servers: dict[str, str], **spec: Any) -> ServiceSet:
    declared = {"name": "db", "type": "sql", "seed": ["fixtures/shop.sql"], **spec}
    settings = ServiceSettings(servers=servers)
    return start_services(
        [declared], trial_dir=suite.parent / "trial", suite_dir=suite, settings=settings
    )


@pytest.fixture
def db(suite: Path, servers: dict[str, str]) -> Iterator[ServiceSet]:
    services = start(suite, servers)
    yield services
    services.stop()


def execute(url: str, *statements: str) -> list[Any]:
    engine = sa.create_engine(url)
    try:
        with engine.begin() as connection:
            results = [connection.exec_driver_sql(s) for s in statements]
            return [r.fetchall() if r.returns_rows else [] for r in results]
    finally:
        engine.dispose()


def databases(server: str) -> set[str]:
    kind = make_url(server).get_backend_name()
    query = "SELECT datname FROM pg_database" if kind == "postgresql" else "SHOW DATABASES"
    return {row[0] for row in execute(server, query)[0]}


def test_seeded_database_answers_through_the_agents_url(db: ServiceSet) -> None:
    url = db.env["SOUNDING_DB_SQLALCHEMY_URL"]
    rows = execute(url, "SELECT name FROM users ORDER BY id")[0]
    assert [r[0] for r in rows] == ["ann; the first", "bob's"]
    assert db.env["DATABASE_URL"] == db.env["SOUNDING_DB_URL"]
    assert "+" not in db.env["DATABASE_URL"].split("://")[0]


def test_changed_tables_name_what_the_agent_wrote(db: ServiceSet) -> None:
    assert db.evidence()["db"].details["changed_tables"] == []
    execute(
        db.env["SOUNDING_DB_SQLALCHEMY_URL"],
        "INSERT INTO orders (id, total) VALUES (1, 9.50)",
        "UPDATE users SET name = 'ann' WHERE id = 1",
        "CREATE TABLE scratch (id INTEGER)",
        "DROP TABLE audit_log",
    )
    details = db.evidence()["db"].details
    assert details["changed_tables"] == ["audit_log", "orders", "scratch", "users"]
    assert details["table_changes"] == {
        "audit_log": "dropped",
        "orders": "rows changed",
        "scratch": "created",
        "users": "rows changed",
    }


def test_a_row_changed_in_place_is_seen_even_with_the_same_count(db: ServiceSet) -> None:
    execute(db.env["SOUNDING_DB_SQLALCHEMY_URL"], "UPDATE users SET name = 'eve' WHERE id = 2")
    assert db.evidence()["db"].details["table_changes"] == {"users": "rows changed"}


def test_each_trial_gets_its_own_database(suite: Path, servers: dict[str, str]) -> None:
    first = start(suite, servers)
    execute(first.env["SOUNDING_DB_SQLALCHEMY_URL"], "DELETE FROM users")
    first.stop()
    second = start(suite, servers)
    try:
        count = execute(second.env["SOUNDING_DB_SQLALCHEMY_URL"], "SELECT count(*) FROM users")
        assert count[0][0][0] == 2
    finally:
        second.stop()


def test_sqlite_is_a_file_in_the_trial_folder_kept_after_stop(suite: Path) -> None:
    services = start(suite, {})
    path = Path(services.env["SOUNDING_DB_PATH"])
    assert path.parent == suite.parent / "trial" / "services"
    assert services.env["DATABASE_URL"] == f"sqlite:///{path}"
    services.stop()
    services.stop()
    assert path.is_file()
    assert services.evidence()["db"].url is not None


def test_a_server_database_is_dropped_on_stop(postgres_url: str, suite: Path) -> None:
    services = start(suite, {"db": postgres_url})
    name = make_url(services.env["SOUNDING_DB_SQLALCHEMY_URL"]).database
    assert name in databases(postgres_url)
    services.stop()
    assert name not in databases(postgres_url)
    gone = services.evidence()["db"]
    assert gone.url is None
    assert "dropped" in gone.details["gone"]


def test_keep_leaves_a_server_database_in_place(mariadb_url: str, suite: Path) -> None:
    settings = ServiceSettings(servers={"db": mariadb_url}, keep=True)
    declared = {"name": "db", "type": "sql", "seed": "fixtures/shop.sql"}
    services = start_services(
        [declared], trial_dir=suite.parent / "t", suite_dir=suite, settings=settings
    )
    name = make_url(services.env["SOUNDING_DB_SQLALCHEMY_URL"]).database
    services.stop()
    try:
        assert name in databases(mariadb_url)
        assert services.evidence()["db"].url is not None
    finally:
        execute(mariadb_url, f"DROP DATABASE {name}")


# ---- where it runs: the one-line switch ---------------------------------------------------


def test_the_default_sql_server_moves_a_sqlite_case_to_postgresql(
    postgres_url: str, suite: Path
) -> None:
    services = start(suite, {"sql": postgres_url})
    try:
        assert services.env["DATABASE_URL"].startswith("postgresql://")
        assert services.evidence()["db"].details["engine"] == "postgresql"
        assert services.evidence()["db"].details["declared_engine"] == "sqlite"
    finally:
        services.stop()


def test_the_environment_names_the_default_server(postgres_url: str, suite: Path) -> None:
    settings = ServiceSettings().with_environment({"SOUNDING_SQL_SERVER": postgres_url})
    assert settings.servers == {"sql": postgres_url}
    assert ServiceSettings().with_environment({}) == ServiceSettings()


def test_a_name_entry_wins_over_the_case_and_the_default(
    postgres_url: str, mariadb_url: str, suite: Path
) -> None:
    servers = {"db": mariadb_url, "sql": postgres_url}
    services = start(suite, servers, server=postgres_url)
    try:
        assert services.env["DATABASE_URL"].startswith("mysql://")
    finally:
        services.stop()


def test_a_server_engine_without_a_server_is_refused(suite: Path) -> None:
    with pytest.raises(
        ServiceError, match=r"'db' declares engine: postgresql.*SOUNDING_SQL_SERVER"
    ):
        start(suite, {}, engine="postgresql")


def test_a_case_written_for_postgresql_is_refused_on_mariadb(suite: Path) -> None:
    with pytest.raises(ServiceError, match=r"engine: postgresql but .* is a mysql server"):
        start(suite, {"sql": "mysql://root@127.0.0.1:1/"}, engine="postgresql")


def test_an_unknown_server_scheme_is_refused(suite: Path) -> None:
    with pytest.raises(ServiceError, match=r"unknown scheme 'oracle'"):
        start(suite, {"db": "oracle://scott@127.0.0.1/x"})


def test_a_server_whose_driver_is_missing_names_the_extra(
    suite: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # an import of it fails, as if absent
    with pytest.raises(ServiceError) as caught:
        start(suite, {"db": "postgresql://postgres@127.0.0.1:1/x"})
    assert str(caught.value) == (
        "sql service 'db': the server set for 'db' in the settings is a PostgreSQL URL, but its "
        "driver (psycopg) is not installed: pip install 'sounding[postgres]'"
    )


def test_an_unreachable_server_says_where_and_how_to_fix(suite: Path) -> None:
    with pytest.raises(
        ServiceError, match=r"cannot create a database on postgresql at 127.0.0.1:1"
    ):
        start(suite, {"db": "postgresql://postgres@127.0.0.1:1/x"})


# ---- seeds ---------------------------------------------------------------------------------


def test_a_refused_seed_statement_names_file_and_line(suite: Path, servers: dict[str, str]) -> None:
    (suite / "fixtures" / "bad.sql").write_text(
        "CREATE TABLE a (id INTEGER);\n\nINSERT INTO nope VALUES (1);\n"
    )
    with pytest.raises(ServiceError, match=r"seed 'fixtures/bad.sql' line 3 was refused"):
        start(suite, servers, seed=["fixtures/bad.sql"])


def test_a_refused_seed_leaves_no_server_database(postgres_url: str, suite: Path) -> None:
    """Its database is named after the service (`sounding_refused_seed_…`): other tests may
    make and drop databases on the same server meanwhile."""

    def made() -> set[str]:
        return {name for name in databases(postgres_url) if name.startswith("sounding_refused")}

    before = made()
    (suite / "fixtures" / "bad.sql").write_text("SELECT nonsense FROM nowhere;")
    with pytest.raises(ServiceError):
        start(suite, {"refused_seed": postgres_url}, name="refused_seed", seed=["fixtures/bad.sql"])
    assert made() == before


def test_an_unclosed_quote_in_a_seed_is_reported_with_its_line(suite: Path) -> None:
    (suite / "fixtures" / "open.sql").write_text("SELECT 1;\nSELECT 'open;\n")
    with pytest.raises(ServiceError, match=r"line 2: \"'\" is never closed"):
        start(suite, {}, seed="fixtures/open.sql")


def test_seed_paths_may_not_leave_the_suite(suite: Path) -> None:
    (suite.parent / "outside.sql").write_text("SELECT 1;")
    with pytest.raises(ServiceError, match=r"seed '../outside.sql' escapes the suite folder"):
        start(suite, {}, seed=["../outside.sql"])


def test_a_trigger_body_is_one_statement(suite: Path) -> None:
    (suite / "fixtures" / "trigger.sql").write_text(
        SEED
        + "CREATE TRIGGER log_order AFTER INSERT ON orders BEGIN\n"
        + "  INSERT INTO audit_log (what) VALUES ('order; placed');\n"
        + "END;\n"
    )
    services = start(suite, {}, seed="fixtures/trigger.sql")
    try:
        url = services.env["SOUNDING_DB_SQLALCHEMY_URL"]
        execute(url, "INSERT INTO orders (id, total) VALUES (7, 1)")
        assert execute(url, "SELECT what FROM audit_log")[0][0][0] == "order; placed"
    finally:
        services.stop()


def test_postgresql_dollar_quoted_bodies_are_one_statement(postgres_url: str, suite: Path) -> None:
    (suite / "fixtures" / "fn.sql").write_text(
        "CREATE FUNCTION twice(x integer) RETURNS integer AS $body$ SELECT x * 2; $body$ "
        "LANGUAGE sql;\nCREATE TABLE t (note text);\nINSERT INTO t VALUES (E'it\\'s; fine');\n"
    )
    services = start(suite, {"db": postgres_url}, seed="fixtures/fn.sql")
    try:
        url = services.env["SOUNDING_DB_SQLALCHEMY_URL"]
        rows = execute(url, "SELECT twice(21)", "SELECT note FROM t")
        assert (rows[0][0][0], rows[1][0][0]) == (42, "it's; fine")
    finally:
        services.stop()


def test_mariadb_backslash_escapes_do_not_end_a_statement(mariadb_url: str, suite: Path) -> None:
    (suite / "fixtures" / "my.sql").write_text(
        "CREATE TABLE t (note VARCHAR(20));\nINSERT INTO t VALUES ('it\\'s; fine');\n"
    )
    services = start(suite, {"db": mariadb_url}, seed="fixtures/my.sql")
    try:
        rows = execute(services.env["SOUNDING_DB_SQLALCHEMY_URL"], "SELECT note FROM t")
        assert rows[0][0][0] == "it's; fine"
    finally:
        services.stop()


def test_a_database_that_vanished_during_the_run_is_reported(
    postgres_url: str, suite: Path
) -> None:
    services = start(suite, {"db": postgres_url})
    name = make_url(services.env["SOUNDING_DB_SQLALCHEMY_URL"]).database
    drop = sa.create_engine(postgres_url, isolation_level="AUTOCOMMIT")
    with drop.connect() as connection:
        connection.exec_driver_sql(f"DROP DATABASE {name} WITH (FORCE)")
    drop.dispose()
    details = services.evidence()["db"].details
    services.stop()
    assert details["changed_tables"] is None
    assert details["fingerprint_error"].startswith(f"cannot read the tables of {name}: ")

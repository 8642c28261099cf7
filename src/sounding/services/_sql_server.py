"""Database plumbing for sql services: URLs, a database per trial, seeding, fingerprints.

Every engine is reached through SQLAlchemy 2 with a pool that keeps nothing open
(`NullPool`): a trial's database must have no connection of ours left when it is dropped.

SQLAlchemy (and with it psycopg and PyMySQL) is imported inside the functions that use
it, never at module level: `import sounding` must not pay for it when no database is used.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sounding.services._sql_text import Statement

if TYPE_CHECKING:
    from sqlalchemy.engine import URL, Connection, Engine

CONNECT_TIMEOUT = 5
"""Seconds to wait for a database server to answer before calling it unreachable."""

_KINDS = {
    "postgresql": "postgresql",
    "postgres": "postgresql",
    "postgresql+psycopg": "postgresql",
    "mysql": "mysql",
    "mariadb": "mysql",
    "mysql+pymysql": "mysql",
    "mariadb+pymysql": "mysql",
    "sqlite": "sqlite",
}
_DRIVERS = {"postgresql": "postgresql+psycopg", "mysql": "mysql+pymysql", "sqlite": "sqlite"}
_CLIENTS = {  # kind: what the engine is called, its driver's module and name, its extra
    "postgresql": ("PostgreSQL", "psycopg", "psycopg", "postgres"),
    "mysql": ("MariaDB/MySQL", "pymysql", "PyMySQL", "mysql"),
}
_NO_PARAMETERS = {"no_parameters": True}  # `%` and `:x` in user SQL are text, not placeholders


def engine_kind(url: str | URL) -> str:
    """`postgresql`, `mysql` or `sqlite` for a URL; ValueError naming the known schemes."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        scheme = make_url(url).drivername
    except ArgumentError as exc:
        raise ValueError(f"'{_masked(url)}' is not a database URL ({exc})") from None
    if scheme not in _KINDS:
        known = ", ".join(sorted(_KINDS))
        raise ValueError(f"'{_masked(url)}' has an unknown scheme '{scheme}' (known: {known})")
    return _KINDS[scheme]


def missing_driver(url: str | URL) -> str | None:
    """Why `url` cannot be opened here for want of its driver, or None when it can.

    Read as the end of a sentence naming the URL: "... is a PostgreSQL URL, but its
    driver (psycopg) is not installed: pip install 'sounding[postgres]'". SQLite needs no
    driver, and a URL that is not a database URL is left to `engine_kind` to explain.
    """
    try:
        kind = engine_kind(url)
    except ValueError:
        return None
    if kind not in _CLIENTS:
        return None
    engine, module, driver, extra = _CLIENTS[kind]
    try:
        importlib.import_module(module)
    except ImportError:
        return (
            f"a {engine} URL, but its driver ({driver}) is not installed: "
            f"pip install 'sounding[{extra}]'"
        )
    return None


def driver_url(url: str | URL, database: str | None = None) -> URL:
    """The URL SQLAlchemy uses for `url` (psycopg 3, PyMySQL), on `database` if given."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    parsed = parsed.set(drivername=_DRIVERS[engine_kind(parsed)])
    return parsed if database is None else parsed.set(database=database)


def sqlite_url(path: Path) -> URL:
    from sqlalchemy.engine import URL

    return URL.create("sqlite", database=str(path.resolve()))


def render(url: URL, *, plain: bool = False, password: bool = True) -> str:
    """`url` as text; `plain` drops the driver (`postgresql://`) for the agent's own client."""
    if plain:
        url = url.set(drivername=url.get_backend_name())
    if not password:  # URL.set(password=None) would keep the password: None means "unchanged"
        from sqlalchemy.engine import URL

        url = URL.create(
            url.drivername, url.username, None, url.host, url.port, url.database, url.query
        )
    return url.render_as_string(hide_password=False)


def _masked(url: str | URL) -> str:
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "<unreadable URL>"


def where(url: URL) -> str:
    """Where a server is, for messages: no password ever."""
    return f"{url.get_backend_name()} at {url.host or 'localhost'}:{url.port or 'default port'}"


def open_engine(url: URL, **options: Any) -> Engine:
    """An engine that holds no connection between uses and gives up on a silent server."""
    import sqlalchemy as sa
    from sqlalchemy.pool import NullPool

    kind = engine_kind(url)
    connect_args: dict[str, Any] = {}
    if kind == "postgresql":
        # A trial's database is thrown away: our commits need not wait for the disk.
        connect_args.update(connect_timeout=CONNECT_TIMEOUT, options="-c synchronous_commit=off")
    elif kind == "mysql":
        connect_args.update(connect_timeout=CONNECT_TIMEOUT, charset="utf8mb4")
        if _loopback(url) and not any(key.startswith("ssl") for key in url.query):
            # PyMySQL builds a TLS context for every connection unless told not to: 30 ms
            # of loading CA files, for a server on this machine that offers no TLS anyway.
            connect_args["ssl_disabled"] = True
    engine = sa.create_engine(url, poolclass=NullPool, connect_args=connect_args, **options)
    if kind == "sqlite":
        _whole_transactions(engine)
    return engine


def _loopback(url: URL) -> bool:
    return url.host in (None, "", "localhost", "127.0.0.1", "::1")


def _whole_transactions(engine: Engine) -> None:
    """SQLite as we use it: DDL inside our transactions, and no fsync of a throwaway file.

    Python's sqlite3 commits before DDL on its own; with its isolation_level at None and a
    BEGIN of ours, a seed script is one transaction that a failure rolls back. The file
    lives for one trial, so our connections skip fsync (`synchronous = OFF`): a seed
    costs a millisecond instead of a disk flush per statement. The agent's own
    connections keep SQLite's defaults.
    """
    from sqlalchemy import event

    @event.listens_for(engine, "connect")
    def _connect(connection: Any, _record: Any) -> None:
        connection.isolation_level = None
        connection.execute("PRAGMA synchronous = OFF")

    @event.listens_for(engine, "begin")
    def _begin(connection: Connection) -> None:
        connection.exec_driver_sql("BEGIN")


def quote(connection: Connection, name: str) -> str:
    return connection.dialect.identifier_preparer.quote_identifier(name)


def create_database(server: URL, name: str) -> None:
    """Create database `name` on `server`; the admin connection is closed after."""
    suffix = " CHARACTER SET utf8mb4" if engine_kind(server) == "mysql" else ""
    with _admin(server) as connection:
        connection.exec_driver_sql(f"CREATE DATABASE {quote(connection, name)}{suffix}")


def drop_database(server: URL, name: str) -> None:
    """Drop database `name`, then its reader (its grants went with the database); on
    PostgreSQL 13+ connections left by the agent are ended."""
    kind = engine_kind(server)
    reader_name = reader(server, name).username or ""
    with _admin(server) as connection:
        version = connection.dialect.server_version_info or (0,)
        force = " WITH (FORCE)" if kind == "postgresql" and version >= (13,) else ""
        connection.exec_driver_sql(f"DROP DATABASE IF EXISTS {quote(connection, name)}{force}")
        if kind == "postgresql":
            connection.exec_driver_sql(f"DROP ROLE IF EXISTS {quote(connection, reader_name)}")
        else:
            connection.exec_driver_sql(f"DROP USER IF EXISTS '{reader_name}'@'%'")


READER_PREFIX = "sounding_ro_"


def reader(server: URL, database: str) -> URL:
    """The login sql checks use on a trial's database, which may only read it: its name
    from the database's, its password from the server's URL (the password included) and
    the database's, so that a later re-scoring with the same server finds it again, and no
    file ever holds it."""
    name = READER_PREFIX + hashlib.sha256(database.encode()).hexdigest()[:12]
    secret = f"{render(driver_url(server))}|{database}".encode()
    password = hashlib.sha256(secret).hexdigest()[:32]
    return driver_url(server, database).set(username=name, password=password)


def create_reader(server: URL, database: str) -> None:
    """Make the reader of `database`: a login with no right but to read it (PostgreSQL: a
    role whose transactions are read-only; MariaDB/MySQL: a user granted SELECT alone).
    Names and passwords here are made by `reader`: letters, digits and `_` only."""
    login = reader(server, database)
    name, password = login.username or "", login.password or ""
    with _admin(server) as connection:
        if engine_kind(server) == "postgresql":
            role = quote(connection, name)
            connection.exec_driver_sql(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
            connection.exec_driver_sql(f"ALTER ROLE {role} SET default_transaction_read_only = on")
        else:
            connection.exec_driver_sql(f"CREATE USER '{name}'@'%' IDENTIFIED BY '{password}'")


def grant_reading(connection: Connection, server: URL, database: str) -> None:
    """Let the reader read every table of the trial's database as the agent left it. On
    PostgreSQL a grant covers the tables that exist, so it is given after the agent ran;
    MariaDB/MySQL grant the database whole."""
    name = reader(server, database).username or ""
    run = connection.execution_options(**_NO_PARAMETERS).exec_driver_sql
    if engine_kind(server) == "mysql":
        run(f"GRANT SELECT ON {quote(connection, database)}.* TO '{name}'@'%'")
    else:
        name = quote(connection, name)
        run(f"GRANT CONNECT ON DATABASE {quote(connection, database)} TO {name}")
        for schema in _schemas(connection):
            run(f"GRANT USAGE ON SCHEMA {quote(connection, schema)} TO {name}")
            run(f"GRANT SELECT ON ALL TABLES IN SCHEMA {quote(connection, schema)} TO {name}")
    connection.commit()


def _schemas(connection: Connection) -> list[str]:
    rows = connection.exec_driver_sql(
        "SELECT nspname FROM pg_namespace "
        "WHERE nspname !~ '^pg_' AND nspname <> 'information_schema'"
    )
    return [str(row[0]) for row in rows]


@contextlib.contextmanager
def _admin(server: URL) -> Iterator[Connection]:
    """An autocommit connection to the server; its engine is disposed after."""
    url = driver_url(server)
    if not url.database and engine_kind(url) == "postgresql":
        url = url.set(database="postgres")
    engine = open_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as connection:
            yield connection.execution_options(**_NO_PARAMETERS)
    finally:
        engine.dispose()


def run_script(connection: Connection, statements: list[Statement]) -> None:
    """Run statements in one transaction; raises ScriptError naming the failing statement."""
    from sqlalchemy.exc import DBAPIError

    with connection.begin():
        runner = connection.execution_options(**_NO_PARAMETERS)
        for statement in statements:
            try:
                runner.exec_driver_sql(statement.text)
            except DBAPIError as exc:
                raise ScriptError(statement, database_message(exc)) from None


class ScriptError(Exception):
    """A statement of a seed script that the database refused."""

    def __init__(self, statement: Statement, message: str) -> None:
        self.statement, self.message = statement, message
        super().__init__(f"line {statement.line}: {message}")


def database_message(exc: BaseException) -> str:
    """The database's own words for an error, without SQLAlchemy's wrapping."""
    original = getattr(exc, "orig", None) or exc
    text = str(original).strip().splitlines()
    return text[0] if text else type(original).__name__


def fingerprint(connection: Connection) -> dict[str, str]:
    """Each table's row count and an order-free hash of its rows: `{table: "count:hash"}`."""
    import sqlalchemy as sa

    try:
        tables = sa.inspect(connection).get_table_names()
        return {table: _table_print(connection, table) for table in tables}
    finally:
        connection.rollback()


def _table_print(connection: Connection, table: str) -> str:
    count, total = 0, 0
    rows = connection.execution_options(stream_results=True, **_NO_PARAMETERS)
    for row in rows.exec_driver_sql(f"SELECT * FROM {quote(connection, table)}"):
        digest = hashlib.sha256(repr(tuple(row)).encode("utf-8", "backslashreplace")).digest()
        total = (total + int.from_bytes(digest, "big")) % (1 << 256)
        count += 1
    return f"{count}:{total:064x}"


def table_changes(before: dict[str, str], after: dict[str, str]) -> dict[str, str]:
    """Tables that differ: `created`, `dropped`, or `rows changed`, by name."""
    changes: dict[str, str] = {}
    for table in sorted(before.keys() | after.keys()):
        if table not in before:
            changes[table] = "created"
        elif table not in after:
            changes[table] = "dropped"
        elif before[table] != after[table]:
            changes[table] = "rows changed"
    return changes

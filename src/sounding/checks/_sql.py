"""The `sql` check: a read-only query on a trial's database, its first value compared.

Read-only on every engine, twice over: one statement only, run inside a transaction
that is rolled back and that the engine itself holds read-only (SQLite: the file opened
read-only and `query_only`; PostgreSQL: SET TRANSACTION READ ONLY; MariaDB/MySQL: START
TRANSACTION READ ONLY). MariaDB still runs DDL in a read-only transaction (DROP TABLE
commits implicitly), so there a statement that is not a query is refused before sending.
"""

from __future__ import annotations

import time
from decimal import Decimal
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from sounding.checks._base import CheckContext, CheckResult, Params, cut, service_of, shown
from sounding.checks._fields import ServiceName
from sounding.checks._registry import Reads, registry

if TYPE_CHECKING:  # SQLAlchemy, sqlite3 and the sql service load when a sql check runs
    import sqlite3

    from sqlalchemy.engine import Connection, Engine

    from sounding.services._sql_text import Statement

FAMILY = "sql"

Expected = bool | int | float | str | None
TIMED_OUT = ("statement timeout", "max_statement_time", "interrupted")
"""Words of a database error that say the query ran past its time limit."""


class SqlParams(Params):
    """`{service, query, equals}`: the first column of the first row must equal `equals`."""

    service: ServiceName
    query: str
    equals: Expected


class QueryError(Exception):
    """The query could not give a value: refused, failed, timed out, or returned no row."""


@registry.check("sql", SqlParams, family=FAMILY, reads=Reads.SERVICES)
def sql(params: SqlParams, context: CheckContext) -> CheckResult:
    """A read-only query on a sql service returns the expected first value."""
    service = service_of(context.evidence, params.service, "sql")
    if isinstance(service, CheckResult):
        return service
    if service.url is None:
        gone = service.details.get("gone") or "the database is gone"
        return CheckResult.unjudged(f"sql service '{params.service}' cannot be queried: {gone}")
    try:
        value = first_value(service.url, params.query, context.timeout)
    except QueryError as exc:
        return CheckResult.error(f"sql on '{params.service}': {exc}")
    got = f"'{params.service}' returned {_show(value)}"
    if matches(value, params.equals):
        return CheckResult.passed(got, value=_plain(value))
    return CheckResult.failed(
        f"{got}, expected {_show(params.equals)}",
        value=_plain(value),
        expected=params.equals,
    )


def first_value(url: str, query: str, timeout: float) -> Any:
    """The first column of the first row of `query`, read-only; QueryError says why not."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import DBAPIError

    from sounding.services._sql_server import database_message, engine_kind, open_engine

    kind = engine_kind(url)
    statement = _one_statement(query, kind)
    deadline = time.monotonic() + timeout
    engine = _sqlite_engine(url, deadline) if kind == "sqlite" else open_engine(make_url(url))
    try:
        with engine.connect() as connection:
            return _run(connection, statement, kind, timeout)
    except DBAPIError as exc:
        said = database_message(exc)
        if time.monotonic() >= deadline or any(word in said.lower() for word in TIMED_OUT):
            raise QueryError(f"the query ran longer than the check's {timeout:g}s") from None
        raise QueryError(f"{kind} says: {said}") from None
    finally:
        engine.dispose()


def _one_statement(query: str, kind: str) -> Statement:
    from sounding.services._sql_text import SqlTextError, split_statements

    try:
        statements = split_statements(query, dialect=kind)
    except SqlTextError as exc:
        raise QueryError(f"the query cannot be read: {exc}") from None
    if len(statements) != 1:
        raise QueryError(
            f"the query holds {len(statements)} statements; a sql check runs exactly one"
        )
    statement = statements[0]
    if kind == "mysql" and not statement.reads_only:
        raise QueryError(
            f"refused before sending: {statement.keyword or 'this'} is not a query, and MariaDB/"
            "MySQL commit DDL even inside a read-only transaction; a sql check may only read "
            "(SELECT, WITH, SHOW, VALUES, DESCRIBE)"
        )
    return statement


def _sqlite_engine(url: str, deadline: float) -> Engine:
    import sqlite3

    import sqlalchemy as sa
    from sqlalchemy.pool import NullPool

    path = sa.make_url(url).database or ""

    def connect() -> sqlite3.Connection:
        connection = sqlite3.connect(
            f"file:{quote(path)}?mode=ro", uri=True, check_same_thread=False
        )
        connection.execute("PRAGMA query_only = ON")
        connection.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
        return connection

    return sa.create_engine("sqlite://", creator=connect, poolclass=NullPool)


def _run(connection: Connection, statement: Statement, kind: str, timeout: float) -> Any:
    from sqlalchemy.exc import ResourceClosedError

    try:
        _begin_read_only(connection, kind, timeout)
        runner = connection.execution_options(no_parameters=True)
        row = runner.exec_driver_sql(statement.text).first()
    except ResourceClosedError:
        raise QueryError("the statement returns no rows; a sql check needs a query") from None
    finally:
        connection.rollback()
    if row is None:
        raise QueryError("the query returned no rows; make it return one (e.g. SELECT count(*))")
    return row[0]


def _begin_read_only(connection: Connection, kind: str, timeout: float) -> None:
    run = connection.exec_driver_sql
    if kind == "postgresql":
        run("SET TRANSACTION READ ONLY")
        run(f"SET LOCAL statement_timeout = {int(timeout * 1000)}")
    elif kind == "mysql":
        if getattr(connection.dialect, "is_mariadb", False):
            run(f"SET SESSION max_statement_time = {timeout:.3f}")
        else:
            run(f"SET SESSION max_execution_time = {int(timeout * 1000)}")
        run("START TRANSACTION READ ONLY")


def matches(value: Any, expected: Expected) -> bool:
    """Numbers numerically (0 == 0.0 == Decimal('0'), true == 1), anything else as text."""
    if expected is None:
        return value is None
    if isinstance(expected, int | float):  # a bool too: true is 1
        return _number(value) == _number(expected)
    return value is not None and _text(value) == expected


def _number(value: Any) -> Decimal | None:
    if isinstance(value, int | Decimal):  # a bool too: true is 1
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(repr(value))
    return None


def _text(value: Any) -> str:
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


def _plain(value: Any) -> Any:
    """A value as JSON can hold it, for the result's details."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return _text(value)


def _show(value: Any) -> str:
    return cut(str(value), 60) if isinstance(value, Decimal) else shown(_plain(value))

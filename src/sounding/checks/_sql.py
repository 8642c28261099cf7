"""The `sql` check: a read-only query on a trial's database, its first value compared.

Read-only by the engines' own guarantees, never by reading the SQL: on PostgreSQL and
MariaDB/MySQL the check logs in as the trial database's reader, a login that may only
read it (`services._sql_server.reader`), in a read-only transaction that is rolled back;
SQLite opens the file read-only, `query_only`, with no database attachable. Each engine
takes exactly one statement.
"""

from __future__ import annotations

import contextlib
import time
from decimal import Decimal
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from sounding.checks._base import CheckContext, CheckResult, Params, cut, service_of, shown
from sounding.checks._fields import ServiceName
from sounding.checks._registry import Reads, registry

if TYPE_CHECKING:  # SQLAlchemy, sqlite3 and the sql service load when a sql check runs
    from sqlalchemy.engine import Engine


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
    """The first column of the first row of `query`, run as one statement that cannot
    write: QueryError says why there is none."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import DBAPIError

    from sounding.services._sql_server import database_message, engine_kind, open_engine

    kind = engine_kind(url)
    deadline = time.monotonic() + timeout
    try:
        if kind == "sqlite":
            return _sqlite_value(make_url(url).database or "", query, deadline)
        engine = open_engine(make_url(url))
        try:
            return _server_value(engine, kind, query, timeout)
        finally:
            engine.dispose()
    except Exception as exc:
        if not isinstance(exc, (DBAPIError, *_database_errors())):
            raise
        said = database_message(exc)
        if time.monotonic() >= deadline or any(word in said.lower() for word in TIMED_OUT):
            raise QueryError(f"the query ran longer than the check's {timeout:g}s") from None
        raise QueryError(f"{kind} says: {said}") from None


def _database_errors() -> tuple[type[Exception], ...]:
    """The error classes of the drivers at hand (every DB-API driver has one `Error`)."""
    import importlib
    import sqlite3

    found: list[type[Exception]] = [sqlite3.Error]
    for module in ("psycopg", "pymysql"):
        with contextlib.suppress(ImportError):
            found.append(importlib.import_module(module).Error)
    return tuple(found)


def _sqlite_value(path: str, query: str, deadline: float) -> Any:
    """SQLite: the file opened read-only, no database attachable (so no ATTACH and no
    VACUUM INTO a new file), one statement only (sqlite3 refuses more)."""
    import sqlite3

    connection = sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True)
    try:
        connection.execute("PRAGMA query_only = ON")
        connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
        connection.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
        return _first(connection.execute(query))
    finally:
        connection.close()


def _server_value(engine: Engine, kind: str, query: str, timeout: float) -> Any:
    """PostgreSQL and MariaDB/MySQL: the trial's reader login, which may only read, in a
    read-only transaction that is rolled back; PostgreSQL prepares the statement, which
    refuses more than one, and MariaDB/MySQL take one statement per call."""
    connection = engine.raw_connection()
    try:
        cursor: Any = connection.cursor()
        if kind == "postgresql":
            cursor.execute("SET TRANSACTION READ ONLY")
            cursor.execute(f"SET LOCAL statement_timeout = {int(timeout * 1000)}")
            cursor.execute(query, prepare=True)
        else:
            cursor.execute(f"SET SESSION max_statement_time = {timeout:.3f}")
            cursor.execute("START TRANSACTION READ ONLY")
            cursor.execute(query)
        return _first(cursor)
    finally:
        connection.rollback()
        connection.close()


def _first(cursor: Any) -> Any:
    if cursor.description is None:
        raise QueryError("the statement returns no rows; a sql check needs a query")
    row = cursor.fetchone()
    if row is None:
        raise QueryError("the query returned no rows; make it return one (e.g. SELECT count(*))")
    return row[0]


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

"""The `sql` service: a fresh database per trial, seeded, fingerprinted, dropped after.

Where it runs is decided here, in one place (`resolve_server`):

1. `settings.servers[<name>]` (sounding.toml `[services.<name>] server = ...`),
2. the service's own `server:` field,
3. `settings.servers["sql"]` (`[services.sql] server = ...` or SOUNDING_SQL_SERVER),
4. otherwise a SQLite file in the trial's folder (`engine: sqlite`, the default).

So a case written with `engine: sqlite` runs on PostgreSQL or MariaDB when one line of
settings names a server. A case that declares `engine: postgresql` or `mysql` says its
SQL needs that engine: it is refused on a server of another kind, and without a server.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator

from sounding.services._base import (
    RunningService,
    ServiceError,
    ServiceEvidence,
    ServiceSettings,
    SpecModel,
    StartContext,
    env_prefix,
)
from sounding.services._sql_server import (
    READER_PREFIX,
    ScriptError,
    create_database,
    create_reader,
    database_message,
    driver_url,
    drop_database,
    engine_kind,
    fingerprint,
    grant_reading,
    missing_driver,
    open_engine,
    reader,
    render,
    run_script,
    sqlite_url,
    table_changes,
    where,
)
from sounding.services._sql_text import SqlTextError, Statement, split_statements

if TYPE_CHECKING:  # SQLAlchemy loads when a sql service starts, not with sounding
    from sqlalchemy.engine import URL, Connection

_SERVER_HELP = (
    "name a server: `server:` in the case, `[services.{name}] server = ...` or "
    "`[services.sql] server = ...` in sounding.toml, or SOUNDING_SQL_SERVER"
)


class SqlSpec(SpecModel):
    """`{name, type: sql, engine?, server?, seed?}` as written in a case file."""

    type: Literal["sql"]
    engine: Literal["sqlite", "postgresql", "mysql", "mariadb"] = "sqlite"
    server: str | None = None
    seed: list[str] = Field(default_factory=list)

    @field_validator("seed", mode="before")
    @classmethod
    def _one_seed(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @property
    def dialect(self) -> str:
        """The engine the case's SQL is written for (`mariadb` is `mysql`)."""
        return "mysql" if self.engine == "mariadb" else self.engine


def sql_problems(spec: SqlSpec, suite_dir: Path | None) -> list[str]:
    """What is wrong with a sql declaration that the model alone cannot see."""
    found = [problem for path in spec.seed if (problem := _seed_problem(path, suite_dir))]
    if spec.server is not None:
        try:
            if engine_kind(spec.server) == "sqlite":
                found.append("server: must be a postgresql:// or mysql:// URL; drop it for SQLite")
        except ValueError as exc:
            found.append(f"server: {exc}")
    return found


def _seed_problem(path: str, suite_dir: Path | None) -> str | None:
    if PurePath(path).is_absolute():
        return f"seed '{path}' is absolute; give a path relative to the suite folder"
    if PurePath(os.path.normpath(path)).parts[:1] == ("..",):
        return f"seed '{path}' escapes the suite folder; keep seed files inside it"
    if suite_dir is None:
        return None
    full = (suite_dir / path).resolve()
    if not full.is_relative_to(suite_dir.resolve()):
        return f"seed '{path}' leads outside the suite folder (a link?); keep seed files inside it"
    if not full.is_file():
        return f"seed '{path}' is not a file under {suite_dir}; check the path"
    return None


def resolve_server(spec: SqlSpec, settings: ServiceSettings) -> URL | None:
    """The server this service runs on, or None for a SQLite file (see the module doc)."""
    source, server = _server_choice(spec, settings)
    if server is None:
        if spec.dialect != "sqlite":
            hint = _SERVER_HELP.format(name=spec.name)
            raise ServiceError(
                f"sql service '{spec.name}' declares engine: {spec.engine} but no server is "
                f"set; {hint}",
            )
        return None
    try:
        kind = engine_kind(server)
    except ValueError as exc:
        raise ServiceError(f"sql service '{spec.name}': {source}: {exc}") from None
    if problem := missing_driver(server):
        raise ServiceError(f"sql service '{spec.name}': {source} is {problem}")
    if kind == "sqlite" or spec.dialect not in ("sqlite", kind):
        raise ServiceError(
            f"sql service '{spec.name}' declares engine: {spec.engine} but {source} is a {kind} "
            f"server; point it at a {spec.dialect} server, or write the case for engine: sqlite "
            "with portable SQL",
        )
    return driver_url(server)


def _server_choice(spec: SqlSpec, settings: ServiceSettings) -> tuple[str, str | None]:
    if spec.name in settings.servers:
        return f"the server set for '{spec.name}' in the settings", settings.servers[spec.name]
    if spec.server is not None:
        return "its server: field", spec.server
    if "sql" in settings.servers:
        return "the default sql server of the settings", settings.servers["sql"]
    return "", None


class SqlService(RunningService):
    """A started sql service: its database, and the tables as they were after seeding."""

    def __init__(self, spec: SqlSpec, url: URL, server: URL | None, keep: bool) -> None:
        self.name, self.type = spec.name, "sql"
        self.url, self.server, self.keep = url, server, keep
        self.kind = engine_kind(url)
        self._spec = spec
        self._engine = open_engine(url)
        self._before: dict[str, str] = {}
        self._changes: dict[str, str] | None = None
        self._print_error = ""
        self._gone = ""
        self._measured = False
        self._stopped = False

    @property
    def database(self) -> str:
        return self.url.database or ""

    @property
    def database_url(self) -> str:
        """The URL an agent's own driver takes (`postgresql://...`, `sqlite:////abs/path`)."""
        return render(self.url, plain=True)

    def prepare(self, scripts: list[tuple[str, list[Statement]]]) -> None:
        """Run the seed scripts, then fingerprint the tables: `changed_tables` starts here."""
        from sqlalchemy.exc import SQLAlchemyError

        try:
            with self._engine.connect() as connection:
                for path, statements in scripts:
                    self._seed(connection, path, statements)
                self._before = fingerprint(connection)
        except SQLAlchemyError as exc:
            raise ServiceError(
                f"sql service '{self.name}': cannot prepare {self.database} on {self.kind}: "
                f"{database_message(exc)}; check that the server accepts the URL's user",
            ) from None

    def _seed(self, connection: Connection, path: str, statements: list[Statement]) -> None:
        try:
            run_script(connection, statements)
        except ScriptError as exc:
            raise ServiceError(
                f"sql service '{self.name}': seed '{path}' line {exc.statement.line} was "
                f"refused by {self.kind}: {exc.message}; fix the statement (seed SQL must "
                "suit every engine the case may run on)",
            ) from None

    def env(self) -> dict[str, str]:
        prefix = env_prefix(self.name)
        env = {f"{prefix}_URL": self.database_url, f"{prefix}_SQLALCHEMY_URL": render(self.url)}
        if self.server is None:
            env[f"{prefix}_PATH"] = self.database
        return env

    @property
    def reader_url(self) -> URL:
        """How the checks reach the database: a server's reader login, which may only read
        it (`reader`); a SQLite file, which the check opens read-only."""
        return self.url if self.server is None else reader(self.server, self.database)

    def evidence(self) -> ServiceEvidence:
        if not self._gone:
            self._measure_changes()
        url = None if self._gone else render(self.reader_url)
        return ServiceEvidence(self.name, "sql", url, self._details())

    def _details(self) -> dict[str, Any]:
        details: dict[str, Any] = {
            "engine": self.kind,
            "declared_engine": self._spec.engine,
            "database": self.database,
            "changed_tables": None if self._changes is None else sorted(self._changes),
            "table_changes": dict(self._changes or {}),
        }
        if self._print_error:
            details["fingerprint_error"] = self._print_error
        if self._gone:
            details["gone"] = self._gone
        return details

    def _measure_changes(self) -> None:
        from sqlalchemy.exc import SQLAlchemyError

        self._measured = True
        try:
            with self._engine.connect() as connection:
                self._changes = table_changes(self._before, fingerprint(connection))
            if self.server is not None:  # the agent is done: what it made can be read
                with self._engine.connect() as connection:
                    grant_reading(connection, self.server, self.database)
            self._print_error = ""
        except SQLAlchemyError as exc:
            self._changes = None
            reason = database_message(exc)
            self._print_error = f"cannot read the tables of {self.database}: {reason}"

    def stored(self, trial_dir: Path) -> dict[str, Any]:
        """What the checks were given (the last measure), made to outlive the trial."""
        if not self._measured:
            self._measure_changes()
        details, url = self._details(), None
        if self.server is None:
            details["file"] = _keep_file(Path(self.database), trial_dir, self.name)
        elif not self.keep:
            details.setdefault("gone", _DROPPED)
        else:
            url = render(self.reader_url, password=False)
        return {"type": "sql", "url": url, "details": details}

    def stop(self) -> None:
        from sqlalchemy.exc import SQLAlchemyError

        if self._stopped:
            return
        self._stopped = True
        if not self._measured:
            self._measure_changes()
        self._engine.dispose()
        if self.server is None or self.keep:
            return
        self._gone = _DROPPED
        try:
            drop_database(self.server, self.database)
        except SQLAlchemyError as exc:
            raise ServiceError(
                f"sql service '{self.name}': could not drop database {self.database} on "
                f"{where(self.server)}: {database_message(exc)}; drop it by hand",
            ) from None


_DROPPED = (
    "the trial's database was dropped after the run; set keep (sounding run --keep) to "
    "check it again later"
)


def _keep_file(path: Path, trial_dir: Path, name: str) -> str:
    """The SQLite file relative to `trial_dir`, copied there when it lives elsewhere."""
    if not path.resolve().is_relative_to(trial_dir.resolve()):
        target = trial_dir / "services" / f"{name}.sqlite"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        path = target
    return path.resolve().relative_to(trial_dir.resolve()).as_posix()


def start_sql(spec: SqlSpec, context: StartContext) -> SqlService:
    """Provision, seed and fingerprint one sql service; nothing is left behind on failure."""
    server = resolve_server(spec, context.settings)
    scripts = _read_seeds(spec, context.suite_dir, server)
    if server is None:
        path = context.services_dir / f"{spec.name}.sqlite"
        path.unlink(missing_ok=True)
        url = sqlite_url(path)
    else:
        url = driver_url(server, _create(server, spec.name))
    service = SqlService(spec, url, server, context.settings.keep)
    try:
        service.prepare(scripts)
    except BaseException:
        service.keep = False
        with contextlib.suppress(ServiceError):
            service.stop()
        raise
    return service


def _create(server: URL, name: str) -> str:
    from sqlalchemy.exc import SQLAlchemyError

    database = f"sounding_{re.sub(r'[^a-z0-9]', '_', name.lower())[:24]}_{secrets.token_hex(5)}"
    try:
        create_database(server, database)
    except SQLAlchemyError as exc:
        raise ServiceError(
            f"sql service '{name}': cannot create a database on {where(server)}: "
            f"{database_message(exc)}; check that the server runs and the URL's user may "
            "CREATE DATABASE",
        ) from None
    try:
        create_reader(server, database)
    except SQLAlchemyError as exc:
        with contextlib.suppress(SQLAlchemyError):
            drop_database(server, database)
        raise ServiceError(
            f"sql service '{name}': cannot make the read-only login sql checks use on "
            f"{where(server)}: {database_message(exc)}; the URL's user must be allowed to "
            "create roles (PostgreSQL: CREATEROLE) or users (MariaDB/MySQL: CREATE USER)",
        ) from None
    return database


def _read_seeds(
    spec: SqlSpec, suite_dir: Path, server: URL | None
) -> list[tuple[str, list[Statement]]]:
    dialect = "sqlite" if server is None else engine_kind(server)
    scripts = []
    for path in spec.seed:
        problem = _seed_problem(path, suite_dir)
        if problem:
            raise ServiceError(f"sql service '{spec.name}': {problem}")
        try:
            text = (suite_dir / path).read_text(encoding="utf-8")
            scripts.append((path, split_statements(text, dialect=dialect)))
        except (SqlTextError, UnicodeDecodeError) as exc:
            raise ServiceError(
                f"sql service '{spec.name}': seed '{path}': {exc}; fix the file",
            ) from None
    return scripts


def restore_sql(
    name: str, record: dict[str, Any], trial_dir: Path, settings: ServiceSettings | None
) -> tuple[str | None, dict[str, Any]]:
    """The url and details of a stored sql service, as re-scoring sees them."""
    details = dict(record.get("details") or {})
    if "file" in details:
        path = trial_dir / str(details["file"])
        if path.is_file():
            return render(sqlite_url(path)), details
        details["gone"] = f"the SQLite file {path} is missing; re-run the trial to judge it"
        return None, details
    url = record.get("url")
    if url is None:
        return None, details
    return _with_password(str(url), name, settings), details


def _with_password(url: str, name: str, settings: ServiceSettings | None) -> str:
    """Stored URLs carry no password. The checks' reader login gets its password back from
    a settings server on the same host (`reader`); a URL of an older run, of the server's
    own user, takes that server's password."""
    from sqlalchemy.engine import make_url

    stored = make_url(url)
    servers = {} if settings is None else settings.servers
    for candidate in filter(None, (servers.get(name), servers.get("sql"))):
        known = make_url(candidate)
        if (known.host, known.port) != (stored.host, stored.port):
            continue
        if (stored.username or "").startswith(READER_PREFIX):
            return render(reader(known, stored.database or ""))
        if known.username == stored.username and known.password:
            return render(stored.set(password=known.password))
    return url

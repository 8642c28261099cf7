"""Forbidden rules on a trial's services: calls to mocks and writes to tables not allowed.

`failed` means the rule was violated and the reason says where. A rule with no service
of its kind to watch is `unjudged` (it cannot see what it guards); a database whose
tables could not be read after the run is `error`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BeforeValidator

from sounding._words import counted, listed
from sounding.checks._base import CheckContext, CheckResult, Params
from sounding.checks._fields import Name, Ref, Texts, as_list
from sounding.checks._registry import Reads, Role, registry
from sounding.services import ServiceEvidence

FAMILY = "forbidden"

Services = Annotated[list[Annotated[Name, Ref.SERVICE]], BeforeValidator(as_list)]


def _watched(
    context: CheckContext, kind: str, rule: str, what: str
) -> dict[str, ServiceEvidence] | CheckResult:
    """The trial's `kind` services by name; unjudged when it has none for `rule` to watch."""
    services = context.evidence.services.items()
    watched = {name: s for name, s in sorted(services) if s.type == kind}
    return watched or CheckResult.unjudged(
        f"{rule} watches {kind} services and this trial has none; declare the "
        f"{what} under services: or drop the rule"
    )


def _verdict(violations: list[str], allowed: list[str], broke: str, kept: str) -> CheckResult:
    """Failed with every violation when there are any; passed otherwise."""
    shown = ", ".join(allowed) or "none"
    if violations:
        reason = f"{broke} outside the allowed ({shown}): " + "; ".join(violations)
        return CheckResult.failed(reason, violations=violations)
    return CheckResult.passed(f"only allowed {kept} ({shown})")


class HttpExceptParams(Params):
    """The http_mock services the agent may call; a request to any other is a violation."""

    services: Services


@registry.check(
    "http_except",
    HttpExceptParams,
    family=FAMILY,
    reads=Reads.SERVICES,
    role=Role.FORBIDDEN,
    shorthand="services",
)
def http_except(params: HttpExceptParams, context: CheckContext) -> CheckResult:
    """No http_mock service outside the allowed list received a request."""
    mocks = _watched(context, "http_mock", "http_except", "mocks")
    if isinstance(mocks, CheckResult):
        return mocks
    violations = []
    for name, mock in mocks.items():
        requests = mock.details.get("requests")
        if not isinstance(requests, list):
            return CheckResult.error(f"http_mock '{name}' left no recording to read")
        if name not in params.services and requests:
            violations.append(f"'{name}' got {_calls(requests)}")
    return _verdict(violations, params.services, "called mocks", "mocks were called")


def _calls(requests: list[Mapping[str, Any]]) -> str:
    seen = [f"{r.get('method', '?')} {r.get('path', '?')}" for r in requests]
    return f"{counted(len(requests), 'request')} ({listed(list(dict.fromkeys(seen)))})"


class DbWritesOutsideParams(Params):
    """Tables the agent may change (`table`, or `service.table` for one service only)."""

    tables: Texts


@registry.check(
    "db_writes_outside",
    DbWritesOutsideParams,
    family=FAMILY,
    reads=Reads.SERVICES,
    role=Role.FORBIDDEN,
    shorthand="tables",
)
def db_writes_outside(params: DbWritesOutsideParams, context: CheckContext) -> CheckResult:
    """No table outside the allowed list was written, created or dropped."""
    databases = _watched(context, "sql", "db_writes_outside", "database")
    if isinstance(databases, CheckResult):
        return databases
    violations = []
    for name, database in databases.items():
        changes = database.details.get("table_changes")
        if database.details.get("changed_tables") is None or not isinstance(changes, Mapping):
            why = database.details.get("fingerprint_error") or "no table fingerprint was taken"
            return CheckResult.error(
                f"sql service '{name}': cannot tell which tables changed: {why}"
            )
        outside = [t for t in sorted(changes) if not _allowed(name, t, params.tables)]
        if outside:
            described = ", ".join(f"'{t}' ({changes[t]})" for t in outside)
            violations.append(f"'{name}': {described}")
    return _verdict(violations, params.tables, "wrote to tables", "tables changed")


def _allowed(service: str, table: str, allowed: list[str]) -> bool:
    """Names compare without case: `Users` and `users` are the same table to a reader."""
    wanted = {entry.lower() for entry in allowed}
    return table.lower() in wanted or f"{service}.{table}".lower() in wanted

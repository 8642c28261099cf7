"""The services of one trial, started together, stored together, stopped together."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from sounding._files import write_text
from sounding.services._base import (
    RunningService,
    ServiceError,
    ServiceEvidence,
    ServiceSettings,
    StartContext,
)
from sounding.services._specs import SERVICE_TYPES, parse_specs
from sounding.services._sql import SqlService, restore_sql

STORE_SCHEMA = "sounding.services/1"
STORE_FILE = Path("services") / "services.json"


class ServiceSet:
    """The started services of a trial: their env for the agent, their evidence, their end.

    Use it as a context manager, or call `stop()` in a `finally`; stopping twice is harmless.
    """

    def __init__(self, services: list[RunningService]) -> None:
        self._services = list(services)
        self._stopped = False

    def __len__(self) -> int:
        return len(self._services)

    @property
    def env(self) -> dict[str, str]:
        """Variables for the agent: `SOUNDING_<NAME>_URL` per service, `DATABASE_URL`."""
        return services_env(self._services)

    def evidence(self) -> dict[str, ServiceEvidence]:
        """What checks read, by service name, measured now (after the agent ran)."""
        return {service.name: service.evidence() for service in self._services}

    def store(self, trial_dir: Path) -> Path:
        """Write `services/services.json` under `trial_dir` for re-scoring; returns its path."""
        records = {service.name: service.stored(trial_dir) for service in self._services}
        path = trial_dir / STORE_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        document = {"schema": STORE_SCHEMA, "services": records}
        write_text(path, json.dumps(document, indent=2, default=str))
        return path

    def stop(self) -> None:
        """Stop every service (last started first); ServiceError lists what would not stop."""
        if self._stopped:
            return
        self._stopped = True
        problems = []
        for service in reversed(self._services):
            try:
                service.stop()
            except ServiceError as exc:
                problems.extend(exc.problems)
        if problems:
            raise ServiceError("; ".join(problems), problems=problems)

    def __enter__(self) -> ServiceSet:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def services_env(services: list[RunningService]) -> dict[str, str]:
    env: dict[str, str] = {}
    databases = [s for s in services if isinstance(s, SqlService)]
    if databases:
        env["DATABASE_URL"] = databases[0].database_url
    for service in services:
        env.update(service.env())
    return env


def start_services(
    specs: list[dict[str, Any]],
    *,
    trial_dir: Path,
    suite_dir: Path,
    settings: ServiceSettings | None = None,
) -> ServiceSet:
    """Validate and start a trial's services in order; on any failure none is left running.

    Raises ServiceError naming the service and how to fix it.
    """
    models, problems = parse_specs(specs, suite_dir)
    if problems:
        listed = "\n".join(f"  - {problem}" for problem in problems)
        raise ServiceError(f"services are declared wrongly:\n{listed}", problems=problems)
    settings = settings or ServiceSettings()
    started: list[RunningService] = []
    try:
        for model in models:
            context = StartContext(trial_dir, suite_dir, settings, services_env(started))
            started.append(SERVICE_TYPES[model.type].start(model, context))
    except BaseException:
        with contextlib.suppress(ServiceError):
            ServiceSet(started).stop()
        raise
    return ServiceSet(started)


def load_service_evidence(
    trial_dir: Path, *, settings: ServiceSettings | None = None
) -> dict[str, ServiceEvidence]:
    """The evidence a stored trial's services left, for re-scoring; {} when it had none.

    A server database dropped after the run comes back with `url` None (checks on it are
    unjudged). Stored URLs carry no password: `settings` gives it back for a kept database.
    """
    path = trial_dir / STORE_FILE
    if not path.is_file():
        return {}
    records = _read_store(path)["services"].items()
    return {name: _restore(name, record, trial_dir, settings, path) for name, record in records}


def _read_store(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ServiceError(f"{path}: unreadable ({exc}); re-run the trial to rebuild it") from None
    schema = document.get("schema") if isinstance(document, dict) else None
    if schema != STORE_SCHEMA or not isinstance(document.get("services"), dict):
        raise ServiceError(
            f"{path}: schema is {schema!r}, this sounding reads {STORE_SCHEMA!r}; "
            "re-score it with the sounding version that wrote it, or re-run the trial"
        )
    return dict(document)


def _restore(
    name: str, record: Any, trial_dir: Path, settings: ServiceSettings | None, path: Path
) -> ServiceEvidence:
    kind = record.get("type") if isinstance(record, dict) else None
    if kind == "sql":
        url, details = restore_sql(name, record, trial_dir, settings)
        return ServiceEvidence(name, kind, url, details)
    if kind in SERVICE_TYPES:  # any other type: its details as stored, nothing to reach
        return ServiceEvidence(name, kind, None, dict(record.get("details") or {}))
    raise ServiceError(f"{path}: service '{name}' has unknown type {kind!r}; re-run the trial")

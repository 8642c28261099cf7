"""Service declarations as a case file writes them: parsed, checked, every problem named."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from sounding._problems import validation_problems
from sounding._words import did_you_mean
from sounding.services._base import RunningService, SpecModel, StartContext, env_prefix
from sounding.services._http_mock import HttpMockSpec, start_http_mock
from sounding.services._process import ProcessSpec, process_problems, start_process
from sounding.services._sql import SqlSpec, sql_problems, start_sql


class ServiceType(NamedTuple):
    """A service type: its declaration, what that model alone cannot check, how it starts."""

    spec: type[SpecModel]
    problems: Callable[[Any, Path | None], list[str]]
    start: Callable[[Any, StartContext], RunningService]


SERVICE_TYPES: dict[str, ServiceType] = {
    "http_mock": ServiceType(HttpMockSpec, lambda spec, suite_dir: [], start_http_mock),
    "process": ServiceType(ProcessSpec, lambda spec, _: process_problems(spec), start_process),
    "sql": ServiceType(SqlSpec, sql_problems, start_sql),
}


def validate_service_specs(
    specs: list[dict[str, Any]], *, suite_dir: Path | None = None
) -> list[str]:
    """Every problem in a case's `services:` list, each naming the service; [] when fine.

    With `suite_dir`, seed files must also exist (and stay inside it through links).
    """
    return parse_specs(specs, suite_dir)[1]


def parse_specs(
    specs: list[dict[str, Any]], suite_dir: Path | None
) -> tuple[list[SpecModel], list[str]]:
    """The validated declarations and the problems found; the models are usable only with none."""
    if not isinstance(specs, list):
        return [], ["services: must be a list of {name, type, ...} entries"]
    models: list[SpecModel] = []
    problems: list[str] = []
    for index, raw in enumerate(specs):
        label = _label(index, raw)
        model, found = _parse_one(raw, suite_dir)
        problems.extend(f"{label}: {problem}" for problem in found)
        if model is not None:
            problems.extend(f"{label}: {p}" for p in _clashes(model, models))
            models.append(model)
    return models, problems


def _label(index: int, raw: Any) -> str:
    name = raw.get("name") if isinstance(raw, Mapping) else None
    return f"service '{name}' (services[{index}])" if name else f"services[{index}]"


def _parse_one(raw: Any, suite_dir: Path | None) -> tuple[SpecModel | None, list[str]]:
    if not isinstance(raw, Mapping):
        return None, ["must be a mapping with at least name: and type:"]
    kind = raw.get("type")
    service_type = SERVICE_TYPES.get(kind) if isinstance(kind, str) else None
    if service_type is None:
        return None, [_unknown_type(kind)]
    try:
        model = service_type.spec.model_validate(raw)
    except ValidationError as exc:
        return None, [problem.said for problem in validation_problems(exc, service_type.spec)]
    return model, service_type.problems(model, suite_dir)


def _unknown_type(kind: Any) -> str:
    known = sorted(SERVICE_TYPES)
    if kind is None:
        return f"type: is missing (one of: {', '.join(known)})"
    hint = did_you_mean(str(kind), known)
    return f"unknown service type '{kind}'{hint} (known: {', '.join(known)})"


def _clashes(model: SpecModel, earlier: list[SpecModel]) -> list[str]:
    for other in earlier:
        if other.name == model.name:
            return ["the name is used twice; give each service its own name"]
        if env_prefix(other.name) == env_prefix(model.name):
            return [
                f"its variables ({env_prefix(model.name)}_*) clash with service '{other.name}'; "
                "rename one of them"
            ]
    return []

"""Resolve the checks a case file names against the registry, with their params validated.

A check appears in three forms: an `expect:`/`leads:` item (`- tool_called: {name: x}`),
an invariant's `check:` (`{type: command_exit, command: ...}`) and a `forbidden:` rule
(`tools_forbidden: [x]`). All three end as a `CheckSpec`, or as problems at their lines.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from sounding.checks import CheckType, Params, Registry, Role, UnknownCheckError
from sounding.spec._errors import KeyPath, Locator, Problem
from sounding.spec._guards import path_refusal
from sounding.spec._messages import validation_problems
from sounding.spec._models import CheckSpec

_ENTRY_EXAMPLE = "like `- tool_called: {name: lookup}` or `- no_error: true`"


def _is_path_param(name: str) -> bool:
    return name in ("path", "script") or name.endswith("_path")


class CheckResolver:
    """Turns the check entries of one file into `CheckSpec`s, adding problems to `problems`."""

    def __init__(
        self,
        registry: Registry,
        locator: Locator,
        services: Collection[str],
        problems: list[Problem],
        *,
        metrics: Collection[str] = (),
    ) -> None:
        self.registry = registry
        self.locator = locator
        self.services = services
        self.problems = problems
        self.metrics = metrics

    def entry(self, item: Any, key: KeyPath) -> CheckSpec | None:
        """An `expect:` or `leads:` item: one check type mapped to its params."""
        if not isinstance(item, Mapping) or len(item) != 1:
            self._add(key, _entry_refusal(item))
            return None
        ((name, params),) = item.items()
        return self._resolve(str(name), params, Role.CHECK, (*key, name), (*key, name))

    def invariant(self, check: Mapping[str, Any], key: KeyPath) -> CheckSpec | None:
        """An invariant's `check:`: `type` names the check, the other keys are its params."""
        params = {name: value for name, value in check.items() if name != "type"}
        name = check.get("type")
        if not isinstance(name, str):
            what = "has no `type`" if name is None else f"has `type: {name!r}`, not a name"
            message = f"{what}: name the check to run, like `type: command_exit`"
            self._add(key, message, allowed=self.registry.names(Role.CHECK))
            return None
        return self._resolve(name, params, Role.CHECK, (*key, "type"), key)

    def rule(self, name: str, params: Any, key: KeyPath) -> CheckSpec | None:
        """A `forbidden:` rule: the rule's name mapped to its params."""
        return self._resolve(name, params, Role.FORBIDDEN, key, key)

    def _resolve(
        self, name: str, raw: Any, role: Role, name_key: KeyPath, key: KeyPath
    ) -> CheckSpec | None:
        check_type = self._lookup(name, role, name_key)
        if check_type is None:
            return None
        params = self._parse(check_type, raw, key)
        if params is None:
            return None
        shorthand = not isinstance(raw, Mapping)
        self._check_paths(params, key, shorthand)
        self._check_service(params, key, shorthand)
        self._check_metric(params, key, shorthand)
        return CheckSpec(type=name, params=params, role=role, line=self.locator.line(key))

    def _lookup(self, name: str, role: Role, key: KeyPath) -> CheckType[Any] | None:
        try:
            return self.registry.get(name, role)
        except UnknownCheckError as exc:
            kind = "check type" if role is Role.CHECK else "forbidden rule"
            message = f"unknown {kind} '{name}'"
            if not exc.known:
                message += f": no {kind} is registered (is `sounding.checks` imported?)"
            self._add(key, message, allowed=exc.known, closest=exc.closest)
            return None

    def _parse(self, check_type: CheckType[Any], raw: Any, key: KeyPath) -> Params | None:
        try:
            params: Params = check_type.parse(raw)
        except ValidationError as exc:
            if not check_type.params.model_fields:
                self._add(key, f"takes no params: write `{check_type.name}: true`")
            else:
                scalar = None if isinstance(raw, Mapping) else check_type.shorthand
                found = validation_problems(
                    exc, check_type.params, key, self.locator, shorthand=scalar
                )
                self.problems.extend(found)
            return None
        return params

    def _check_paths(self, params: Params, key: KeyPath, shorthand: bool) -> None:
        for sub, value in _texts(params, ()):
            name = sub[-1]
            # a `path` under `filters` is an HTTP request's path, not a file of the workspace
            if "filters" not in sub[:-1] and isinstance(name, str) and _is_path_param(name):
                refusal = path_refusal(value, "the workspace")
                if refusal is not None:
                    self._add(key if shorthand else (*key, *sub), refusal)

    def _check_service(self, params: Params, key: KeyPath, shorthand: bool) -> None:
        if "service" not in type(params).model_fields:
            return
        service = getattr(params, "service", None)
        if not isinstance(service, str) or service in self.services:
            return
        declared = sorted(self.services)
        if declared:
            message = f"names service '{service}', which `services:` does not declare"
        else:
            message = f"names service '{service}', but this case declares no `services:`"
        where = key if shorthand else (*key, "service")
        self._add(where, message, allowed=declared, typo=service)

    def _check_metric(self, params: Params, key: KeyPath, shorthand: bool) -> None:
        """A `metric` param names a metric a validator of the case declares."""
        if "metric" not in type(params).model_fields:
            return
        metric = getattr(params, "metric", None)
        if not isinstance(metric, str) or metric in self.metrics:
            return
        declared = sorted(self.metrics)
        if declared:
            message = f"names metric '{metric}', which no validator of this case declares"
        else:
            message = (
                f"names metric '{metric}', but this case declares no `validators:` "
                "(see docs/validators.md)"
            )
        where = key if shorthand else (*key, "metric")
        self._add(where, message, allowed=declared, typo=metric)

    def _add(
        self,
        key: KeyPath,
        message: str,
        *,
        allowed: Collection[str] = (),
        closest: str | None = None,
        typo: str | None = None,
    ) -> None:
        problem = self.locator.problem(key, message, allowed=allowed, typo=typo, closest=closest)
        self.problems.append(problem)


def _entry_refusal(item: Any) -> str:
    if isinstance(item, Mapping) and "type" in item:
        return (
            f"is written like an invariant's `check:`; here the type is the key, {_ENTRY_EXAMPLE}"
        )
    if isinstance(item, Mapping) and item:
        names = ", ".join(str(name) for name in item)
        return f"holds {len(item)} checks ({names}): put each in its own list item ('- ')"
    if isinstance(item, Mapping):
        return f"is empty: name one check and its params, {_ENTRY_EXAMPLE}"
    if isinstance(item, str):
        return f"names '{item}' without params: write `- {item}: true`, or give its params"
    return f"must be one check type and its params, {_ENTRY_EXAMPLE} (got {item!r})"


def _texts(value: Any, key: KeyPath) -> Iterator[tuple[KeyPath, str]]:
    """Every text inside params (nested models, mappings, lists) with the key it stands at."""
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _texts(item, (*key, index))
        return
    if isinstance(value, BaseModel):
        items: Iterable[tuple[Any, Any]] = iter(value)
    elif isinstance(value, Mapping):
        items = value.items()
    else:
        return
    for name, item in items:
        if isinstance(item, str):
            yield (*key, str(name)), item
        else:
            yield from _texts(item, (*key, str(name)))

"""Resolve the checks a case file names against the registry, with their params validated.

A check appears in three forms: an `expect:`/`leads:` item (`- tool_called: {name: x}`),
an invariant's `check:` (`{type: command_exit, command: ...}`) and a `forbidden:` rule
(`tools_forbidden: [x]`). All three end as a `CheckSpec`, or as problems at their lines.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from pydantic import ValidationError

from sounding.checks import (
    CheckType,
    Params,
    Ref,
    Reference,
    Registry,
    Role,
    UnknownCheckError,
    references,
)
from sounding.spec._errors import KeyPath, Locator, Problem
from sounding.spec._guards import path_refusal
from sounding.spec._messages import validation_problems
from sounding.spec._models import CheckSpec

_ENTRY_EXAMPLE = "like `- tool_called: {name: lookup}` or `- no_error: true`"
_SHARED_RAW = (str, int, bool, type(None))
"""Raw params written as one of these (`no_error: true`, a shorthand) are validated once
per file and their params shared: params are frozen. (Not floats: `-0.0 == 0.0`.)"""


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
        self.used: set[str] = set()
        """The name of every check type resolved so far."""
        self.found: dict[str, CheckType[Any]] = {}
        self.found_rules: dict[str, CheckType[Any]] = {}
        """Check types and forbidden rules met so far, by name: each looked up once."""
        self.shared: dict[tuple[type[Params], str | None, type, Any], Params] = {}
        """Params validated from a scalar, by model, shorthand and value (see `_SHARED_RAW`)."""

    def entry(self, item: Any, key: KeyPath) -> CheckSpec | None:
        """An `expect:` or `leads:` item: one check type mapped to its params."""
        if (type(item) is not dict and not isinstance(item, Mapping)) or len(item) != 1:
            self._add(key, _entry_refusal(item))
            return None
        ((name, params),) = item.items()
        where = (*key, name)
        return self._resolve(str(name), params, Role.CHECK, where, where)

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
        found = self.found if role is Role.CHECK else self.found_rules
        check_type = found.get(name) or self._lookup(name, role, name_key)
        if check_type is None:
            return None
        params = self._parse(check_type, raw, key)
        if params is None:
            return None
        shorthand = type(raw) is not dict and not isinstance(raw, Mapping)
        for named in references(params):  # what a marked param names, checked in the case
            self._check_reference(named, key if shorthand else (*key, *named.key))
        self.used.add(name)
        line = self.locator.line(key)
        return CheckSpec(type=name, params=params, role=role, line=line, check_type=check_type)

    def _lookup(self, name: str, role: Role, key: KeyPath) -> CheckType[Any] | None:
        """The registry's check type or rule of `name`, kept for the rest of the file."""
        found = self.found if role is Role.CHECK else self.found_rules
        try:
            check_type = found[name] = self.registry.get(name, role)
            return check_type
        except UnknownCheckError as exc:
            kind = "check type" if role is Role.CHECK else "forbidden rule"
            message = f"unknown {kind} '{name}'"
            if not exc.known:
                message += f": no {kind} is registered (is `sounding.checks` imported?)"
            self._add(key, message, allowed=exc.known, closest=exc.closest)
            return None

    def _parse(self, check_type: CheckType[Any], raw: Any, key: KeyPath) -> Params | None:
        if type(raw) in _SHARED_RAW:
            memo = (check_type.params, check_type.shorthand, type(raw), raw)
            found = self.shared.get(memo)
            if found is None:
                found = self._validate(check_type, raw, key)
                if found is not None:
                    self.shared[memo] = found
            return found
        return self._validate(check_type, raw, key)

    def _validate(self, check_type: CheckType[Any], raw: Any, key: KeyPath) -> Params | None:
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

    def _check_reference(self, found: Reference, where: KeyPath) -> None:
        name = found.value
        if found.ref is Ref.WORKSPACE_PATH:
            refusal = path_refusal(name, "the workspace")
            if refusal is not None:
                self._add(where, refusal)
        elif found.ref is Ref.SERVICE and name not in self.services:
            message = _no_service(name, self.services)
            self._add(where, message, allowed=sorted(self.services), typo=name)
        elif found.ref is Ref.METRIC and name not in self.metrics:
            message = _no_metric(name, self.metrics)
            self._add(where, message, allowed=sorted(self.metrics), typo=name)

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


def _no_service(name: str, declared: Collection[str]) -> str:
    if declared:
        return f"names service '{name}', which `services:` does not declare"
    return f"names service '{name}', but this case declares no `services:`"


def _no_metric(name: str, declared: Collection[str]) -> str:
    if declared:
        return f"names metric '{name}', which no validator of this case declares"
    return (
        f"names metric '{name}', but this case declares no `validators:` (see docs/validators.md)"
    )

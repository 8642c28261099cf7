"""Resolve the checks a case file names against the registry, with their params validated.

A check appears in three forms: an `expect:`/`leads:` item (`- tool_called: {name: x}`),
an invariant's `check:` (`{type: command_exit, command: ...}`) and a `forbidden:` rule
(`tools_forbidden: [x]`). All three end as a `CheckSpec`, or as problems at their lines.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from pydantic import ValidationError

from sounding._problems import KeyPath, Locator, Problem, validation_problems
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
from sounding.spec._guards import path_refusal
from sounding.spec._models import CheckSpec

_ENTRY_EXAMPLE = "like `- tool_called: {name: lookup}` or `- no_error: true`"
_UNDECLARED = {  # a name the case does not declare: what it is, when some are, when none is
    Ref.SERVICE: (
        "service",
        "which `services:` does not declare",
        "but this case declares no `services:`",
    ),
    Ref.METRIC: (
        "metric",
        "which no validator of this case declares",
        "but this case declares no `validators:` (see docs/validators.md)",
    ),
}


class CheckResolver:
    """Turns the check entries of one file into `CheckSpec`s, adding problems to `problems`."""

    def __init__(
        self,
        registry: Registry,
        locator: Locator,
        services: Collection[str],
        metrics: Collection[str],
        problems: list[Problem],
    ) -> None:
        self.registry = registry
        self.locator = locator
        self.problems = problems
        self.declared = {Ref.SERVICE: services, Ref.METRIC: metrics}

    def entry(self, item: Any, key: KeyPath) -> CheckSpec | None:
        """An `expect:` or `leads:` item: one check type mapped to its params."""
        if not isinstance(item, Mapping) or len(item) != 1:
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
        check_type = self._lookup(name, role, name_key)
        if check_type is None:
            return None
        params = self._parse(check_type, raw, key)
        if params is None:
            return None
        shorthand = not isinstance(raw, Mapping)
        for named in references(params):  # what a marked param names, checked in the case
            self._check_reference(named, key if shorthand else (*key, *named.key))
        line = self.locator.line(key)
        return CheckSpec(type=name, params=params, role=role, line=line, check_type=check_type)

    def _lookup(self, name: str, role: Role, key: KeyPath) -> CheckType[Any] | None:
        try:
            return self.registry.get(name, role)
        except UnknownCheckError as exc:
            kind = "check type" if role is Role.CHECK else "forbidden rule"
            message = f"unknown {kind} '{name}'"
            if not exc.known:
                message += f": no {kind} is registered (is `sounding.checks` imported?)"
            self._add(key, message, allowed=exc.known, typo=name)
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

    def _check_reference(self, found: Reference, where: KeyPath) -> None:
        name = found.value
        if found.ref is Ref.WORKSPACE_PATH:
            if refusal := path_refusal(name, "the workspace"):
                self._add(where, refusal)
        elif found.ref in self.declared and name not in self.declared[found.ref]:
            known = self.declared[found.ref]
            what, some, none = _UNDECLARED[found.ref]
            message = f"names {what} '{name}', {some if known else none}"
            self._add(where, message, allowed=sorted(known), typo=name)

    def _add(self, key: KeyPath, message: str, **hints: Any) -> None:
        self.problems.append(self.locator.problem(key, message, **hints))


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

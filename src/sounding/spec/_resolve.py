"""From plain data to a resolved `Case`: version, model validation, then semantic checks.

Case-level blocks are resolved once and merged into every scenario: `invariants` by name,
`forbidden` by rule, `scoring` and `workspace` key by key, `env` by variable; `expect` and
`leads` are appended; `test_command` and `prepare` are replaced. All problems of a file
are gathered before one `SpecError` is raised.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from sounding._files import given_through_link, link_on_path
from sounding._problems import KeyPath, Locator, Problem, render_key, validation_problems
from sounding._words import closest_match, counted
from sounding.checks import Refused, Registry
from sounding.checks import registry as default_registry
from sounding.services import validate_service_specs
from sounding.spec._checks import CheckResolver
from sounding.spec._errors import SpecError
from sounding.spec._guards import command_refusal, path_refusal
from sounding.spec._models import (
    Assertion,
    Case,
    CheckSpec,
    Invariant,
    Scenario,
    Scoring,
    Simulation,
    StandIn,
    Workspace,
    judge_checks,
)
from sounding.spec._raw import RawBlock, RawCase, RawScenario, RawStandIn, RawWorkspace
from sounding.spec._template import expand_dataset, same
from sounding.spec._validators import declared_metrics, resolve_validators

_SCENARIO_ID = re.compile(r"[A-Za-z0-9_.-]+\Z")
KNOWN_VERSIONS = (1,)


def resolve_data(
    data: Any,
    lines: dict[KeyPath, int],
    *,
    path: Path,
    suite_dir: Path | None,
    registry: Registry | None,
) -> Case:
    """Validate plain data read from `path` into a `Case`; raises `SpecError`.

    `registry` defaults to the one of `sounding.checks`."""
    locator = Locator(str(path), lines)
    registry = default_registry if registry is None else registry
    named: Callable[[SpecError], SpecError] = same
    if isinstance(data, dict) and ("dataset" in data or "scenario" in data):
        data, locator, named = expand_dataset(data, locator, path=path, suite_dir=suite_dir)
    try:
        return _CaseResolver(_validated(data, locator), locator, registry, suite_dir).case(path)
    except SpecError as exc:
        raise named(exc) from None


def _validated(data: Any, locator: Locator) -> RawCase:
    if not isinstance(data, dict):
        what = "is empty" if data is None else f"holds {type(data).__name__}, not a mapping"
        raise SpecError([locator.problem((), f"{what}: a case file needs at least `scenarios:`")])
    version = data.get("version", 1)
    if type(version) is not int or version not in KNOWN_VERSIONS:
        message = f"unknown case file version {version!r}: write `version: 1` or leave it out"
        allowed = [str(known) for known in KNOWN_VERSIONS]
        raise SpecError([locator.problem(("version",), message, allowed=allowed)])
    if nul := [locator.problem(key, _NUL) for key in _nul_strings(data, ())]:
        raise SpecError(nul)
    try:
        return RawCase.model_validate({k: v for k, v in data.items() if not _scratch(k)})
    except ValidationError as exc:
        raise SpecError(validation_problems(exc, RawCase, (), locator)) from None


_NUL = "holds a NUL character (\\0): no command, prompt, variable or file name takes one"


def _nul_strings(value: Any, key: KeyPath) -> Iterator[KeyPath]:
    """The keys whose text holds a NUL, which no process argument or environment can."""
    if isinstance(value, str):
        if "\0" in value:
            yield key
    elif isinstance(value, dict):
        for name, item in value.items():
            yield from _nul_strings(item, (*key, name))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _nul_strings(item, (*key, index))


def _scratch(key: object) -> bool:
    """Top-level `x-...` keys are the writer's own (YAML anchors to reuse); they are ignored."""
    return isinstance(key, str) and key.startswith("x-")


class _Block(NamedTuple):
    """What one level (the case, or one scenario) says, resolved but not yet merged."""

    invariants: dict[str, Invariant]
    expect: list[CheckSpec]
    leads: list[CheckSpec]
    forbidden: dict[str, Assertion]
    scoring: dict[str, Any]
    workspace: dict[str, Any]
    reference: StandIn | None
    broken: list[StandIn]


def _numbered(kind: str, specs: list[CheckSpec]) -> list[Assertion]:
    """`expect[2] tool_called`: numbered within the scenario, the case's entries first."""
    return [Assertion(name=f"{kind}[{i}] {s.type}", check=s) for i, s in enumerate(specs)]


class _CaseResolver:
    def __init__(
        self, raw: RawCase, locator: Locator, registry: Registry, suite_dir: Path | None
    ) -> None:
        self.raw = raw
        self.locator = locator
        self.suite_dir = suite_dir
        self.problems: list[Problem] = []
        self.notes: list[Problem] = []
        services = {service.name for service in raw.services}
        self.validators = resolve_validators(raw.validators, locator, suite_dir, self.problems)
        metrics = declared_metrics(self.validators)
        self.checks = CheckResolver(registry, locator, services, metrics, self.problems)

    def case(self, path: Path) -> Case:
        raw = self.raw
        self._check_scenario_ids()
        self._check_services()
        case = self._block(raw, ())
        # one object for every scenario that keeps the case's workspace: a run prepares it once
        workspace = Workspace(**case.workspace)
        self._check_given_links(workspace, ("workspace",))
        scenarios = [
            self._scenario(item, i, case, workspace) for i, item in enumerate(raw.scenarios)
        ]
        self._check_in_suite(scenarios)
        self._check_ties(scenarios)
        if self.problems:
            raise SpecError(self.problems)
        return Case(
            path=path,
            name=path.stem,
            version=raw.version,
            scenarios=scenarios,
            services=[service.model_dump() for service in raw.services],
            validators=self.validators,
            notes=[str(note) for note in self.notes],
        )

    def _check_in_suite(self, scenarios: list[Scenario]) -> None:
        """What a check type checks against the suite folder (a grader it names is there, a
        script is a file of it) is checked now, not discovered on a run."""
        if self.suite_dir is None:
            return
        checks: dict[str, Callable[[Any], None] | None] = {}  # each check type's, made once
        for scenario in scenarios:
            for spec in _specs(scenario):
                if spec.type not in checks:
                    checks[spec.type] = self._in_suite(spec, self.suite_dir)
                check = checks[spec.type]
                if check is not None:
                    self._held(check, spec, scenario.id)

    def _check_ties(self, scenarios: list[Scenario]) -> None:
        """A form metric's `checks:` names a judge verdict of this case, of its own kind."""
        judges = judge_checks(scenarios, self.validators)
        for index, validator in enumerate(self.validators):
            for metric, name in validator.checks.items():
                key: KeyPath = ("validators", index, "checks", metric)
                judge = judges.get(name)
                kind = validator.kind(metric)
                if judge is None:
                    message = (
                        f"'{name}' is no judge check of this case: name an invariant or "
                        "`expect` entry that asks the judge (llm_as_judge), or a metric of a "
                        "judge validator"
                    )
                    self._add(key, message, allowed=list(judges), typo=name)
                elif judge.kind is not None and judge.kind != kind:
                    message = (
                        f"'{metric}' is {kind} but judge metric '{name}' is {judge.kind}: a "
                        "form metric checks a judge metric of its own kind (`types:`)"
                    )
                    self._add(key, message)

    def _in_suite(self, spec: CheckSpec, suite_dir: Path) -> Callable[[Any], None] | None:
        """A check type's load-time check in this suite; None when it has none, or when the
        suite refuses it."""
        hook = spec.check_type.in_suite
        try:
            return None if hook is None else hook(suite_dir)
        except Refused as exc:
            self.problems.append(Problem(self.locator.file, None, spec.type, str(exc)))
            return None

    def _held(self, check: Callable[[Any], None], spec: CheckSpec, scenario: str) -> None:
        try:
            check(spec.params)
        except Refused as exc:
            key = f"{spec.type}.{exc.field}" if exc.field else spec.type
            allowed, close = tuple(exc.allowed), closest_match(exc.typo or "", exc.allowed)
            message = f"scenario '{scenario}' {exc}"
            problem = Problem(self.locator.file, spec.line, key, message, allowed, close)
            self.problems.append(problem)

    def _check_old_byproducts(self, workspace: RawWorkspace, key: KeyPath) -> None:
        """`artefacts` is the old name of `byproducts`: still read, with a note to rename it."""
        if workspace.byproducts is not None:
            self._add(
                key,
                "and `byproducts` are one setting (its old name and its name): keep `byproducts`",
            )
            return
        message = (
            "is the old name of `byproducts` (files the agent's work leaves behind, which "
            "checks ignore): rename the key; the old name will stop being read"
        )
        self.notes.append(self.locator.problem(key, message))

    def _add(self, key: KeyPath, message: str, **hints: Any) -> None:
        self.problems.append(self.locator.problem(key, message, **hints))

    def _check_once(self, what: str, names: list[str], section: str, field: str) -> None:
        """Each of `names` (the `field` of each item of `section`) names one item only."""
        first: dict[str, int] = {}
        for index, name in enumerate(names):
            if first.setdefault(name, index) != index:
                where = (section, first[name], field)
                line = self.locator.line(where)
                at = f"line {line}" if line is not None else render_key(where)
                message = f"{what} '{name}' is used twice (first at {at}): rename one"
                self._add((section, index, field), message)

    def _check_scenario_ids(self) -> None:
        if not self.raw.scenarios:
            self._add(("scenarios",), "is empty: add at least one scenario with an `id` and `user`")
        for index, scenario in enumerate(self.raw.scenarios):
            if not _SCENARIO_ID.match(scenario.id):
                message = f"'{scenario.id}' may use only letters, digits, '_', '.' and '-'"
                self._add(("scenarios", index, "id"), message)
        ids = [scenario.id for scenario in self.raw.scenarios]
        self._check_once("scenario id", ids, "scenarios", "id")

    def _check_services(self) -> None:
        for index, service in enumerate(self.raw.services):
            declared = [service.model_dump()]
            for problem in validate_service_specs(declared, suite_dir=self.suite_dir):
                self._add(
                    ("services", index), problem.replace("(services[0])", f"(services[{index}])")
                )
        names = [service.name for service in self.raw.services]
        self._check_once("service name", names, "services", "name")

    def _block(self, raw: RawBlock, base: KeyPath) -> _Block:
        invariants = self._invariants(raw, base)
        if raw.workspace is not None:
            self._check_workspace(raw.workspace, (*base, "workspace"))
        self._check_commands(raw, base)
        return _Block(
            invariants=invariants,
            expect=self._entries(raw.expect, base, "expect"),
            leads=self._entries(raw.leads, base, "leads"),
            forbidden=self._rules(raw.forbidden, base),
            scoring=raw.scoring.model_dump(exclude_none=True) if raw.scoring else {},
            workspace=_workspace_keys(raw.workspace),
            reference=self._stand_in(raw.reference, (*base, "reference")),
            broken=self._stand_ins(raw.broken, (*base, "broken")),
        )

    def _stand_ins(self, raws: list[RawStandIn], key: KeyPath) -> list[StandIn]:
        found = [self._stand_in(raw, (*key, i)) for i, raw in enumerate(raws)]
        return [stand_in for stand_in in found if stand_in is not None]

    def _stand_in(self, raw: RawStandIn | None, key: KeyPath) -> StandIn | None:
        """A `reference:` or `broken:` item: exactly one of command, callable and record,
        each checked as far as the case file can tell (the program is found when the
        audit starts)."""
        if raw is None:
            return None
        given = {name: value for name, value in raw.model_dump().items() if value is not None}
        if len(given) != 1:
            said = f"sets {', '.join(given)}" if given else "is empty"
            message = f"{said}: write one of `command`, `callable` or `record`"
            self._add(key, message, allowed=["command", "callable", "record"])
            return None
        ((kind, value),) = given.items()
        self._check_stand_in(kind, value, (*key, kind))
        return StandIn(**given, line=self.locator.line(key))

    def _check_stand_in(self, kind: str, value: str, key: KeyPath) -> None:
        if kind == "command":
            if refusal := command_refusal(value):
                self._add(key, refusal)
        elif kind == "callable":
            module, _, function = value.partition(":")
            if not module.strip() or not function.strip():
                self._add(key, f"'{value}' must read 'module:function' (a module of the suite)")
        else:
            self._check_source(value, key, "record")

    def _invariants(self, raw: RawBlock, base: KeyPath) -> dict[str, Invariant]:
        invariants: dict[str, Invariant] = {}
        for name, invariant in raw.invariants.items():
            spec = self.checks.invariant(invariant.check, (*base, "invariants", name, "check"))
            if spec is not None:
                invariants[name] = Invariant(
                    name=name,
                    description=invariant.description or name,
                    weight=invariant.weight,
                    gate=invariant.gate,
                    check=spec,
                )
        return invariants

    def _entries(self, items: list[Any], base: KeyPath, name: str) -> list[CheckSpec]:
        specs = [self.checks.entry(item, (*base, name, i)) for i, item in enumerate(items)]
        return [spec for spec in specs if spec is not None]

    def _rules(self, rules: dict[str, Any], base: KeyPath) -> dict[str, Assertion]:
        found: dict[str, Assertion] = {}
        for name, params in rules.items():
            spec = self.checks.rule(name, params, (*base, "forbidden", name))
            if spec is not None:
                found[name] = Assertion(name=f"forbidden {name}", check=spec)
        return found

    def _check_workspace(self, workspace: RawWorkspace, key: KeyPath) -> None:
        if workspace.artefacts is not None:
            self._check_old_byproducts(workspace, (*key, "artefacts"))
        if workspace.fixture is not None:
            self._check_source(workspace.fixture, (*key, "fixture"), "fixture")
        for dest, source in (workspace.given or {}).items():
            if refusal := path_refusal(dest, "the workspace"):
                self._add((*key, "given", dest), refusal)
            self._check_source(source, (*key, "given", dest), "given file")

    def _check_given_links(self, workspace: Workspace, key: KeyPath) -> None:
        """A given file laid through a link of the fixture is refused now, not by each trial."""
        if self.suite_dir is None or workspace.fixture is None:
            return
        fixture = self.suite_dir / workspace.fixture
        for dest in workspace.given:
            if path_refusal(dest, "the workspace") is not None:
                continue  # said already
            link = link_on_path(fixture, dest)
            if link is not None:
                self._add((*key, "given", dest), given_through_link(dest, link))

    def _check_source(self, value: str, key: KeyPath, what: str) -> None:
        """A path read from the suite folder: it must stay inside, and exist when we know it."""
        if refusal := path_refusal(value, "the suite folder"):
            self._add(key, refusal)
        elif self.suite_dir is not None and not (self.suite_dir / value).exists():
            self._add(key, f"{what} '{value}' does not exist in {self.suite_dir}: fix the path")
        elif what == "fixture" and self.suite_dir and not (self.suite_dir / value).is_dir():
            self._add(key, f"fixture '{value}' is a file: name the folder to copy")

    def _check_commands(self, raw: RawBlock, base: KeyPath) -> None:
        if raw.test_command is not None and (refusal := command_refusal(raw.test_command)):
            self._add((*base, "test_command"), refusal)
        for index, command in enumerate(raw.prepare or []):
            if refusal := command_refusal(command):
                self._add((*base, "prepare", index), refusal)

    def _scenario(
        self, raw: RawScenario, index: int, case: _Block, workspace: Workspace
    ) -> Scenario:
        base: KeyPath = ("scenarios", index)
        own, top = self._block(raw, base), self.raw
        trials = raw.trials or top.defaults.trials or 1
        scoring = Scoring(**{**case.scoring, **own.scoring})
        self._check_k(scoring, trials, raw.id, base if "k" in own.scoring else ())
        invariants = list({**case.invariants, **own.invariants}.values())
        self._check_graded(invariants, scoring.pass_threshold, raw.id, base)
        return Scenario(
            id=raw.id,
            user=self._turns(raw, base),
            simulate=self._simulation(raw, base),
            trials=trials,
            timeout=raw.timeout or top.defaults.timeout or 600.0,
            check_timeout=raw.check_timeout or top.defaults.check_timeout or 30.0,
            invariants=invariants,
            expect=_numbered("expect", [*case.expect, *own.expect]),
            leads=_numbered("lead", [*case.leads, *own.leads]),
            forbidden=list({**case.forbidden, **own.forbidden}.values()),
            scoring=scoring,
            workspace=self._workspace(case, own, base) if own.workspace else workspace,
            test_command=raw.test_command if raw.test_command is not None else top.test_command,
            prepare=raw.prepare if raw.prepare is not None else list(top.prepare or []),
            env={**top.env, **raw.env},
            resources={**top.resources, **raw.resources},
            allow_exit=raw.allow_exit if raw.allow_exit is not None else top.allow_exit or [],
            reference=own.reference or case.reference,
            broken=[*case.broken, *own.broken],
            line=self.locator.line(base),
        )

    def _workspace(self, case: _Block, own: _Block, base: KeyPath) -> Workspace:
        workspace = Workspace(**{**case.workspace, **own.workspace})
        self._check_given_links(workspace, (*base, "workspace"))
        return workspace

    def _turns(self, raw: RawScenario, base: KeyPath) -> list[str]:
        """The fixed turns; a `simulate:` item may only be the last of `user`."""
        if raw.user is None:
            message = f"scenario '{raw.id}' has no `user`: write the task, or a list of turns"
            self._add(base, message)
            return []
        if not raw.user:
            self._add((*base, "user"), "has no turns: write the task, or a list of turns")
        for turn, said in enumerate(raw.user):
            key = (*base, "user", turn)
            if (said.say is None) == (said.simulate is None):
                self._add(key, "write what the user says, or `simulate:` a user (one of them)")
            elif said.simulate is not None and turn != len(raw.user) - 1:
                self._add(key, "a simulated user takes over for good: `simulate:` must be last")
            elif said.say is not None and not said.say.strip():
                self._add(key, "is empty: write what the user says")
        return [said.say for said in raw.user if said.say is not None]

    def _simulation(self, raw: RawScenario, base: KeyPath) -> Simulation | None:
        last = raw.user[-1].simulate if raw.user else None
        if last is None:
            return None
        if not last.goal.strip():
            where = (*base, "user", len(raw.user or []) - 1, "simulate", "goal")
            self._add(where, "is empty: say what the simulated user wants to get done")
        return Simulation(**last.model_dump())

    def _check_graded(
        self, invariants: list[Invariant], threshold: float, scenario: str, base: KeyPath
    ) -> None:
        """A note for each graded check (a judge's score) weighed in the composite whose
        score cannot decide the trial as its author likely meant: under a `pass_threshold`
        of 1 the trial passes on a perfect score only; under a low one, a score of 0
        passes it all the same."""
        total = sum(i.weight for i in invariants)
        for item in invariants:
            if item.gate or item.weight == 0 or not item.check.check_type.graded:
                continue
            named = f"scenario '{scenario}': invariant '{item.name}'"
            if threshold >= 1.0:
                said = (
                    f"{named} weighs a score between 0 and 1 into a composite that must reach "
                    "pass_threshold 1.0, so the trial passes only on its perfect score"
                )
            elif (total - item.weight) / total >= threshold:
                said = (
                    f"{named} weighs a score into a composite the other invariants already "
                    f"bring to pass_threshold {threshold:g}: a score of 0 passes the trial"
                )
            else:
                continue
            fix = (
                "make it a gate on its own threshold (`gate: true`, or an `expect` entry), or "
                "set scoring.pass_threshold to what its weight allows (docs/judge.md)"
            )
            self.notes.append(self.locator.problem(base, f"{said}; {fix}"))

    def _check_k(self, scoring: Scoring, trials: int, scenario: str, level: KeyPath) -> None:
        """pass@k needs k trials; `level` is where `k` is written: the scenario, or the case."""
        if scoring.k is None or scoring.k <= trials:
            return
        message = (
            f"k={scoring.k} is more than the {counted(trials, 'trial')} of scenario '{scenario}': "
            "pass@k needs at least k trials; lower k or raise `trials`"
        )
        self._add((*level, "scoring", "k"), message)


def _specs(scenario: Scenario) -> list[CheckSpec]:
    """Every check a scenario runs: invariants, expectations and leads."""
    assertions = [*scenario.expect, *scenario.leads]
    return [invariant.check for invariant in scenario.invariants] + [a.check for a in assertions]


def _workspace_keys(workspace: RawWorkspace | None) -> dict[str, Any]:
    """The keys a level's `workspace:` sets, `artefacts` under its name `byproducts`."""
    if workspace is None:
        return {}
    keys = workspace.model_dump(exclude_none=True)
    if "artefacts" in keys:
        keys.setdefault("byproducts", keys.pop("artefacts"))
    return keys

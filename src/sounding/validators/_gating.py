"""Which judge checks may gate: those people found the judge right on.

With `[judge] min_agreement` set, a judge check gates only when the suite's
`agreement.json` (written by `sounding agreement RUN --save`) shows it agreeing with people
at least that much — kappa for pass/fail, Spearman's correlation for scores, for every
form metric that checks it — over at least `min_samples` trials. Any other judge check
is *unvalidated*: a run still asks the judge and shows its verdict, marked `unvalidated
judge`, and leaves it out of the trial's verdict. Without `min_agreement`, every judge
check gates, as before.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from sounding.checks import Ref, references
from sounding.checks._judge import JudgeParams, check_definition
from sounding.judge import JudgeConfig, JudgeError
from sounding.spec import Assertion, Case, Invariant
from sounding.validators._agreement import (
    AGREEMENT_FILE,
    Agreement,
    AgreementError,
    AgreementReport,
    read_agreement,
)
from sounding.validators._judge import read_rubric, validator_definition

Unvalidated = dict[tuple[str, str], str]
"""(case, judge) → why that judge may not gate."""

Item = TypeVar("Item", Invariant, Assertion)


def gate_judges(
    cases: list[Case], suite_dir: Path, config: JudgeConfig | None
) -> tuple[list[Case], list[str]]:
    """The cases with each judge check that may not gate marked (`unvalidated_judge`), and
    one note per such judge, to print once per run. AgreementError for an agreement.json
    that does not read."""
    if config is None or config.min_agreement is None:
        return cases, []
    unvalidated = unvalidated_judges(cases, read_agreement(suite_dir), config, suite_dir)
    notes = [_note(case, judge, why, config) for (case, judge), why in unvalidated.items()]
    return [_marked(case, unvalidated) for case in cases], notes


def unvalidated_judges(
    cases: list[Case], agreement: AgreementReport | None, config: JudgeConfig, suite_dir: Path
) -> Unvalidated:
    """Each judge that gates a scenario of `cases` (of the suite in `suite_dir`) and may
    not, with why."""
    found: Unvalidated = {}
    for case in cases:
        for judge in dict.fromkeys(_gating_judges(case)):
            asked = _asked(case, judge, config, suite_dir)
            why = _why(case.name, judge, agreement, config, asked)
            if why:
                found[(case.name, judge)] = why
    return found


def may_gate(
    report: AgreementReport, config: JudgeConfig, cases: list[Case]
) -> dict[tuple[str, str], str]:
    """What `report` allows under `config` for the suite's `cases` as they are: (case,
    judge) → why it may not gate, empty when it may, for every judge the report names."""
    by_name = {case.name: case for case in cases}
    suite_dir = Path(report.suite)
    found: dict[tuple[str, str], str] = {}
    for case, judge in dict.fromkeys((a.case, a.judge) for a in report.checks):
        asked = _asked(by_name[case], judge, config, suite_dir) if case in by_name else _Asked()
        found[(case, judge)] = _why(case, judge, report, config, asked)
    return found


@dataclass(frozen=True)
class _Asked:
    """The judge a verdict of a case is asked of today: its models (`provider/model`) and
    its definitions (what it is given; `check_definition`, `validator_definition`)."""

    models: frozenset[str] = frozenset()
    definitions: frozenset[str] = frozenset()


def _asked(case: Case, judge: str, config: JudgeConfig, suite_dir: Path) -> _Asked:
    """How the judge verdict `judge` of the case is asked today: of the suite's judge or of
    the model a check or a judge validator names for itself, with the words it has now."""
    models: set[str] = set()
    definitions: set[str] = set()
    for validator in case.validators:
        if validator.mode == "judge" and judge in validator.metrics:
            models.add(validator.model or config.model)
            rubric = read_rubric(validator, suite_dir)
            if isinstance(rubric, str):
                definitions.add(validator_definition(validator, rubric))
    for scenario in case.scenarios:
        items: list[Invariant | Assertion] = [*scenario.invariants, *scenario.expect]
        for item in items:
            params = item.check.params
            if item.name == judge and isinstance(params, JudgeParams):
                models.add(params.model or config.model)
                definitions.add(check_definition(params))
    named = frozenset(f"{config.provider}/{model}" for model in models)
    return _Asked(named, frozenset(definitions))


def suite_judge(suite_dir: Path) -> JudgeConfig | None:
    """The `[judge]` of the suite's sounding.toml, as a run reads it; None when there is
    none. AgreementError when it does not read."""
    path = suite_dir / "sounding.toml"
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8")).get("judge")
        return JudgeConfig.load(table, root=suite_dir)
    except OSError as exc:
        raise AgreementError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, JudgeError) as exc:
        raise AgreementError(f"{path}: {exc}") from None


def judge_of(case: Case, item: Invariant | Assertion) -> str | None:
    """The judge verdict an item of the case rests on: its own name for a check that asks
    the judge, the metric for a check reading a judge validator's metric; else None."""
    return _judge_of(item, _judge_metrics(case))


def _judge_metrics(case: Case) -> set[str]:
    return {name for name, judge in case.judge_checks().items() if judge.validator}


def _judge_of(item: Invariant | Assertion, judge_metrics: set[str]) -> str | None:
    if item.check.check_type.needs_judge:
        return item.name
    read = (r.value for r in references(item.check.params) if r.ref is Ref.METRIC)
    return next((metric for metric in read if metric in judge_metrics), None)


def _gating_judges(case: Case) -> Iterator[str]:
    judge_metrics = _judge_metrics(case)
    for scenario in case.scenarios:
        items: list[Invariant | Assertion] = [*scenario.invariants, *scenario.expect]
        for item in items:
            judge = _judge_of(item, judge_metrics)
            if judge is not None:
                yield judge


def _why(
    case: str, judge: str, agreement: AgreementReport | None, config: JudgeConfig, asked: _Asked
) -> str:
    if agreement is None:
        return (
            f"its agreement with people was never measured: the suite has no {AGREEMENT_FILE} "
            "(sounding agreement RUN --save)"
        )
    found = agreement.of(case, judge)
    measured = [a for a in found if a.measure is not None]
    if not measured:
        said = found[0].not_measured if found else f"{AGREEMENT_FILE} does not name it"
        return f"not measured against people: {said}"
    return next((why for a in measured if (why := _short(a, config, asked))), "")


def _short(agreement: Agreement, config: JudgeConfig, asked: _Asked) -> str:
    """Why one measurement falls short of the bar for the judge as it is asked today;
    empty when it does not. A measurement that names no model or definition (saved before
    they were kept) is taken as it is on that count."""
    measure = agreement.measure
    assert measure is not None and config.min_agreement is not None
    name = f"{measure.statistic.value} with '{agreement.form}'"
    again = "measure it again (sounding agreement RUN --save, on a run judged as it is now)"
    switched = sorted(asked.models - set(agreement.judged_by)) if agreement.judged_by else []
    if switched:
        return (
            f"{name} was measured on the verdicts of {', '.join(agreement.judged_by)}, and the "
            f"judge is now {', '.join(switched)}: {again}"
        )
    if agreement.definitions and asked.definitions - set(agreement.definitions):
        return (
            f"{name} was measured on verdicts given other words: its criteria, rubric or "
            f"settings changed since: {again}"
        )
    if agreement.trials < config.min_samples:
        return (
            f"{name} was measured on {agreement.trials} trials, fewer than "
            f"min_samples {config.min_samples}"
        )
    if measure.estimate < config.min_agreement:
        return f"{name} is {measure.estimate:.2f}, under min_agreement {config.min_agreement:.2f}"
    return ""


def _note(case: str, judge: str, why: str, config: JudgeConfig) -> str:
    return (
        f"judge check '{judge}' of case '{case}' may not gate ([judge] min_agreement "
        f"{config.min_agreement:.2f}): {why}; its verdicts are shown as 'unvalidated judge' "
        "and left out of the verdicts"
    )


def _marked(case: Case, unvalidated: Unvalidated) -> Case:
    if not any(place[0] == case.name for place in unvalidated):
        return case
    judge_metrics = _judge_metrics(case)

    def mark(item: Item) -> Item:
        judge = _judge_of(item, judge_metrics)
        why = unvalidated.get((case.name, judge)) if judge is not None else None
        return item.model_copy(update={"unvalidated_judge": why}) if why else item

    scenarios = [
        s.model_copy(
            update={
                "invariants": [mark(i) for i in s.invariants],
                "expect": [mark(a) for a in s.expect],
            }
        )
        for s in case.scenarios
    ]
    return case.model_copy(update={"scenarios": scenarios})

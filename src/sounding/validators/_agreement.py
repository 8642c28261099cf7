"""How far each judge of a run agrees with the people who filled the same trials by hand.

A form metric names the judge verdict it checks (`checks:` of a form validator). For each
judge of a case — a check that asks the judge, or a judge validator's metric — the trials
holding both its verdict and a value filled by hand give pairs: yes/no pairs are compared
with Cohen's kappa, numbers with Spearman's rank correlation and the mean absolute error,
each with a seeded bootstrap interval (`sounding.scoring`). A judge nobody checked, or whose
pairs allow no statistic, is *not measured*, and says why.

The document (`sounding.agreement/1`) is what `sounding agreement RUN --json` prints and
what `--save` keeps as `agreement.json` in the suite, where later runs read it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sounding._files import loads, read_json, read_regular, write_text
from sounding.checks import Status
from sounding.judge import judged_by
from sounding.scoring import Interval, Statistic, agreement_interval, observed_agreement
from sounding.spec import Case, JudgeCheck, SpecError, case_files, load_cases
from sounding.store import ResultsError, Trial, finished_trials, read_plan

AGREEMENT_SCHEMA = "sounding.agreement/1"
AGREEMENT_FILE = "agreement.json"
KEPT_LIMIT = 1 << 20
"""The most of a judge validator's kept verdict read: a few hundred bytes when sounding
wrote it."""
PASS_FAIL, SCORE = "pass/fail", "score"
Scale = Literal["pass/fail", "score"]


class AgreementError(Exception):
    """A run or an agreement file that cannot be read; says which and how to fix it."""


class Agreement(BaseModel):
    """One judge of a case against one form metric people filled (or against nobody).

    `kappa` and `observed` (the share of trials both answered alike) are for pass/fail;
    `spearman` and `mae` for scores. `not_measured` says why there is no statistic to gate
    on: nobody checks this judge, nobody filled the metric, or the pairs allow none.
    `judged_by` names the models (`provider/model`) whose verdicts were paired, and
    `definitions` the judge as those verdicts had it (a digest of what it was given and
    how its answer was read): the agreement holds for them, not for a judge changed since.
    """

    model_config = ConfigDict(extra="ignore", frozen=True)

    case: str
    judge: str
    source: Literal["check", "metric"]  # a check asking the judge, or a judge metric
    form: str | None = None
    scale: Scale | None = None
    trials: int = 0
    kappa: Interval | None = None
    observed: float | None = None
    spearman: Interval | None = None
    mae: Interval | None = None
    not_measured: str = ""
    judged_by: list[str] = Field(default_factory=list)  # models of the paired verdicts
    definitions: list[str] = Field(default_factory=list)  # the judge as they had it

    @property
    def measure(self) -> Interval | None:
        """What gates: kappa for pass/fail, Spearman's correlation for scores."""
        return self.kappa if self.scale == PASS_FAIL else self.spearman

    @property
    def label(self) -> str:
        return f"{self.case}/{self.judge}"


class AgreementReport(BaseModel):
    """`sounding.agreement/1`: every judge of a run's suite against people."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    schema_: str = Field(default=AGREEMENT_SCHEMA, alias="schema")
    run_id: str
    suite: str
    checks: list[Agreement]

    def document(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)

    def of(self, case: str, judge: str) -> list[Agreement]:
        """The measurements of one judge of one case (one per form metric checking it)."""
        return [a for a in self.checks if a.case == case and a.judge == judge]


@dataclass(frozen=True)
class _Tie:
    """A judge of a case, the form metric checking it (None: nobody does) and its pairs."""

    case: str
    judge: JudgeCheck
    form: str | None = None
    scale: Scale | None = None
    pairs: list[tuple[float, float]] = field(default_factory=list)
    models: set[str] = field(default_factory=set)  # whose verdicts the pairs hold
    definitions: set[str] = field(default_factory=set)  # of the judge, as each verdict had it


def measure_agreement(run_dir: Path) -> AgreementReport:
    """Every judge of the run's suite (its case files as they are today) against the values
    people filled on the run's form; AgreementError when the run or the suite cannot be read.
    Intervals are drawn with the defaults of `sounding.scoring` (their seed among them), so
    the same run gives the same intervals."""
    try:
        plan = read_plan(run_dir)
        suite = Path(plan.suite)
        ties = [tie for case in suite_cases(suite) for tie in _ties(case)]
        for folder, trial in finished_trials(run_dir, plan):
            for tie in ties:
                _add_pair(tie, trial, folder)
    except ResultsError as exc:
        raise AgreementError(str(exc)) from None
    checks = [_measured(tie) for tie in ties]
    return AgreementReport(run_id=plan.run_id, suite=str(suite), checks=checks)


def suite_cases(suite: Path) -> list[Case]:
    """The suite's case files as they are today; AgreementError when they do not load."""
    try:
        return load_cases(case_files(suite / "cases"), suite_dir=suite)
    except SpecError as exc:
        raise AgreementError(f"the suite's case files do not load:\n{exc}") from None


def _ties(case: Case) -> Iterator[_Tie]:
    """Each judge of the case with each form metric that checks it, or alone."""
    checked: dict[str, list[tuple[str, Scale]]] = {}
    for validator in case.validators:
        for metric, name in validator.checks.items():
            scale: Scale = "score" if validator.kind(metric) == "number" else "pass/fail"
            checked.setdefault(name, []).append((metric, scale))
    for judge in case.judge_checks().values():
        forms = checked.get(judge.name, [])
        if not forms:
            yield _Tie(case.name, judge)
        for metric, on in forms:
            yield _Tie(case.name, judge, metric, on)


def _add_pair(tie: _Tie, trial: Trial, folder: Path) -> None:
    if tie.form is None or trial.case != tie.case:
        return
    person = _typed(trial.metrics.get(tie.form), tie.scale)
    if person is None:
        return
    judge, kept = _judge_value(tie, trial, folder)
    if judge is not None:
        tie.pairs.append((judge, person))
        tie.models.add(judged_by(kept.get("provenance")))
        tie.definitions.add(str(kept.get("definition") or ""))


def _judge_value(tie: _Tie, trial: Trial, folder: Path) -> tuple[float | None, dict[str, Any]]:
    """The judge's verdict on the trial, on the tie's scale (None when it gave none), and
    what was kept with it (its provenance and definition; empty when nothing was)."""
    if tie.judge.validator is not None:
        value = _typed(trial.metrics.get(tie.judge.name), tie.scale)
        if value is None:
            return None, {}
        return value, _kept_verdict(folder / "validation" / f"{tie.judge.validator}.json")
    checks = trial.score.checks if trial.score else []
    found = next((m.result for m in checks if m.name == tie.judge.name), None)
    if found is None or not found.judged:
        return None, {}
    value = float(found.status is Status.PASSED) if tie.scale == PASS_FAIL else found.score
    return value, found.details


def _kept_verdict(path: Path) -> dict[str, Any]:
    """What a judge validator kept beside its answer (the verdict's provenance and
    definition): read as a regular file within a bound, never through a link or from a
    FIFO; empty when it cannot be read so."""
    found = read_regular(path, KEPT_LIMIT)
    if found is None or found[1] > KEPT_LIMIT:
        return {}
    try:
        kept = loads(found[0])
    except ValueError:
        return {}
    return kept if isinstance(kept, dict) else {}


def _typed(value: Any, scale: Scale | None) -> float | None:
    """A yes/no value (pass/fail) or a number (score) as a float; None for anything else."""
    if isinstance(value, bool):
        return float(value) if scale == PASS_FAIL else None
    if isinstance(value, int | float) and scale == SCORE:
        return float(value)
    return None


def _measured(tie: _Tie) -> Agreement:
    source: Literal["check", "metric"] = "check" if tie.judge.validator is None else "metric"
    base = Agreement(case=tie.case, judge=tie.judge.name, source=source, form=tie.form)
    if tie.form is None:
        why = (
            "no form metric checks it: tie one to it with `checks:` in a form validator "
            "(docs/judge.md, Is the judge right?)"
        )
        return base.model_copy(update={"not_measured": why})
    found: dict[str, Any] = {
        "scale": tie.scale,
        "trials": len(tie.pairs),
        "judged_by": sorted(tie.models - {""}),
        "definitions": sorted(tie.definitions - {""}),
    }
    pairs = tie.pairs
    if tie.scale == PASS_FAIL and pairs:
        found["kappa"] = agreement_interval(pairs, Statistic.KAPPA)
        found["observed"] = observed_agreement(pairs)
    elif pairs:
        found["spearman"] = agreement_interval(pairs, Statistic.SPEARMAN)
        found["mae"] = agreement_interval(pairs, Statistic.MAE)
    measured = base.model_copy(update=found)
    if measured.measure is None:
        why = _why_not(tie)
        measured = measured.model_copy(update={"not_measured": why})
    return measured


def _why_not(tie: _Tie) -> str:
    if not tie.pairs:
        return (
            f"no trial holds both the judge's verdict and a value of '{tie.form}' filled by "
            "hand: export the form, fill it, import it (sounding form export / import)"
        )
    if tie.scale == PASS_FAIL:
        said = {"yes" if judge else "no" for judge, _ in tie.pairs}
        return (
            f"both sides said '{said.pop()}' on all {len(tie.pairs)} trials: kappa needs "
            "trials of both answers"
        )
    return f"a side gave one value on all {len(tie.pairs)} trials: there is no order to compare"


# ---- agreement.json in the suite ----------------------------------------------------------


def save_agreement(suite_dir: Path, report: AgreementReport) -> Path:
    """Keep the report as the suite's `agreement.json`, which later runs read."""
    path = suite_dir / AGREEMENT_FILE
    write_text(path, json.dumps(report.document(), indent=1, ensure_ascii=False) + "\n")
    return path


def read_agreement(suite_dir: Path) -> AgreementReport | None:
    """The suite's `agreement.json`; None when there is none, AgreementError when it does not
    read as one."""
    path = suite_dir / AGREEMENT_FILE
    if not path.is_file():
        return None
    redo = "measure it again with `sounding agreement RUN --save`, or remove it"
    try:
        document = read_json(path)
    except (OSError, ValueError) as exc:
        raise AgreementError(f"{path}: not readable as JSON ({exc}): {redo}") from None
    found = document.get("schema") if isinstance(document, dict) else None
    if found != AGREEMENT_SCHEMA:
        raise AgreementError(f"{path}: schema {found!r}, expected '{AGREEMENT_SCHEMA}': {redo}")
    try:
        return AgreementReport.model_validate(document)
    except ValidationError as exc:
        raise AgreementError(f"{path}: does not match {AGREEMENT_SCHEMA} ({exc}): {redo}") from None

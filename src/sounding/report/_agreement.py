"""`sounding agreement RUN_DIR`: how far each judge agrees with the people who filled the
same trials by hand (`sounding.validators.measure_agreement`), and, with `[judge]
min_agreement` set, which judge checks that allows to gate. `--save` keeps the measurement
as the suite's `agreement.json`, which later runs read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from sounding._exit import ExitCode
from sounding.judge import JudgeConfig
from sounding.scoring import Interval
from sounding.spec import Case
from sounding.validators import (
    Agreement,
    AgreementError,
    AgreementReport,
    may_gate,
    measure_agreement,
    save_agreement,
    suite_cases,
    suite_judge,
)


def agreement_command(run_dir: Path, *, as_json: bool = False, save: bool = False) -> int:
    """Print the agreement of the run's judges with people (or its JSON); 0 when done, 2
    when the run, its suite or its agreement settings cannot be read."""
    out, err = Console(highlight=False, soft_wrap=True), Console(stderr=True, soft_wrap=True)
    try:
        report = measure_agreement(run_dir)
        config = suite_judge(Path(report.suite))
        cases = suite_cases(Path(report.suite))
    except AgreementError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
        return ExitCode.USAGE
    policy = config if config is not None and config.min_agreement is not None else None
    if as_json:
        document = {**report.document(), "gating": _gating(report, policy, cases)}
        print(json.dumps(document, indent=1, ensure_ascii=False))
    else:
        print_agreement(out, report, policy, cases)
    if save:
        path = save_agreement(Path(report.suite), report)
        (err if as_json else out).print(
            f"saved {escape(str(path))}: later runs of the suite gate on it", highlight=False
        )
    return ExitCode.PASS


def print_agreement(
    console: Console,
    report: AgreementReport,
    policy: JudgeConfig | None,
    cases: list[Case],
) -> None:
    """One line per judge and form metric, then, with a policy, which judges may gate
    (the suite's `cases` as they are today say which model each judge asks)."""
    console.print(f"agreement of the judges with people, run {escape(report.run_id)}")
    if not report.checks:
        console.print("no judge check in the suite's cases: nothing to measure")
        return
    first = next((i for a in report.checks if (i := a.measure) is not None), None)
    if first is not None:
        console.print(
            f"({first.level:.0%} bootstrap intervals, {first.draws:,} draws, seed {first.seed})"
        )
    console.print()
    width = max(len(_tied(a)) for a in report.checks)
    for agreement in report.checks:
        console.print(agreement_line(agreement, width), highlight=False)
    if policy is not None:
        _print_gating(console, report, policy, cases)


def _tied(agreement: Agreement) -> str:
    """`case/judge ← form`, or `case/judge` for a judge no form metric checks."""
    return agreement.label + (f" ← {agreement.form}" if agreement.form else "")


def agreement_line(agreement: Agreement, width: int = 0) -> str:
    """`case/judge ← form  pass/fail  24 trials  kappa 0.72 [0.45, 0.93], 22 of 24 alike`."""
    head = escape(_tied(agreement).ljust(width))
    if agreement.measure is None:
        return f"{head}  [yellow]not measured[/]: {escape(agreement.not_measured)}"
    said = f"{head}  {agreement.scale:<9}  {agreement.trials} trials  "
    if agreement.kappa is not None:
        alike = round((agreement.observed or 0.0) * agreement.trials)
        return said + f"kappa {_interval(agreement.kappa)}, {alike} of {agreement.trials} alike"
    assert agreement.spearman is not None and agreement.mae is not None
    return said + (
        f"spearman {_interval(agreement.spearman)}, mean absolute error {_interval(agreement.mae)}"
    )


def _interval(found: Interval) -> str:
    return f"{found.estimate:.2f} [{found.low:.2f}, {found.high:.2f}]"


def _print_gating(
    console: Console, report: AgreementReport, policy: JudgeConfig, cases: list[Case]
) -> None:
    console.print(
        f"\n[judge] min_agreement {policy.min_agreement:.2f} over at least "
        f"{policy.min_samples} trials:",
        highlight=False,
        markup=False,
    )
    verdicts = may_gate(report, policy, cases)
    width = max(len(f"{case}/{judge}") for case, judge in verdicts)
    for (case, judge), why in verdicts.items():
        label = escape(f"{case}/{judge}".ljust(width))
        verdict = "[green]may gate[/]" if not why else f"[red]may not gate[/]: {escape(why)}"
        console.print(f"  {label}  {verdict}", highlight=False)


def _gating(
    report: AgreementReport, policy: JudgeConfig | None, cases: list[Case]
) -> dict[str, Any] | None:
    """The `gating` object of the JSON: None without `min_agreement`."""
    if policy is None:
        return None
    judges = [
        {"case": case, "judge": judge, "gates": not why, "why": why}
        for (case, judge), why in may_gate(report, policy, cases).items()
    ]
    limits = {"min_agreement": policy.min_agreement, "min_samples": policy.min_samples}
    return {**limits, "judges": judges}

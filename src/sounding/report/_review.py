"""`sounding review RESULTS_DIR`: the trials that did not pass, with why; with
`--simulator`, those with a simulated user, read a second time for the simulator's mistakes
(`sounding.simulator.review`), so a user sees how many failures are the simulator's doing."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from sounding._exit import ExitCode
from sounding._words import counted
from sounding.scoring import TrialVerdict
from sounding.simulator import Flag, review
from sounding.store import ResultsError, Trial, load_results

REVIEW_SCHEMA = "sounding.review/1"


def review_command(run_dir: Path, *, simulator: bool, as_json: bool) -> int:
    """Print the review of a stored run; 0 when done, 2 when the folder cannot be read."""
    out = Console(highlight=False, soft_wrap=True)
    try:
        results = load_results(run_dir)
    except ResultsError as exc:
        Console(stderr=True).print(f"[red]error:[/] {escape(str(exc))}")
        return ExitCode.USAGE
    trials = [t for t in results.trials if t.verdict is not TrialVerdict.PASS]
    if simulator:
        trials = [t for t in trials if t.simulated is not None]
    reviewed = [(t, review(t.simulated, t.record) if t.simulated else []) for t in trials]
    if as_json:
        document = {"schema": REVIEW_SCHEMA, "run_id": results.run_id, "simulator": simulator}
        document |= {"trials": [_entry(t, flags) for t, flags in reviewed]}
        out.print_json(json.dumps(document))
    else:
        _print(out, reviewed, simulator)
    return ExitCode.PASS


def _entry(trial: Trial, flags: list[Flag]) -> dict[str, Any]:
    return {
        **trial.key.as_dict(),
        "verdict": trial.verdict.value,
        "error_kind": trial.error_kind,
        "reason": trial.reason,
        "flags": [f.as_dict() for f in flags],
    }


def _print(out: Console, reviewed: Sequence[tuple[Trial, list[Flag]]], simulator: bool) -> None:
    failed = [(t, f) for t, f in reviewed if t.verdict is TrialVerdict.FAIL]
    errored = [(t, f) for t, f in reviewed if t.verdict is TrialVerdict.ERROR]
    if not simulator:
        out.print(f"{counted(len(failed), 'trial')} failed, {len(errored)} errored")
        _section(out, "failed", failed)
        _section(out, "errored", errored)
        return
    flagged = [(t, f) for t, f in failed if f]
    own = [(t, f) for t, f in errored if t.error_kind == "simulator"]
    out.print(
        f"{counted(len(failed), 'trial')} with a simulated user failed, "
        f"{len(flagged)} of them flagged as the simulator's doing; "
        f"{counted(len(own), 'trial')} errored by the simulator itself"
    )
    _section(out, "flagged: the simulated user may have caused these", flagged)
    _section(out, "failed, no flag on the simulated user", [(t, f) for t, f in failed if not f])
    _section(out, "errors of the simulator (never counted as failures)", own)


def _section(out: Console, title: str, trials: Sequence[tuple[Trial, list[Flag]]]) -> None:
    if not trials:
        return
    out.print(f"\n[bold]{escape(title)}[/]")
    for trial, flags in trials:
        kind = f" ({trial.error_kind})" if trial.error_kind else ""
        out.print(f"  {trial.verdict.value.upper()}{kind} {escape(trial.key.label)}: ", end="")
        out.print(escape(trial.reason or "no reason given"))
        for flag in flags:
            out.print(f"    turn {flag.turn} {flag.kind}: {escape(flag.says)}")

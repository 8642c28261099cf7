"""The versioned machine-readable report of a run (schema `sounding.report/1`)."""

from __future__ import annotations

import json
from typing import Any

from sounding.report._cells import cells_report
from sounding.report._renderers import renderers
from sounding.store import Results, ScenarioTrials, Trial

REPORT_SCHEMA = "sounding.report/1"


@renderers.renderer("json", title="JSON", help="Write the JSON report (sounding.report/1).")
def json_report(results: Results) -> str:
    """The run, its totals and every scenario with its trials, as indented JSON."""
    return json.dumps(report_document(results), indent=1, ensure_ascii=False) + "\n"


def report_document(results: Results) -> dict[str, Any]:
    summary = results.finished()
    cells = cells_report(results)
    return {
        "schema": REPORT_SCHEMA,
        "run": _run(results),
        "outcome": summary.outcome,
        "exit_code": summary.exit_code,
        "totals": {
            **summary.totals,
            "scenarios": len(summary.scenarios),
            "trials": len(results.planned),
        },
        "curves": {
            cell: [point.model_dump(mode="json") for point in points]
            for cell, points in summary.curves.items()
        },
        "scenarios": [_scenario(results, s) for s in results.scenarios],
        "cells": cells.as_dict() if cells else None,
    }


def _run(results: Results) -> dict[str, Any]:
    return {
        "run_id": results.run_id,
        "suite": results.plan.suite,
        "path": str(results.root),
        "options": results.plan.options,
        "cells": results.cells,
        "planned_trials": len(results.planned),
        "finished_trials": len(results.trials),
        "errored_trials": len(results.errored),
    }


def _scenario(results: Results, scenario: ScenarioTrials) -> dict[str, Any]:
    rate = scenario.pass_rate
    return {
        **scenario.summary.model_dump(mode="json"),
        "pass_rate": rate.model_dump(mode="json") if rate else None,
        "spending": {k: v.model_dump(mode="json") for k, v in scenario.spending.items()},
        "trial_results": [_trial(results, t) for t in scenario.trials],
    }


def _trial(results: Results, trial: Trial) -> dict[str, Any]:
    score = trial.score
    return {
        "trial": trial.trial,
        "state": trial.state,
        "verdict": trial.verdict.value,
        "reason": trial.reason,
        "composite": score.composite if score else None,
        "threshold": score.threshold if score else None,
        "duration_ms": trial.duration_ms,
        "attempts": trial.attempts,
        "usage": trial.usage,
        "judge_usage": trial.judge_usage,
        "folder": results.folder(trial).relative_to(results.root).as_posix(),
        "checks": [m.summary() for m in (score.checks if score else [])],
    }

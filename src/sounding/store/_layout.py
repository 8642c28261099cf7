"""Where a run keeps its artifacts: `results/<run-id>/` with one folder per trial.

<run-id>/run.json                               the plan and options (sounding.results/2)
<run-id>/summary.json                           verdicts per scenario (sounding.summary/1)
<run-id>/trials/<cell>/<case>/<scenario>#<n>/   one folder per trial (named like its label,
                                                `case/scenario#n`):
    trial.json      state, verdict, checks, files touched, and the run record
                    (sounding.trial/2; the record is a sounding.run/1 document); written
                    last: its presence means the trial finished and will never run again
    stdout.txt, stderr.txt, trace.jsonl, diff.patch
    workspace/      what the agent created or changed in its workspace (the whole final
                    workspace when the case has validators, or the trial errored; absent
                    when a callable never asked for one)
    services/       what the services recorded (HTTP requests, the SQLite file)
    validation/     the validators' context.json and what they printed
<run-id>/origins/<n>/                           each start state of the run's workspaces, once
<run-id>/measures.json                          one record per trial (sounding.measures/1)
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

RESULTS_SCHEMA = "sounding.results/2"
NESTED_SCHEMA = "sounding.results/1"  # its trial folders were <scenario>/<n>/
RESULTS_SCHEMAS = (NESTED_SCHEMA, RESULTS_SCHEMA)
SUMMARY_SCHEMA = "sounding.summary/1"

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def safe_name(text: str) -> str:
    """A folder name made from user text: no separators, no leading dots."""
    return _UNSAFE.sub("_", text).lstrip(".") or "_"


def scenario_label(cell: str, case: str, scenario: str) -> str:
    """`case/scenario`, with `[cell] ` in front for any cell but the default one."""
    shown = "" if cell == "default" else f"[{cell}] "
    return f"{shown}{case}/{scenario}"


@dataclass(frozen=True, order=True)
class TrialKey:
    """Names one trial: cell × case × scenario × trial number (1-based)."""

    cell: str
    case: str
    scenario: str
    trial: int

    @property
    def label(self) -> str:
        return f"{scenario_label(self.cell, self.case, self.scenario)}#{self.trial}"

    def as_dict(self) -> dict[str, str | int]:
        return asdict(self)


@dataclass(frozen=True)
class RunLayout:
    """The folders and files of one run."""

    root: Path
    nested: bool = False  # a run written as sounding.results/1

    @property
    def run_id(self) -> str:
        return self.root.name

    def trial_dir(self, key: TrialKey) -> Path:
        """`trials/<cell>/<case>/<scenario>#<n>`: one folder made per trial, not two (a
        safe name holds no `#`, so the trial number is what follows the last one)."""
        cell, case, scenario = safe_name(key.cell), safe_name(key.case), safe_name(key.scenario)
        mark = "/" if self.nested else "#"
        return self.root / "trials" / cell / case / f"{scenario}{mark}{key.trial}"

    def retried_dir(self, key: TrialKey, attempt: int) -> Path:
        """`retried/<cell>/<case>/<scenario>#<n>.<attempt>`: a trial's folder as it stood
        when an error that was not the agent's made it run again (`--retry-errors`)."""
        cell, case, scenario = safe_name(key.cell), safe_name(key.case), safe_name(key.scenario)
        return self.root / "retried" / cell / case / f"{scenario}#{key.trial}.{attempt}"


def allocate_run(results_dir: Path, prefix: str = "") -> RunLayout:
    """A fresh run folder, named by the time after `prefix` (`audit-` for an audit's);
    never reuses an existing one."""
    results_dir.mkdir(parents=True, exist_ok=True)
    base = prefix + datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    for n in range(1000):
        candidate = results_dir / (base if n == 0 else f"{base}-{n}")
        try:
            candidate.mkdir()
        except FileExistsError:
            continue
        return RunLayout(candidate)
    raise RuntimeError(f"could not allocate a run folder in {results_dir}")

"""The context a validator reads: one archived JSON file of absolute paths and facts.

The harness computes every fact here once (touched, by-products, given, files), so no
validator has to work them out again, and gets a different answer. The file is kept in
the trial's `validation/` folder, so a validation replays by hand months later with the
same command and the same file.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from sounding._files import write_json, write_text
from sounding.checks import Evidence
from sounding.spec import Case, Scenario

CONTEXT_SCHEMA = "sounding.validation-context/1"
CONTEXT_FILE = "context.json"
PROMPT_FILE = "prompt.txt"
RECORD_FILE = "record.json"


@dataclass(frozen=True)
class FinishedTrial:
    """What validators see of one finished trial, handed over by the runner.

    `prompt` is the task as this trial's cell sent it (its turns, a blank line apart);
    `reference` is the pristine tree the workspace started from (None for an empty
    workspace); `given` the files laid on top of it before the agent started.
    """

    folder: Path
    case: Case
    scenario: Scenario
    cell: str
    trial: int
    prompt: str
    evidence: Evidence
    suite_dir: Path
    reference: Path | None = None
    reference_ref: str | None = None
    given: tuple[str, ...] = ()
    record: str | None = None  # the run record as stored (JSON, secrets replaced)


class Reference(BaseModel):
    """The pinned side: the tag or commit (None for a fixture folder) and its tree."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    ref: str | None = None
    checkout: str | None = None


class ContextDocument(BaseModel):
    """`validation/context.json` (schema `sounding.validation-context/1`), field by field.

    `test_command` is absent when the scenario declares none: that is a different fact from
    an empty command. `declared` lists every metric the case's validators declare.
    """

    model_config = ConfigDict(extra="ignore", frozen=True)

    schema_: str = Field(default=CONTEXT_SCHEMA, alias="schema")
    workspace: str
    reference: Reference = Field(default_factory=Reference)
    prompt: str | None = None
    trace: str | None = None
    record: str | None = None
    suite: str | None = None
    case: str = ""
    scenario: str = ""
    trial: int = 0
    cell: str = ""
    declared: list[str] = Field(default_factory=list)
    touched: list[str] = Field(default_factory=list)
    byproducts: list[str] = Field(default_factory=list)
    artefacts: list[str] = Field(default_factory=list)  # the old name of `byproducts`
    given: list[str] = Field(default_factory=list)
    files: list[str] = Field(default_factory=list)
    test_command: str | None = None
    prepare: list[str] = Field(default_factory=list)


def write_context(trial: FinishedTrial, folder: Path) -> Path:
    """Write the prompt file and `context.json` into `folder`; returns the context's path."""
    prompt = folder / PROMPT_FILE
    write_text(prompt, trial.prompt)
    if trial.record is not None:  # trial.json, which holds it too, is written after the checks
        write_text(folder / RECORD_FILE, trial.record)
    path = folder / CONTEXT_FILE
    document = context_document(trial, prompt)
    # absent, not null, when the scenario declares no suite: an absent key is its own fact
    absent = {"test_command"} if document.test_command is None else set()
    write_json(path, document.model_dump(mode="json", by_alias=True, exclude=absent))
    return path


def keep_json(path: Path, document: object) -> None:
    """Write a validator's answer (or request) into `validation/`, indented for a person."""
    write_text(path, json.dumps(document, indent=1, ensure_ascii=False, default=str) + "\n")


def context_document(trial: FinishedTrial, prompt: Path) -> ContextDocument:
    evidence = trial.evidence
    workspace = (evidence.workspace or trial.folder / "workspace").resolve()
    trace = evidence.extra.get("trace_path")
    record = prompt.parent / RECORD_FILE
    return ContextDocument(
        workspace=str(workspace),
        reference=Reference(
            ref=trial.reference_ref,
            checkout=str(trial.reference.resolve()) if trial.reference else None,
        ),
        prompt=str(prompt.resolve()),
        trace=str(Path(trace).resolve()) if trace and Path(trace).is_file() else None,
        record=str(record.resolve()) if record.is_file() else None,
        suite=str(trial.suite_dir.resolve()),
        case=trial.case.name,
        scenario=trial.scenario.id,
        trial=trial.trial,
        cell=trial.cell,
        declared=[m for v in trial.case.validators for m in v.metrics],
        touched=sorted(evidence.touched or ()),
        byproducts=sorted(evidence.byproducts),
        artefacts=sorted(evidence.byproducts),
        given=sorted(trial.given),
        files=workspace_files(workspace),
        test_command=trial.scenario.test_command,
        prepare=list(trial.scenario.prepare),
    )


def workspace_files(root: Path) -> list[str]:
    """Every file (and symlink) under `root`, relative and sorted; `.git` left out."""
    found: list[str] = []
    for folder, dirs, files in os.walk(root):  # nothing when `root` is no folder
        dirs[:] = sorted(d for d in dirs if not (folder == str(root) and d == ".git"))
        here = Path(folder).relative_to(root)
        found.extend((here / name).as_posix() for name in files)
        found.extend(
            (here / name).as_posix() for name in dirs if (Path(folder) / name).is_symlink()
        )
    return sorted(found)

"""Judge mode: one call of the suite's judge per trial, every declared metric at once.

The judge reads only the declared pieces (the prompt, the agent's final response — not its
transcript —, the diff) and the rubric; never the cell's name. Its verdict is a forced tool
call whose parameters are the declared metrics, read back strictly. A judge that never
calls the tool leaves the trial invalid: a broken judge must not read as a negative verdict.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol

from sounding.checks import Judge
from sounding.checks._judge import NO_JUDGE
from sounding.judge import JudgeError, digest, judge_request, verdict_tool
from sounding.spec import Case, ValidatorSpec
from sounding.validators._answer import Answer
from sounding.validators._context import FinishedTrial, keep_json

TOOL_DESCRIPTION = (
    "Record your verdict on every metric of the rubric. Call this exactly once, even when "
    "the material is empty or unreadable."
)
_TITLES = {
    "prompt": "The task the agent was given",
    "response": "The agent's final response",
    "diff": "What the agent changed (unified diff)",
}
_PROBE = "the task"


class CellLike(Protocol):
    """What the blinding note needs of a cell: the turns it sends."""

    def turns(self, turns: list[str]) -> list[str]: ...


def material(pieces: Sequence[str], trial: FinishedTrial) -> str:
    """The declared pieces of one trial, each under its own heading, in declared order."""
    texts = {
        "prompt": trial.prompt,
        "response": trial.evidence.record.final_answer or "",
        "diff": trial.evidence.diff or "",
    }
    text = "\n\n".join(f"## {_TITLES[p]}\n\n{texts[p].strip() or '(empty)'}" for p in pieces)
    return trial.evidence.blind(text)


def run_judge(spec: ValidatorSpec, trial: FinishedTrial, judge: Judge | None) -> Answer | str:
    """Ask the judge once; its metrics, or why the trial is invalid."""
    if judge is None:
        return NO_JUDGE
    rubric = read_rubric(spec, trial.suite_dir)
    if isinstance(rubric, OSError | UnicodeDecodeError):
        return f"cannot read rubric '{spec.rubric}' in {trial.suite_dir}: {rubric}"
    tool = verdict_tool(
        {metric: spec.kind(metric) for metric in spec.metrics}, description=TOOL_DESCRIPTION
    )
    request = judge_request(
        criteria=rubric, material=material(spec.pieces, trial), tool=tool, model=spec.model
    )
    folder = trial.folder / "validation"
    keep_json(folder / f"{spec.name}.request.json", request.model_dump(mode="json"))
    try:
        verdict = judge.verdict(request)
    except JudgeError as exc:
        return f"the judge gave no verdict: {exc}"
    kept = {
        "metrics": verdict.values,
        "cached": verdict.cached,
        "provenance": verdict.provenance.model_dump(),
        "definition": validator_definition(spec, rubric),
    }
    keep_json(folder / f"{spec.name}.json", kept)
    return Answer(metrics=dict(verdict.values))


def read_rubric(spec: ValidatorSpec, suite_dir: Path) -> str | OSError | UnicodeDecodeError:
    """The text of a judge validator's rubric, or why it cannot be read."""
    try:
        return (suite_dir / (spec.rubric or "")).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return exc


def validator_definition(spec: ValidatorSpec, rubric: str) -> str:
    """What the judge is given and asked, as a digest (see `checks._judge.check_definition`)."""
    asked = {"rubric": rubric, "pieces": spec.pieces, "metrics": spec.metrics, "types": spec.types}
    return digest(asked)[:16]


def blinding_note(pieces: Sequence[str], cells: Sequence[CellLike]) -> str | None:
    """A warning when a declared piece differs between cells (the judge could tell them
    apart), else None. Only the prompt can: a cell's `prompt` delta is sent with the task.
    """
    sent = {tuple(cell.turns([_PROBE])) for cell in cells}  # what each cell makes of one task
    if "prompt" not in pieces or len(sent) < 2:
        return None
    return (
        "judge is only partially blind: the prompt varies between cells, so the judge can "
        "identify the treatment"
    )


def blinding_notes(cases: Iterable[Case], cells: Sequence[CellLike]) -> list[str]:
    """One note per judge validator that is only partially blind, to print once per run."""
    notes: list[str] = []
    for case in cases:
        for spec in case.validators:
            note = blinding_note(spec.pieces, cells) if spec.mode == "judge" else None
            if note is not None:
                notes.append(f"{note} (validator '{spec.name}' of case '{case.name}')")
    return notes

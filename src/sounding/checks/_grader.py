"""`grader`: a Python function of the suite's `checks/` judges the trial.

`grader: {name: quality.answers, pass_below: 0.7}` calls `answers(t, case, run)` from
`checks/quality.py` in a process of its own. Its own pass must hold, and with
`pass_below` its score must reach that value too. A grader that raises, runs past the
check's time limit or answers off contract is an `error`, never a decision.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from sounding.checks._base import CheckContext, CheckResult, Evidence, Params
from sounding.checks._fields import checked
from sounding.checks._registry import Refused, registry
from sounding.judge import GraderAnswer, GraderError, find_graders, grader_name, run_grader


class GraderParams(Params):
    """Which grader (`file.function` in checks/) and the score the trial passes at."""

    name: Annotated[str, checked(grader_name)]
    pass_below: float | None = Field(default=None, ge=0.0, le=1.0)


def graders_held(suite_dir: Path) -> Callable[[GraderParams], None]:
    """At load: the grader a check names is a function of the suite's checks/, not one found
    missing on a run. A file there that does not parse is refused with its line."""
    try:
        known = sorted(find_graders(suite_dir))
    except GraderError as exc:
        raise Refused(str(exc)) from None

    def held(params: GraderParams) -> None:
        if params.name not in known:
            where = f"which {suite_dir / 'checks'} does not hold: write it as a function there"
            message = f"names grader '{params.name}', {where}"
            raise Refused(message, field="name", allowed=known, typo=params.name)

    return held


@registry.check(
    "grader",
    GraderParams,
    family="judge",
    costly=True,
    shorthand="name",
    in_suite=graders_held,
    graded=True,
)
def grader(params: GraderParams, context: CheckContext) -> CheckResult:
    """A grader function `file.function(t, case, run)` from checks/ passes the trial."""
    if context.suite_dir is None:
        return CheckResult.error(
            f"grader '{params.name}' needs the suite's folder to find checks/, and none was given"
        )
    judge, blind = context.judge, context.evidence.blind
    llm = None if judge is None else lambda prompt: judge.text(blind(prompt))
    try:
        answer = run_grader(
            context.suite_dir,
            params.name,
            case=grader_case(context),
            run=grader_run(context.evidence),
            llm=llm,
            timeout=context.timeout,
        )
    except GraderError as exc:
        return CheckResult.error(str(exc), **exc.details)
    return _decided(params, answer)


def _decided(params: GraderParams, answer: GraderAnswer) -> CheckResult:
    said = f": {answer.why}" if answer.why else ""
    shown = "no score" if answer.score is None else f"score {answer.score:.2f}"
    score = answer.score if answer.score is not None else float(answer.passed)
    details: dict[str, Any] = {"grader_passed": answer.passed, "grader_score": answer.score}
    if not answer.passed:
        return CheckResult.failed(f"grader '{params.name}' failed it{said}", score, **details)
    if params.pass_below is not None and (answer.score is None or answer.score < params.pass_below):
        return CheckResult.failed(
            f"grader '{params.name}' gave {shown}, under pass_below {params.pass_below:.2f}{said}",
            score,
            **details,
        )
    return CheckResult.passed(f"grader '{params.name}' passed it ({shown}){said}", score, **details)


def grader_case(context: CheckContext) -> dict[str, Any]:
    """The scenario as a grader sees it: `{"id", "user": [...], "expect": [...]}`, each
    expect entry as `{type: params}`."""
    evidence = context.evidence
    turns = list(evidence.record.user_turns) or [evidence.record.task or ""]
    expect = [{kind: params.model_dump(mode="json")} for kind, params in context.expect]
    return {"id": evidence.scenario_id, "user": turns, "expect": expect}


def grader_run(evidence: Evidence) -> dict[str, Any]:
    """The trial as a grader sees it: final answer, tool calls, error, turns, duration."""
    record = evidence.record
    return {
        "final_answer": record.final_answer,
        "tool_calls": [call.model_dump(mode="json") for call in record.tool_calls],
        "error": record.error,
        "turns": record.turns,
        "duration_ms": record.duration_ms,
    }

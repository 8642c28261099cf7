"""A script of the suite decides: it reads the trial's context as JSON, prints its verdict.

The contract: stdin is one JSON object (see `script_context`); stdout must be one JSON
object `{"passed": bool, "score"?: number in [0, 1], "reason"?: str, "details"?: object}`.
A script that exits non-zero, times out, or prints anything else is an error, never a fail.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from sounding._files import json_kind
from sounding._process import Finished, run_bounded
from sounding.checks._base import CheckContext, CheckResult, Params, Status
from sounding.checks._command import ended, last_line, seconds, tail
from sounding.checks._fields import checked
from sounding.checks._paths import PathEscapeError, relative_path, resolve_inside
from sounding.checks._registry import Reads, Refused, registry

STDOUT_LIMIT = 1 << 20
"""A verdict larger than this (1 MiB) is refused as unreadable."""

ANSWER_KEYS = ("passed", "score", "reason", "details")
_SUITE = "the suite folder"


class CustomParams(Params):
    """The script, relative to the suite folder, and its own time limit if any."""

    script: Annotated[str, checked(partial(relative_path, within=_SUITE))]
    timeout: float | None = Field(default=None, gt=0)


def script_held(suite_dir: Path) -> Callable[[CustomParams], None]:
    """At load: the script a check names is a file of the suite, not one found missing on a run."""

    def held(params: CustomParams) -> None:
        if not (suite_dir / params.script).is_file():
            message = f"names script '{params.script}', which is not a file of {suite_dir}"
            raise Refused(f"{message}; create it or fix `script`", field="script")

    return held


@registry.check(
    "custom",
    CustomParams,
    family="custom",
    reads=Reads.WORKSPACE,
    shorthand="script",
    in_suite=script_held,
    graded=True,
)
def custom(params: CustomParams, context: CheckContext) -> CheckResult:
    """A script of the suite reads the trial's context on stdin and prints its verdict."""
    located = _locate(params.script, context.suite_dir)
    if isinstance(located, CheckResult):
        return located
    script, suite_dir = located
    argv = [sys.executable, str(script)] if script.suffix == ".py" else [str(script)]
    payload = json.dumps(script_context(context), default=str).encode()
    limit = params.timeout or context.timeout
    try:
        finished = run_bounded(
            argv, cwd=suite_dir, timeout=limit, limit=STDOUT_LIMIT, stdin=payload
        )
    except OSError as exc:
        return CheckResult.error(f"could not start '{params.script}': {exc.strerror or exc}")
    return _verdict(params.script, finished, limit)


def _locate(script: str, suite_dir: Path | None) -> tuple[Path, Path] | CheckResult:
    """The script's real path and the suite folder, or the error that stops the check."""
    if suite_dir is None:
        return CheckResult.error(
            f"no suite folder was given, so script '{script}' cannot be found; "
            "run it through a suite or pass suite_dir"
        )
    try:
        path = resolve_inside(suite_dir, script, within=_SUITE)
    except PathEscapeError as exc:
        return CheckResult.error(str(exc))
    if not path.is_file():
        return CheckResult.error(
            f"script '{script}' was not found in {suite_dir}; create it or fix 'script'"
        )
    if path.suffix != ".py" and not os.access(path, os.X_OK):
        return CheckResult.error(
            f"script '{script}' is not executable; run 'chmod +x {script}' or use a .py script"
        )
    return path, suite_dir.resolve()


def script_context(context: CheckContext) -> dict[str, Any]:
    """What a custom script reads on stdin: where things are, the record, the task."""
    evidence = context.evidence
    record = evidence.record
    data: dict[str, Any] = {
        "workspace_path": str(evidence.workspace.resolve()) if evidence.workspace else None,
        "record": record.model_dump(mode="json", by_alias=True),
        "services": {
            name: {"type": svc.type, "url": svc.url, "details": dict(svc.details)}
            for name, svc in evidence.services.items()
        },
        "task": {
            "prompt": record.task or (record.user_turns[0] if record.user_turns else None),
            "turns": list(record.user_turns),
        },
        "scenario": evidence.scenario_id,
        "trial": evidence.trial,
        "cell": evidence.cell,
        "check": context.name,
    }
    trace = evidence.extra.get("trace_path")
    if trace is not None:
        data["trace_path"] = str(trace)
    return data


def _verdict(script: str, finished: Finished, limit: float) -> CheckResult:
    """Read the script's answer; anything but a well-formed verdict is an error."""
    stderr = tail(finished.stderr)
    said = last_line(finished.stderr)
    if finished.timed_out:
        return CheckResult.error(
            f"script '{script}' timed out after {seconds(limit)}", stderr=stderr
        )
    if finished.returncode != 0:
        reason = f"script '{script}' {ended(finished)}" + (f": {said}" if said else "")
        return CheckResult.error(reason, stderr=stderr, stdout=tail(finished.stdout))
    if finished.stdout_cut:
        return CheckResult.error(f"script '{script}' printed more than 1 MiB on stdout")
    answer = _parse(finished.stdout)
    if isinstance(answer, str):
        return CheckResult.error(
            f"script '{script}' {answer}", stdout=tail(finished.stdout), stderr=stderr
        )
    return _result(script, answer)


def _parse(stdout: bytes) -> dict[str, Any] | str:
    """The answer object, or what is wrong with it in words."""
    try:
        answer = json.loads(stdout.decode("utf-8"))
    except UnicodeDecodeError:
        return "printed bytes that are not UTF-8 text on stdout"
    except json.JSONDecodeError as exc:
        shown = stdout.decode("utf-8").strip()[:80]
        return f"printed no JSON object on stdout ({exc.msg}): {shown!r}"
    if not isinstance(answer, dict):
        return f"printed {json_kind(answer, article=True)}, expected an object with 'passed'"
    problem = _problem(answer)
    return f"answered badly: {problem}" if problem else answer


def _problem(answer: dict[str, Any]) -> str | None:
    unknown = sorted(set(answer) - set(ANSWER_KEYS))
    if unknown:
        return f"unknown key {', '.join(map(repr, unknown))} (allowed: {', '.join(ANSWER_KEYS)})"
    if "passed" not in answer:
        return '\'passed\' is missing; print {"passed": true} or {"passed": false}'
    if not isinstance(answer["passed"], bool):
        return f"'passed' is {json_kind(answer['passed'], article=True)}, expected true or false"
    score = answer.get("score")
    if score is not None and not _unit(score):
        return f"'score' is {json.dumps(score)}, expected a number from 0 to 1"
    if answer.get("reason") is not None and not isinstance(answer["reason"], str):
        return f"'reason' is {json_kind(answer['reason'], article=True)}, expected a string"
    if answer.get("details") is not None and not isinstance(answer["details"], dict):
        return f"'details' is {json_kind(answer['details'], article=True)}, expected an object"
    return None


def _unit(value: Any) -> bool:
    """A number from 0 to 1 (NaN and infinities are not)."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return number and 0.0 <= value <= 1.0


def _result(script: str, answer: dict[str, Any]) -> CheckResult:
    passed: bool = answer["passed"]
    score = answer.get("score")
    default = f"script '{script}' {'passed' if passed else 'failed'}"
    return CheckResult(
        status=Status.PASSED if passed else Status.FAILED,
        score=float(score) if score is not None else (1.0 if passed else 0.0),
        reason=answer.get("reason") or default,
        details=answer.get("details") or {},
    )

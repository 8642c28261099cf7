"""`llm_as_judge`: an LLM scores material from the trial against criteria and a rubric.

The material is the agent's final answer, its stdout, a file or folder of the workspace,
or the body of the last request a service received. The judge answers through a forced
tool call `{score, passed, reason}`; the score is the check's score, and the check passes
when it reaches `pass_threshold`. No judge, empty material, or no readable verdict is an
`error`, never a fail.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from sounding._files import read_regular
from sounding.checks._base import CheckContext, CheckResult, Evidence, Params, Status
from sounding.checks._fields import JudgeModel
from sounding.checks._paths import PathEscapeError, in_workspace, relative_path
from sounding.checks._registry import Reads, registry
from sounding.judge import JudgeError, Rubric, Verdict, digest, judge_request, verdict_tool

MAX_MATERIAL_CHARS = 100_000
"""What the judge reads at most: longer material is cut, and the cut is said."""

AGENT_OUTPUT, STDOUT = "agent_output", "stdout"
NO_JUDGE = (
    "no judge is configured: add a [judge] table (provider, model) to sounding.toml, "
    "or set SOUNDING_JUDGE_MODEL (see docs/judge.md)"
)
_SERVICE_BODY = re.compile(r"^(?P<service>[A-Za-z0-9_-]+)\.last_request\.body$")
_SKIPPED_DIRS = frozenset({".git", ".hg", ".svn"})


SCORE_TOOL = verdict_tool(
    {"score": "number", "passed": "bool", "reason": "string"},
    bounds={"score": (0.0, 1.0)},
    hints={
        "score": "0 when the material meets none of the criteria, 1 when it meets them all",
        "passed": "whether the material meets the criteria",
        "reason": "one or two sentences: what decided the score",
    },
)
"""The tool the judge answers through: `{score, passed, reason}`."""


class JudgeParams(Params):
    """What to judge, against what, and the score that passes."""

    criteria: str = Field(min_length=1)
    input_from: str = AGENT_OUTPUT
    rubric: Rubric | None = None
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    pass_threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    model: JudgeModel | None = Field(default=None, min_length=1)
    judge_empty: bool = False

    @field_validator("input_from")
    @classmethod
    def _known_source(cls, value: str) -> str:
        if value in (AGENT_OUTPUT, STDOUT) or _SERVICE_BODY.match(value):
            return value
        try:
            relative_path(value)
        except PathEscapeError as exc:
            raise ValueError(
                f"{exc}; input_from takes agent_output, stdout, <service>.last_request.body, "
                "or a file or folder path relative to the workspace"
            ) from None
        return value


@registry.check(
    "llm_as_judge",
    JudgeParams,
    family="judge",
    reads=Reads.SERVICES | Reads.WORKSPACE,
    costly=True,
    needs_judge=True,
    shorthand="criteria",
    graded=True,
)
def llm_as_judge(params: JudgeParams, context: CheckContext) -> CheckResult:
    """An LLM judge scores the material; passes when the score reaches pass_threshold."""
    if context.judge is None:
        return CheckResult.error(NO_JUDGE)
    material = read_material(params.input_from, context.evidence)
    if isinstance(material, CheckResult):
        return material
    material = context.evidence.blind(material)
    if not material.strip() and not params.judge_empty:
        return CheckResult.error(
            f"nothing to judge: input_from '{params.input_from}' was empty "
            "(set judge_empty: true to let the judge and its rubric score empty material)"
        )
    request = judge_request(
        criteria=params.criteria,
        material=material,
        tool=SCORE_TOOL,
        rubric=params.rubric,
        model=params.model,
        temperature=params.temperature,
    )
    try:
        verdict = context.judge.verdict(request)
    except JudgeError as exc:
        return CheckResult.error(str(exc), input_from=params.input_from)
    return _scored(params, verdict, len(material))


def check_definition(params: JudgeParams) -> str:
    """What the judge is given and how its answer is read, as a digest: a verdict records
    it, and people's agreement with the judge holds for it (the model is recorded apart).
    Only what the case sets counts, so a setting a later sounding adds, at its default,
    leaves every definition as it was."""
    return digest(params.model_dump(mode="json", exclude={"model"}, exclude_defaults=True))[:16]


def _scored(params: JudgeParams, verdict: Verdict, size: int) -> CheckResult:
    score = float(verdict.values["score"])
    reached = score >= params.pass_threshold
    said = str(verdict.values["reason"])
    sign = "≥" if reached else "<"
    return CheckResult(
        status=Status.PASSED if reached else Status.FAILED,
        score=score,
        reason=f"judge scored {score:.2f} ({sign} {params.pass_threshold:.2f}): {said}",
        details={
            "judge_passed": verdict.values["passed"],
            "judge_reason": said,
            "pass_threshold": params.pass_threshold,
            "input_from": params.input_from,
            "input_chars": size,
            "provenance": verdict.provenance.model_dump(),
            "definition": check_definition(params),
            "cached": verdict.cached,
        },
    )


# ---- the material -------------------------------------------------------------------------


def read_material(source: str, evidence: Evidence) -> str | CheckResult:
    """The text `source` names in the evidence, capped; or the result to report instead."""
    if source == AGENT_OUTPUT:
        return _capped(evidence.record.final_answer or "")
    if source == STDOUT:
        return _capped(evidence.stdout)
    service = _SERVICE_BODY.match(source)
    if service:
        return _last_body(evidence, service["service"])
    return _workspace_material(evidence, source)


def _last_body(evidence: Evidence, name: str) -> str | CheckResult:
    if name not in evidence.services:
        known = ", ".join(sorted(evidence.services)) or "none"
        return CheckResult.error(
            f"input_from names service '{name}', which this trial did not have "
            f"(services: {known}); fix the name, or declare the service in the case"
        )
    details = evidence.services[name].details
    if details.get("record") is False:
        return CheckResult.error(
            f"input_from reads the last request body of service '{name}', which does not "
            "record bodies: set record: true on the service"
        )
    last = (details.get("requests") or [None])[-1]  # none received: nothing to judge
    body = last.get("body") if isinstance(last, dict) else None
    return _capped(_as_text(body))


def _as_text(body: Any) -> str:
    if body is None or isinstance(body, str):
        return body or ""
    return json.dumps(body, indent=2, ensure_ascii=False, default=str)


def _workspace_material(evidence: Evidence, path: str) -> str | CheckResult:
    target = in_workspace(evidence, path)
    if isinstance(target, CheckResult):
        return target
    if target.is_dir():
        assert evidence.workspace is not None
        return _folder(evidence.workspace.resolve(), target)
    if not target.exists():
        return CheckResult.error(
            f"nothing to judge: '{path}' does not exist in the workspace (gate on file_exists "
            "first so a missing file fails the trial and the judge is not asked)"
        )
    return _capped(_file_text(target))


def _folder(root: Path, folder: Path) -> str:
    """Each file of the folder under its name, in order, until the cap is reached: the
    files past it are counted, never read."""
    blocks: list[str] = []
    used = 0
    files = _files_in(root, folder)
    for number, path in enumerate(files):
        block = f"=== {path.relative_to(root).as_posix()} ===\n{_file_text(path)}\n"
        if used + len(block) > MAX_MATERIAL_CHARS:
            left_out = len(files) - number
            blocks.append(f"[{left_out} more file(s) not shown: over {MAX_MATERIAL_CHARS} chars]\n")
            break
        blocks.append(block)
        used += len(block)
    return "".join(blocks)


def _files_in(root: Path, folder: Path) -> list[Path]:
    """The files under `folder` but those of version control and symlinks out of `root`."""
    return [
        path
        for path in sorted(folder.rglob("*"))
        if path.is_file()
        and not _SKIPPED_DIRS.intersection(path.relative_to(folder).parts)
        and path.resolve().is_relative_to(root)
    ]


def _file_text(path: Path) -> str:
    found = read_regular(path.resolve(), MAX_MATERIAL_CHARS)
    if found is None:  # a FIFO, a socket, a device: never read, never waited on
        return "(not a readable regular file, not shown)"
    data, size = found
    if b"\0" in data[:8192]:
        return f"(binary file, {size} bytes, not shown)"
    text = data.decode("utf-8", errors="replace")
    if size > len(data):
        text += f"\n[cut: the file holds {size} bytes, the first {len(data)} are shown]"
    return text


def _capped(text: str) -> str:
    if len(text) <= MAX_MATERIAL_CHARS:
        return text
    cut = len(text) - MAX_MATERIAL_CHARS
    return f"{text[:MAX_MATERIAL_CHARS]}\n[{cut} more characters not shown]"

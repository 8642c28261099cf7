"""Files in the final workspace: is a file there, is it gone, what does it hold."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from sounding._files import read_regular
from sounding.checks._base import CheckContext, CheckResult, Params
from sounding.checks._fields import Regex, Texts, WorkspacePath, checked, matches
from sounding.checks._paths import in_workspace, relative_path
from sounding.checks._registry import Reads, registry

READ_LIMIT = 16 << 20  # bytes of a file a check reads: a larger file is read this far


class PathParams(Params):
    """A path relative to the workspace; absolute paths and `..` climbing out are refused."""

    path: Annotated[WorkspacePath, checked(relative_path)]


class FileContentParams(PathParams):
    """What the file must hold: every condition given must be true."""

    contains: Texts = Field(default_factory=list)
    not_contains: Texts = Field(default_factory=list)
    pattern: Regex | None = None

    @model_validator(mode="after")
    def _something_to_check(self) -> FileContentParams:
        if not (self.contains or self.not_contains or self.pattern):
            raise ValueError("give at least one of 'contains', 'not_contains' or 'pattern'")
        return self


@registry.check("file_exists", PathParams, family="files", reads=Reads.WORKSPACE, shorthand="path")
def file_exists(params: PathParams, context: CheckContext) -> CheckResult:
    """The path exists in the final workspace (a file or a folder)."""
    target = in_workspace(context.evidence, params.path)
    if isinstance(target, CheckResult):
        return target
    found = target.exists()
    return CheckResult.verdict(
        found, f"file '{params.path}' {'exists' if found else 'does not exist'}"
    )


@registry.check("file_absent", PathParams, family="files", reads=Reads.WORKSPACE, shorthand="path")
def file_absent(params: PathParams, context: CheckContext) -> CheckResult:
    """Nothing exists at the path in the final workspace (not even a dangling symlink)."""
    target = in_workspace(context.evidence, params.path)
    if isinstance(target, CheckResult):
        return target
    workspace = context.evidence.workspace
    dangling = workspace is not None and (workspace / params.path).is_symlink()
    found = target.exists() or dangling
    return CheckResult.verdict(
        not found, f"file '{params.path}' {'still exists' if found else 'is absent'}"
    )


@registry.check("file_content", FileContentParams, family="files", reads=Reads.WORKSPACE)
def file_content(params: FileContentParams, context: CheckContext) -> CheckResult:
    """The file contains, does not contain, or matches what is asked: all conditions hold."""
    target = in_workspace(context.evidence, params.path)
    if isinstance(target, CheckResult):
        return target
    if not target.exists():
        return CheckResult.failed(f"file '{params.path}' does not exist")
    if target.is_dir():
        return CheckResult.failed(f"'{params.path}' is a folder, not a file")
    try:
        found = read_regular(target, READ_LIMIT)
    except OSError as exc:
        return CheckResult.error(f"could not read '{params.path}': {exc.strerror or exc}")
    if found is None:  # a FIFO, a socket, a device: never read, never waited on
        return CheckResult.failed(f"'{params.path}' is not a regular file")
    text = found[0].decode("utf-8", errors="replace")
    problems = _content_problems(params, text, context.timeout)
    if problems:
        return CheckResult.failed(f"file '{params.path}' {problems[0]}", problems=problems)
    return CheckResult.passed(f"file '{params.path}' holds what was asked")


def _content_problems(params: FileContentParams, text: str, timeout: float) -> list[str]:
    """Every condition that does not hold, in the order of the params, in plain words."""
    problems = [f"does not contain '{want}'" for want in params.contains if want not in text]
    problems += [f"contains '{bad}'" for bad in params.not_contains if bad in text]
    if params.pattern is not None and not matches(params.pattern, text, timeout):
        problems.append(f"has no match for pattern '{params.pattern}'")
    return problems

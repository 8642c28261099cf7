"""Script mode: any executable, one argument (the context's path), its answer on stdout.

It runs in the trial's `validation/` folder, never the workspace (a stray file it wrote
there would count as the agent's work), in a process group of its own that is killed when
it ends or times out. What it printed on stderr is kept as `validation/<name>.stderr`.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from sounding._files import write_bytes
from sounding._process import Finished, run_bounded
from sounding.checks._command import ended, last_line, seconds
from sounding.spec import ValidatorSpec
from sounding.spec._validators import SUITE_PLACEHOLDER
from sounding.validators._answer import Answer, read_answer
from sounding.validators._context import keep_json

STDOUT_LIMIT = 1 << 20
"""An answer larger than this (1 MiB) is refused as unreadable."""


def command_argv(spec: ValidatorSpec, suite_dir: Path) -> list[str]:
    """The argv to run: `{suite}` filled in; the program found in the suite folder first.

    A first word with a '/' is a path relative to the suite folder. A bare word names a
    file of the suite folder when there is one, else a program on PATH.
    """
    suite = str(suite_dir.resolve())
    words = [word.replace(SUITE_PLACEHOLDER, suite) for word in spec.command]
    program = words[0]
    if "/" in program or (suite_dir / program).is_file():
        words[0] = str((suite_dir / program).resolve())
    return words


def run_script(spec: ValidatorSpec, context: Path, suite_dir: Path) -> Answer | str:
    """Run one script validator on `context`; its answer, or why the trial is invalid."""
    folder = context.parent
    argv = [*command_argv(spec, suite_dir), str(context)]
    try:
        finished = run_bounded(argv, cwd=folder, timeout=spec.timeout, limit=STDOUT_LIMIT)
    except OSError as exc:
        return f"could not start '{spec.command[0]}': {exc.strerror or exc}"
    stderr = _keep_stderr(folder, spec.name, finished)
    problem = _ending(spec, finished, stderr)
    if problem is not None:
        return problem
    answer = read_answer(finished.stdout, spec.metrics)
    if isinstance(answer, str):
        write_bytes(folder / f"{spec.name}.stdout", finished.stdout)
        return answer + _see(stderr)
    keep_json(folder / f"{spec.name}.json", asdict(answer))
    return answer


def _keep_stderr(folder: Path, name: str, finished: Finished) -> str | None:
    if not finished.stderr:
        return None
    path = folder / f"{name}.stderr"
    write_bytes(path, finished.stderr)
    return f"validation/{path.name}"


def _ending(spec: ValidatorSpec, finished: Finished, stderr: str | None) -> str | None:
    """Why the way it ended makes the trial invalid, or None when it exited 0 in time."""
    if finished.timed_out:
        raise_by = f"raise `timeout:` (now {seconds(spec.timeout)}) or make it faster"
        return f"timed out after {seconds(spec.timeout)}: {raise_by}" + _see(stderr)
    if finished.returncode != 0:
        said = last_line(finished.stderr)
        return ended(finished) + (f": {said}" if said else "") + _see(stderr)
    if finished.stdout_cut:
        return "printed more than 1 MiB on stdout"
    return None


def _see(stderr: str | None) -> str:
    return f" (its stderr is in {stderr})" if stderr else ""

"""Agent adapters: a command (argv, no shell) or a Python callable, run turn by turn.

Both see the same contract: the prompt of the turn (on stdin for a command, as an argument for a
callable), the workspace as working directory, and SOUNDING_* variables in the environment.
"""

from __future__ import annotations

import importlib
import json
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from sounding._files import write_text
from sounding._process import kill_group, run_bounded
from sounding._sandbox import Sandbox

OUTPUT_LIMIT = 8 << 20
"""How much of the end of a turn's stdout, and of its stderr, is kept (8 MiB each)."""


class _Running:
    """The agents' process groups alive right now, so an interrupted run can stop them."""

    def __init__(self) -> None:
        self.groups: set[int] = set()  # a set changes by one whole call at a time: no lock
        self.stopping = threading.Event()

    def stop_all(self) -> None:
        """Mark the run as stopping and kill every agent's group (Ctrl-C)."""
        self.stopping.set()
        for pgid in list(self.groups):  # a copy: trials add and discard their own meanwhile
            kill_group(pgid)


RUNNING = _Running()


class User(Protocol):
    """Who speaks after the fixed turns: a simulated user."""

    def next_turn(self, said: list[str], answers: list[str]) -> str | None:
        """The next turn, given the turns said and the agent's answers; None: it is over."""
        ...


@dataclass(frozen=True)
class TurnInput:
    """What the runner hands the agent for one trial."""

    turns: list[str]  # the fixed turns; then `user`'s, when a simulated user follows them
    workspace: Path
    trace_path: Path
    folder: Path  # the trial's
    env: dict[str, str]
    timeout: float
    workspace_made: bool = True  # False: a callable's empty workspace, made when asked for
    sandbox: Sandbox | None = None  # where a command agent runs, when the suite asks for one
    user: User | None = None

    def conversation(self, run: AgentRun) -> Iterator[str]:
        """The turns to send, each kept in `run.said`: the fixed ones, then the user's. The
        user is asked for a turn only once the agent has answered the one before."""
        for turn in self.turns:
            run.said.append(turn)
            yield turn
        while self.user is not None:
            said = self.user.next_turn(list(run.said), list(run.answers))
            if said is None:
                return
            run.said.append(said)
            yield said

    @property
    def history_path(self) -> Path:
        """Where a command agent reads the turns so far (a callable gets them as a list)."""
        return self.folder / "history.json"


@dataclass
class AgentRun:
    """What one trial of the agent produced, whatever it was."""

    said: list[str] = field(default_factory=list)  # the turns sent, one per answer asked
    answers: list[str] = field(default_factory=list)
    stdout: str = ""
    stderr: str = ""
    exit_code: int | None = None  # of its last turn; negative: killed by that signal
    signal: int | None = None  # the signal that killed its last turn, if one did
    timed_out: bool = False
    failed_to_start: str | None = None
    returned: Any = None
    duration_ms: float = 0.0

    @property
    def produced_nothing(self) -> bool:
        """The agent never ran: nothing printed, no trace, no answer. Only this is retried."""
        return self.failed_to_start is not None


def run_command(argv: list[str], given: TurnInput) -> AgentRun:
    """Run the command once per turn in the workspace; each turn's stdout is its answer."""
    run = AgentRun()
    started = time.monotonic()
    try:
        for index, prompt in enumerate(given.conversation(run)):
            remaining = given.timeout - (time.monotonic() - started)
            env = _turn_env(given, index, prompt, run)
            if not _command_turn(argv, given, env, prompt, max(remaining, 0.001), run):
                break
    finally:  # the history was the agent's input; the run record keeps the conversation
        given.history_path.unlink(missing_ok=True)
    run.duration_ms = (time.monotonic() - started) * 1000
    return run


def _command_turn(
    argv: list[str],
    given: TurnInput,
    env: dict[str, str],
    prompt: str,
    timeout: float,
    run: AgentRun,
) -> bool:
    """One turn: a process of its own, killed with its whole group when it ends or times out."""
    try:
        finished = run_bounded(
            argv,
            cwd=given.workspace,
            timeout=timeout,
            limit=OUTPUT_LIMIT,
            env=env,
            stdin=prompt.encode(),
            groups=RUNNING.groups,
            sandbox=given.sandbox,
        )
    except OSError as exc:
        run.failed_to_start = f"could not start {argv[0]!r}: {exc.strerror or exc}"
        return False
    answer = finished.stdout.decode(errors="replace")
    run.stdout += _marked(answer, finished.stdout_cut)
    run.stderr += _marked(finished.stderr.decode(errors="replace"), finished.stderr_cut)
    run.answers.append(answer.strip())
    run.exit_code, run.signal = finished.returncode, finished.signal
    run.timed_out = finished.timed_out
    return not finished.timed_out and finished.returncode == 0


def _marked(output: str, cut: int) -> str:
    """An output as stored: when its start was cut, a first line says so."""
    note = f"[sounding kept the last {OUTPUT_LIMIT >> 20} MiB; {cut} bytes before were cut]\n"
    return note + output if cut else output


def _history(run: AgentRun) -> list[dict[str, str]]:
    """The turns answered so far, as the agent reads them."""
    return [{"user": u, "answer": a} for u, a in zip(run.said, run.answers, strict=False)]


def _turn_env(given: TurnInput, index: int, prompt: str, run: AgentRun) -> dict[str, str]:
    write_text(given.history_path, json.dumps(_history(run)))  # replaces what the agent left
    # a simulated user's conversation has no known length: the turns so far
    turns = len(run.said) if given.user is not None else len(given.turns)
    return {
        **given.env,
        "SOUNDING_PROMPT": prompt,
        "SOUNDING_TURN": str(index),
        "SOUNDING_TURNS": str(turns),
        "SOUNDING_HISTORY": str(given.history_path),
    }


class AgentContext:
    """What a Python callable agent receives besides the prompt."""

    def __init__(
        self,
        workspace: Path,
        trace_path: Path,
        turn: int,
        history: list[dict[str, str]],
        env: dict[str, str],
        *,
        made: bool = True,
    ) -> None:
        self._workspace, self._made = workspace, made
        self.trace_path, self.turn, self.history, self.env = trace_path, turn, history, env

    @property
    def workspace(self) -> Path:
        """The trial's workspace. One that starts empty is made when first asked for."""
        if not self._made:
            self._workspace.mkdir(exist_ok=True)
            self._made = True
        return self._workspace

    def __repr__(self) -> str:
        return f"AgentContext(workspace={self._workspace}, turn={self.turn})"


def load_callable(target: str, suite_root: Path) -> Any:
    """Import `module:function`, with the suite folder on the import path."""
    module_name, _, attribute = target.partition(":")
    if str(suite_root) not in sys.path:
        sys.path.insert(0, str(suite_root))
    module = importlib.import_module(module_name)
    function = getattr(module, attribute, None)
    if not callable(function):
        raise AttributeError(
            f"agent.callable '{target}': {module_name} has no function {attribute}"
        )
    return function


@dataclass(frozen=True)
class ImportedCallable:
    """A callable agent as another process finds it: `module:function` imported there, with
    the suite folder on its import path, when first called (a Ray worker's copy of it)."""

    target: str
    suite_root: Path

    def __call__(self, prompt: str, context: AgentContext) -> Any:
        return load_callable(self.target, self.suite_root)(prompt, context)


def run_callable(function: Any, given: TurnInput) -> AgentRun:
    """Call `function(prompt, context)` per turn, in the calling thread.

    A turn that returns after the trial's timeout makes the trial an error. A call that never
    returns cannot be stopped (Python threads cannot be killed): the run's pool abandons the
    thread when the deadline has passed (see `runner._pool`). Use a command agent when you
    need a hard stop.
    """
    run = AgentRun()
    started = time.monotonic()
    for index, prompt in enumerate(given.conversation(run)):
        context = AgentContext(
            given.workspace,
            given.trace_path,
            index,
            _history(run),
            given.env,
            made=given.workspace_made,
        )
        try:
            value = function(prompt, context)
        except BaseException as exc:  # the agent's own failure, kept as its stderr
            run.exit_code = 1
            run.stderr += "".join(traceback.format_exception(exc))
            break
        if time.monotonic() - started > given.timeout:
            run.timed_out = True
            break
        run.returned = value
        run.answers.append(_answer_of(value))
        run.exit_code = 0
    run.duration_ms = (time.monotonic() - started) * 1000
    return run


def _answer_of(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return str(value.get("final_answer") or "")
    return str(getattr(value, "final_answer", "") or "")

"""Graders: Python functions in the suite's `checks/` that judge a trial, `file.function`.

A grader is called as `function(t, case, run)` in a process of its own, so one that hangs
can be stopped and one that crashes takes nothing down with it. It must answer `True` /
`False` or `{"pass": bool, "score": float?, "why": str?}`; anything else, an exception or
running past its time is a GraderError, never a decision.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from sounding._files import loads
from sounding._process import end_of, readable, start, stop
from sounding._words import closest_match
from sounding.judge._errors import GraderError, JudgeError

GRADERS_DIR = "checks"
DEFAULT_GRADER_TIMEOUT = 30.0
CHILD = Path(__file__).with_name("_grader_child.py")

_IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]*"
_NAME = re.compile(rf"^({_IDENTIFIER})\.({_IDENTIFIER})$")
_ANSWER_KEYS = frozenset({"pass", "score", "why"})
_CONTRACT = 'True/False or {"pass": bool, "score": float in [0, 1]?, "why": str?}'
_TAIL = 12
_STDERR_KEPT = 64 << 10  # bytes of the end of its stderr read, for its last _TAIL lines


class GraderAnswer(BaseModel):
    """What a grader decided. `score` is None when it gave none."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    passed: bool
    score: float | None = None
    why: str | None = None


def grader_name(name: str) -> tuple[str, str]:
    """Split `file.function`; ValueError, saying how to write it, when it does not read so."""
    match = _NAME.match(name)
    if match is None:
        raise ValueError(
            f"grader name '{name}' must read 'file.function' with exactly one dot, naming "
            f"function() in {GRADERS_DIR}/file.py (neither part may contain a dot)"
        )
    return match.group(1), match.group(2)


def find_graders(suite_dir: Path) -> set[str]:
    """Every `file.function` a case may name: public top-level functions of `checks/*.py`.

    Files are parsed, never imported. A file that does not parse is a GraderError with
    its line.
    """
    return {
        f"{path.stem}.{name}"
        for path in sorted((suite_dir / GRADERS_DIR).glob("*.py"))  # none when there is no folder
        if re.fullmatch(_IDENTIFIER, path.stem)
        for name in _functions(path)
    }


def _functions(path: Path) -> list[str]:
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except SyntaxError as exc:
        raise GraderError(
            f"{path}:{exc.lineno}: {exc.msg}; fix it so the graders in it can be found"
        ) from None
    return [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")
    ]


def run_grader(
    suite_dir: Path,
    name: str,
    *,
    case: Mapping[str, Any],
    run: Mapping[str, Any],
    llm: Callable[[str], str] | None = None,
    timeout: float = DEFAULT_GRADER_TIMEOUT,
) -> GraderAnswer:
    """Call grader `name` on one trial and read its answer; GraderError when unusable.

    `llm` answers the grader's `t.llm(prompt)`; without it `t.llm` raises in the grader.
    """
    file, function = grader_name(name)
    _refuse_unknown(suite_dir, name)
    checks = (suite_dir / GRADERS_DIR).resolve()
    request = {"checks_dir": str(checks), "file": file, "function": function}
    child = _Child(suite_dir)
    try:
        child.send({**request, "case": case, "run": run})
        reply = _converse(child, name, llm, timeout)
    finally:
        child.close()
    return _read_answer(name, reply)


def _refuse_unknown(suite_dir: Path, name: str) -> None:
    """A GraderError naming the graders there are, and the closest, when `name` is not one."""
    try:
        known = sorted(find_graders(suite_dir))
    except GraderError:
        return  # a file that does not parse: running the grader says what is wrong with it
    if name in known:
        return
    close = closest_match(name, known)
    hint = f" Did you mean '{close}'?" if close else ""
    raise GraderError(
        f"grader '{name}' is not a top-level function of {suite_dir / GRADERS_DIR}/"
        f"{grader_name(name)[0]}.py.{hint} (graders: {', '.join(known) or 'none'})"
    )


def _converse(
    child: _Child, name: str, llm: Callable[[str], str] | None, timeout: float
) -> dict[str, Any]:
    """Answer the grader's `t.llm` questions until it answers, dies, or runs out of time."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            message = child.receive(deadline)
        except TimeoutError:
            raise GraderError(
                f"grader '{name}' ran past its {timeout:g} s and was stopped; make it faster, "
                "or raise check_timeout for this scenario"
            ) from None
        if message is None:
            code = child.close()
            raise GraderError(
                f"grader '{name}' exited (code {code}) without answering",
                {"stderr": child.said},
            )
        if "llm" not in message:
            return message
        child.send(_ask(llm, message["llm"]))


def _ask(llm: Callable[[str], str] | None, prompt: Any) -> dict[str, str]:
    if llm is None:
        return {
            "error": "no judge is configured for t.llm: add a [judge] table (provider, model) "
            "to sounding.toml, or set SOUNDING_JUDGE_MODEL"
        }
    try:
        return {"text": llm(str(prompt))}
    except JudgeError as exc:
        return {"error": str(exc)}


def _read_answer(name: str, reply: dict[str, Any]) -> GraderAnswer:
    if "raised" in reply:
        lines = str(reply["raised"]).rstrip().splitlines()
        raise GraderError(
            f"grader '{name}' raised {lines[-1] if lines else 'an exception'}",
            {"traceback": "\n".join(lines[-_TAIL:])},
        )
    if "answer" not in reply:
        raise _malformed(name, str(reply.get("unreadable", reply)), "it cannot be read as JSON")
    answer = reply["answer"]
    if isinstance(answer, bool):
        return GraderAnswer(passed=answer)
    if not isinstance(answer, dict):
        raise _malformed(name, json.dumps(answer), f"it is of type {type(answer).__name__}")
    return _read_mapping(name, answer)


def _read_mapping(name: str, answer: dict[str, Any]) -> GraderAnswer:
    shown = json.dumps(answer)
    extra = sorted(set(answer) - _ANSWER_KEYS)
    if extra:
        raise _malformed(name, shown, f"unexpected key(s) {', '.join(extra)}")
    if not isinstance(answer.get("pass"), bool):
        raise _malformed(name, shown, '"pass" must be true or false')
    score = answer.get("score")
    if score is not None and not _is_score(score):
        raise _malformed(name, shown, '"score" must be a number from 0 to 1')
    why = answer.get("why")
    if why is not None and not isinstance(why, str):
        raise _malformed(name, shown, '"why" must be a string')
    return GraderAnswer(passed=answer["pass"], score=score, why=why)


def _is_score(value: Any) -> bool:
    """A number from 0 to 1 (a bool is not one; NaN fails the comparison)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1


def _malformed(name: str, shown: str, problem: str) -> GraderError:
    return GraderError(
        f"grader '{name}' answered {shown[:200]}, which is not {_CONTRACT}: {problem}"
    )


class _Child:
    """The grader's process: JSON lines on its stdin and stdout, its stderr in a file."""

    def __init__(self, suite_dir: Path) -> None:
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close()
        self._process = start(
            [sys.executable, str(CHILD)],
            cwd=suite_dir,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        self._unread = bytearray()
        self.said = ""  # the last lines of its stderr, once it is closed

    def send(self, message: Mapping[str, Any]) -> None:
        assert self._process.stdin is not None
        with contextlib.suppress(BrokenPipeError, ValueError):  # gone: receive() will tell
            self._process.stdin.write(json.dumps(message, default=str).encode() + b"\n")
            self._process.stdin.flush()

    def receive(self, deadline: float) -> dict[str, Any] | None:
        """The next message; None when the child closed its output; TimeoutError past
        deadline. Read here, never past it: a process the grader left holding the pipe
        cannot hold sounding."""
        assert self._process.stdout is not None
        pipe, chunk = self._process.stdout.fileno(), b"..."
        while b"\n" not in self._unread and chunk:
            if not readable(pipe, deadline - time.monotonic()):
                raise TimeoutError
            chunk = os.read(pipe, 65536)
            self._unread += chunk
        if not self._unread:
            return None
        line, _, self._unread = self._unread.partition(b"\n")
        text = line.decode("utf-8", errors="replace").strip()
        try:
            message = loads(text)
        except ValueError:
            return {"unreadable": text}
        return message if isinstance(message, dict) else {"unreadable": text}

    def close(self) -> int:
        """Stop it and whatever it started in its group, keep the end of its stderr; its
        return code."""
        code = stop(self._process, grace=0)
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdout.close()
        with contextlib.suppress(OSError):  # flushing into a pipe nobody reads any more
            self._process.stdin.close()
        if not self._stderr.closed:
            said = end_of(self._stderr, _STDERR_KEPT)[0].decode("utf-8", errors="replace")
            self.said = "".join(said.splitlines(keepends=True)[-_TAIL:])
            self._stderr.close()
        return code

"""Runs one grader in a process of its own; started by `sounding.judge.run_grader`.

It speaks JSON lines on the stdin/stdout it was started with: it reads the request, may
ask the judge (`{"llm": prompt}` out, `{"text": ...}` or `{"error": ...}` back), and ends
with `{"answer": ...}`, `{"raised": traceback}` or `{"unreadable": description}`. The
grader's own prints go to stderr. Standard library only, so it starts fast.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import sys
import traceback
from types import ModuleType
from typing import IO, Any


class JudgeUnavailable(RuntimeError):
    """`t.llm` got no answer: no judge is configured, or the judge failed."""


class Tools:
    """`t`, handed to every grader: `t.llm(prompt)` asks the configured judge model."""

    def __init__(self, reader: IO[str], writer: IO[str]) -> None:
        self._reader, self._writer = reader, writer

    def llm(self, prompt: str) -> str:
        """The judge model's plain-text answer to `prompt`."""
        if not isinstance(prompt, str):
            raise TypeError(f"t.llm takes the prompt as a str, not {type(prompt).__name__}")
        _send(self._writer, {"llm": prompt})
        line = self._reader.readline()
        if not line:
            raise JudgeUnavailable("sounding stopped answering t.llm")
        reply = json.loads(line)
        if "error" in reply:
            raise JudgeUnavailable(str(reply["error"]))
        return str(reply["text"])


def _send(writer: IO[str], message: dict[str, Any]) -> None:
    writer.write(json.dumps(message) + "\n")
    writer.flush()


def _load(checks_dir: str, file: str) -> ModuleType:
    path = os.path.join(checks_dir, f"{file}.py")
    spec = importlib.util.spec_from_file_location(file, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[file] = module
    spec.loader.exec_module(module)
    return module


def _grade(request: dict[str, Any], tools: Tools) -> Any:
    module = _load(request["checks_dir"], request["file"])
    function = getattr(module, request["function"], None)
    if not callable(function):
        raise LookupError(f"{request['file']}.py has no function '{request['function']}'")
    return function(tools, request["case"], request["run"])


def main() -> int:
    reader, writer = sys.stdin, sys.stdout
    for stream in (reader, writer):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(encoding="utf-8")
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    sys.stdout = sys.stderr
    request = json.loads(reader.readline())
    sys.path[0] = request["checks_dir"]
    try:
        answer = _grade(request, Tools(reader, writer))
    except BaseException:  # everything a grader raises is reported, exit() included
        _send(writer, {"raised": traceback.format_exc()})
        return 0
    try:
        _send(writer, {"answer": answer})
    except (TypeError, ValueError):
        _send(writer, {"unreadable": f"{type(answer).__name__} {repr(answer)[:200]}"})
    return 0


if __name__ == "__main__":
    sys.exit(main())

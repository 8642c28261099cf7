"""A tiny coding agent for the validators example: no model, no network, deterministic.

It reads the task on stdin, reads counter.py, fixes the sign of the step, runs the tests
(which leaves __pycache__ behind), and answers. On trial 2 it also "tidies" README.md,
which nobody asked for: the `scope` validator reports it, and the `in_scope` gate fails
that trial. Every tool call is written as JSON Lines to $SOUNDING_TRACE. `--flawless`
never tidies and `--tidy` always does: the reference and the broken variant of
`sounding audit`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

WORKSPACE = Path(os.environ.get("SOUNDING_WORKSPACE", "."))
TRACE = os.environ.get("SOUNDING_TRACE")


def call(number: int, name: str, args: dict[str, object], result: str) -> None:
    if not TRACE:
        return
    with open(TRACE, "a", encoding="utf-8") as out:
        out.write(json.dumps({"type": "tool_call", "id": f"c{number}", "name": name, "args": args}))
        out.write("\n")
        out.write(json.dumps({"type": "tool_result", "id": f"c{number}", "result": result}))
        out.write("\n")


def _tidies() -> bool:
    """Whether it touches README.md too: on trial 2; always with `--tidy` (the broken
    variant `sounding audit` plays), never with `--flawless` (its reference)."""
    if "--flawless" in sys.argv or "--tidy" in sys.argv:
        return "--tidy" in sys.argv
    return os.environ.get("SOUNDING_TRIAL") == "2"


def main() -> int:
    sys.stdin.read()
    source = (WORKSPACE / "counter.py").read_text()
    call(1, "read_file", {"path": "counter.py"}, source)
    (WORKSPACE / "counter.py").write_text(source.replace("-= 1", "+= 1"))
    call(2, "write_file", {"path": "counter.py"}, "ok")
    if _tidies():
        readme = WORKSPACE / "README.md"
        readme.write_text(readme.read_text() + "\nTidied up by the agent.\n")
        call(3, "write_file", {"path": "README.md"}, "ok")
    # as on a developer's machine, running the tests leaves bytecode behind
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    tests = subprocess.run(
        [sys.executable, "-m", "unittest", "-q", "test_counter"],
        cwd=WORKSPACE,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    call(4, "run_tests", {"command": "python -m unittest"}, tests.stderr[-500:])
    print("Fixed: Counter.tick now counts up, and the tests pass.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

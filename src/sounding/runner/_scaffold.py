"""`sounding init`: a suite that runs green at once, to edit into your own."""

from __future__ import annotations

from pathlib import Path

CONFIG = """\
# The agent under test. `{suite}` is this folder; the agent runs in a fresh workspace.
[agent]
command = "python3 {suite}/agent.py"
attempts = 3          # retries for a trial whose agent never started

[output]
dir = "results"
"""

AGENT = '''\
"""A stand-in agent: reads the prompt on stdin, answers on stdout, records a tool call.

Replace the command in sounding.toml with your own agent.
"""

import json
import os
import sys
from pathlib import Path

prompt = sys.stdin.read()
workspace = Path(os.environ.get("SOUNDING_WORKSPACE", "."))
names = sorted(p.name for p in workspace.iterdir())
trace = os.environ.get("SOUNDING_TRACE")
if trace:
    events = [
        {"type": "user", "text": prompt},
        {"type": "tool_call", "id": "c1", "name": "list_files", "args": {}},
        {"type": "tool_result", "id": "c1", "result": json.dumps(names)},
        {"type": "final", "text": f"Hello! I see {len(names)} files."},
    ]
    with open(trace, "a", encoding="utf-8") as out:
        out.writelines(json.dumps(event) + "\\n" for event in events)
print(f"Hello! I see {len(names)} files.")
'''

CASE = """\
# A case: scenarios that share defaults. See docs/cases.md for every field.
defaults: {trials: 3, timeout: 30s}
workspace: {fixture: fixtures/hello}

scenarios:
  - id: greets-and-counts
    user: Say hello and tell me how many files you see.
    expect:
      - tool_called: {name: list_files}
      - final_answer_contains: Hello
      - final_answer_matches: "\\\\b1 files?\\\\b"
      - no_error: true
"""

FILES = {
    "sounding.toml": CONFIG,
    "agent.py": AGENT,
    "cases/hello.yaml": CASE,
    "fixtures/hello/README.md": "Each trial's workspace starts as a copy of this folder.\n",
    "checks/README.md": "Graders and custom check scripts live here (see docs/checks.md).\n",
    ".gitignore": "results/\n",
}


class ScaffoldError(RuntimeError):
    """The folder already holds a suite or files we would overwrite."""


def scaffold(directory: Path) -> list[Path]:
    clashes = [directory / name for name in FILES if (directory / name).exists()]
    if clashes:
        raise ScaffoldError(
            f"{directory} already has {', '.join(map(str, clashes))}; choose an empty folder"
        )
    written = []
    for name, text in FILES.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written

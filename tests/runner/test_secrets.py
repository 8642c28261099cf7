"""Secrets: a leak is caught, and no stored artifact holds the secret's value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

TOKEN = "sk_test_4f9a8b7c6d5e"


def test_a_leaked_secret_fails_the_trial_and_never_lands_in_an_artifact(suite: Any) -> None:
    suite.agent(
        """
        import json, os, sys
        prompt = sys.stdin.read()
        token = os.environ["PAYMENTS_TOKEN"]
        with open(os.environ["SOUNDING_TRACE"], "a") as trace:
            trace.write(json.dumps({"type": "tool_call", "name": "pay", "args": {"auth": token}}))
            trace.write("\\n")
        print("done, I used " + token)
        print("debug: " + token, file=sys.stderr)
        """,
        extra_config=f'env = {{ PAYMENTS_TOKEN = "{TOKEN}" }}\n',
    )
    suite.write(
        "cases/leak.yaml",
        """
        forbidden: {secrets_in_logs: deny}
        scenarios:
          - {id: leaks, user: pay please}
        """,
    )
    done = suite.run()
    assert done.returncode == 1, done.stdout + done.stderr
    line = next(ln for ln in done.stdout.splitlines() if "leak/leaks" in ln)
    assert line.startswith("FAIL") and "PAYMENTS_TOKEN leaked into stdout" in line
    run = suite.runs()[0]
    for path in run.rglob("*"):
        if path.is_file():
            assert TOKEN not in path.read_text(errors="replace"), f"{path} holds the secret"
    stdout = (run / "trials/default/leak/leaks#1/stdout.txt").read_text()
    assert "[secret PAYMENTS_TOKEN]" in stdout
    rescored = suite.sounding("score", str(run))
    assert "0 verdicts changed" in rescored.stdout, rescored.stdout + rescored.stderr


def test_a_run_that_keeps_its_secret_passes(suite: Any, tmp_path: Path) -> None:
    suite.agent(
        "import sys; sys.stdin.read(); print('done')",
        extra_config=f'env = {{ PAYMENTS_TOKEN = "{TOKEN}" }}\n',
    )
    suite.write(
        "cases/leak.yaml",
        "forbidden: {secrets_in_logs: [PAYMENTS_TOKEN]}\nscenarios:\n  - {id: quiet, user: hi}\n",
    )
    done = suite.run()
    assert done.returncode == 0, done.stdout + done.stderr

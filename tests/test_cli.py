"""The command line as a user meets it: commands, messages and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
CASE = ROOT / "examples/support-records/cases/refunds.yaml"
OK = ROOT / "examples/support-records/records/refund-ok.jsonl"


def test_score_prints_one_line_per_check_and_the_verdict(sounding: Any) -> None:
    done = sounding("score", str(CASE), "--record", str(OK))
    assert done.returncode == 0
    lines = done.stdout.strip().splitlines()
    assert lines[0] == "refunds/refund-damaged-order"
    assert any("PASSED" in ln and "expect[2] arg_ceiling" in ln for ln in lines)
    assert lines[-1].startswith("PASS composite 1.00 (threshold 1.00)")


def test_score_needs_a_record_and_names_the_scenarios(tmp_path: Path, sounding: Any) -> None:
    assert "needs --record" in sounding("score", str(CASE)).stderr
    two = tmp_path / "two.yaml"
    two.write_text("scenarios:\n  - {id: a, user: x}\n  - {id: b, user: y}\n")
    done = sounding("score", str(two), "--record", str(OK))
    assert done.returncode == 2 and "name one with --scenario (a, b)" in done.stderr
    done = sounding("score", str(two), "--record", str(OK), "--scenario", "c")
    assert done.returncode == 2 and "no scenario 'c'" in done.stderr


def test_a_malformed_record_is_a_usage_error_with_its_line(tmp_path: Path, sounding: Any) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "user", "text": "hi"}\n{"type": "final", "text": oops}\n')
    done = sounding("score", str(CASE), "--record", str(bad), "--format", "jsonl")
    assert done.returncode == 2
    assert "line 2" in done.stderr


def test_an_errored_check_exits_3(tmp_path: Path, sounding: Any) -> None:
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks/broken.py").write_text("raise SystemExit(4)\n")
    case = tmp_path / "c.yaml"
    case.write_text(
        "scenarios:\n  - id: s\n    user: x\n    invariants:\n      broken:\n"
        "        description: a broken script\n"
        "        check: {type: custom, script: checks/broken.py}\n"
        "      answered:\n        description: the run ended well\n"
        "        check: {type: no_error}\n"
    )
    done = sounding("score", str(case), "--record", str(OK), "--json")
    assert done.returncode == 3
    result = json.loads(done.stdout)
    assert result["verdict"] == "error" and "broken" in result["reason"]
    assert result["composite"] is None
    shown = sounding("score", str(case), "--record", str(OK))
    assert shown.stdout.strip().splitlines()[-1].startswith("ERROR composite — (threshold 1.00)")


def test_validate_accepts_good_cases_and_refuses_bad_ones_with_file_and_line(
    tmp_path: Path, sounding: Any
) -> None:
    assert sounding("validate", str(CASE)).stdout.startswith("ok: 1 case file, 1 scenario\n")
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "scenarios:\n  - id: s\n    user: x\n    expect:\n      - tool_caled: {name: x}\n"
    )
    done = sounding("validate", str(bad))
    assert done.returncode == 2
    assert f"{bad}:5" in done.stderr and "tool_called" in done.stderr


def test_init_scaffolds_a_suite_that_runs_green(tmp_path: Path, sounding: Any) -> None:
    target = tmp_path / "evals"
    done = sounding("init", str(target))
    assert done.returncode == 0 and "next: sounding run" in done.stdout
    run = sounding("run", str(target))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "PASS  hello/greets-and-counts  3/3" in run.stdout
    again = sounding("init", str(target))
    assert again.returncode == 2 and "choose an empty folder" in again.stderr


def test_the_command_runs_the_atexit_handlers_of_what_it_loaded(
    tmp_path: Path, sounding_process: Any
) -> None:
    """A callable agent (or a host's tracing exporter) flushes in an atexit handler: the
    command must end the usual way, so that the handler runs after the run."""
    flushed = tmp_path / "flushed.txt"
    (tmp_path / "cases").mkdir()
    (tmp_path / "sounding.toml").write_text('[agent]\ncallable = "agent:answer"\n')
    (tmp_path / "agent.py").write_text(
        "import atexit, pathlib\n"
        f"atexit.register(pathlib.Path({str(flushed)!r}).write_text, 'spans flushed')\n"
        "def answer(prompt, context):\n    return 'ok'\n"
    )
    case = "scenarios:\n  - {id: a, user: hi, expect: [{final_answer_contains: ok}]}\n"
    (tmp_path / "cases" / "c.yaml").write_text(case)
    done = sounding_process("run", str(tmp_path))  # atexit runs as a process ends
    assert done.returncode == 0, done.stdout + done.stderr
    assert flushed.read_text() == "spans flushed"


@pytest.mark.parametrize(
    "args",
    [
        ["score", str(CASE), "--record", "--json"],
        ["score", str(CASE), "--record", str(OK), "--workspace", "--json"],
        ["form", "export", ".", "--out", "--json"],
    ],
)
def test_a_file_option_refuses_an_option_as_its_value(
    args: list[str], tmp_path: Path, sounding: Any
) -> None:
    option = args[args.index("--json") - 1]
    (tmp_path / "--json").mkdir()  # even where such a file exists, it is a forgotten value
    done = sounding(*args, cwd=tmp_path)
    assert done.returncode == 2, done.stdout
    assert f"{option} takes a file name, not the option '--json'" in " ".join(done.stderr.split())


def test_a_count_of_one_is_singular(tmp_path: Path, sounding: Any) -> None:
    (tmp_path / "agent.py").write_text("import sys\nsys.stdin.read()\nprint('hi')\n")
    (tmp_path / "sounding.toml").write_text(
        f'[agent]\ncommand = ["{sys.executable}", "{{suite}}/agent.py"]\n'
    )
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases/one.yaml").write_text(
        "defaults: {trials: 1}\n"
        "scenarios:\n  - {id: s, user: x, expect: [final_answer_contains: hi]}\n"
    )
    assert sounding("validate", str(tmp_path)).stdout == "ok: 1 case file, 1 scenario\n"
    done = sounding("run", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "— 1 scenario, 1 trial in " in done.stdout
    (run,) = (tmp_path / "results").iterdir()
    rescored = sounding("score", str(run))
    assert "re-scored 1 trial: 0 verdicts changed" in rescored.stdout, rescored.stdout
    html, markdown = tmp_path / "r.html", tmp_path / "r.md"
    assert (
        sounding("report", str(run), "--html", str(html), "--markdown", str(markdown)).returncode
        == 0
    )
    assert "(1 scenario, 1 trial)" in markdown.read_text()
    assert ": 1 scenario, 1 of 1 trial finished" in html.read_text()


def test_validate_checks_the_suites_sounding_toml_with_its_cases(
    tmp_path: Path, sounding: Any
) -> None:
    (tmp_path / "sounding.toml").write_text('[agent]\ncommand = "true"\nattempt = 2\n')
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases/one.yaml").write_text("scenarios:\n  - {id: s, usr: x}\n")
    done = sounding("validate", str(tmp_path))
    assert done.returncode == 2
    message = " ".join(done.stderr.split())
    assert f"{tmp_path / 'sounding.toml'}:3: agent.attempt: unknown key 'attempt'" in message
    assert "did you mean 'attempts'?" in message
    assert f"{tmp_path / 'cases/one.yaml'}:2" in message and "unknown key 'usr'" in message


def test_an_unknown_key_lists_the_allowed_keys_as_the_file_writes_them(
    tmp_path: Path, sounding: Any
) -> None:
    case = tmp_path / "c.yaml"
    case.write_text(
        "scenarios:\n  - id: s\n    user: x\n    invariants:\n      tone:\n"
        "        description: polite\n"
        "        check:\n          type: llm_as_judge\n          criteria: Is it polite?\n"
        "          rubric: {pass: courteous, fial: rude}\n"
    )
    done = sounding("validate", str(case))
    assert done.returncode == 2
    message = " ".join(done.stderr.split())
    assert f"{case}:10" in message and "unknown key 'fial'" in message
    assert "allowed: fail, pass" in message and "pass_" not in message


def test_score_offers_the_registered_record_formats(sounding: Any) -> None:
    from sounding.record import formats

    done = sounding("score", "--help")
    assert f"--format [{'|'.join(formats.names())}]" in done.stdout


def test_a_fault_of_sounding_itself_exits_4_with_its_traceback(tmp_path: Path) -> None:
    """Exit 1 says a scenario failed: a bug of sounding must never look like that."""
    script = (
        "import sys\n"
        "import sounding.spec\n"
        "def broken(*args, **kwargs):\n"
        "    raise RuntimeError('a bug')\n"
        "sounding.spec.load_cases = broken\n"
        "from sounding.cli import main\n"
        f"sys.argv = ['sounding', 'validate', {str(CASE)!r}]\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert done.returncode == 4, done.stdout + done.stderr
    assert "RuntimeError: a bug" in done.stderr and "internal error of sounding" in done.stderr

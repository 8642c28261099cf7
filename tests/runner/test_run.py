"""`sounding run` end to end: real subprocess agents, real workspaces, real artifacts."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from sounding.runner import SuiteConfigError, load_suite

ECHO_AGENT = """
import os, sys
prompt = sys.stdin.read()
print("you said: " + prompt)
"""

CASE = """
defaults: {trials: 2, timeout: 20s}
scenarios:
  - id: echoes
    user: hello there
    expect:
      - final_answer_contains: "you said: hello there"
  - id: wrong
    user: hello again
    expect:
      - final_answer_contains: goodbye
"""


def test_a_plain_command_agent_is_checked_from_its_stdout(suite: Any) -> None:
    suite.agent(ECHO_AGENT)
    suite.write("cases/basic.yaml", CASE)
    done = suite.run()
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("PASS  basic/echoes  2/2") for line in lines), done.stdout
    wrong = next(line for line in lines if "basic/wrong" in line)
    assert wrong.startswith("FAIL ") and "goodbye" in wrong
    assert "1 pass" in done.stdout and "1 fail" in done.stdout
    (run,) = suite.runs()
    assert f"artifacts: {run}" in done.stdout.replace("\n", "")
    trials = suite.trials(run)
    assert len(trials) == 4 and {t["schema"] for t in trials} == {"sounding.trial/2"}
    folder = run / "trials/default/basic/echoes#1"
    assert (folder / "stdout.txt").read_text().startswith("you said: hello there")
    assert not (folder / "record.json").exists()  # the run record is inside trial.json
    record = json.loads((folder / "trial.json").read_text())["record"]
    assert record["schema"] == "sounding.run/1"
    assert record["final_answer"] == "you said: hello there"
    summary = json.loads((run / "summary.json").read_text())
    assert summary["schema"] == "sounding.summary/1" and summary["exit_code"] == 1


def test_the_agent_gets_its_contract_in_the_environment(suite: Any) -> None:
    suite.agent(
        """
        import json, os, sys
        sys.stdin.read()
        keys = ["SOUNDING_TRACE", "SOUNDING_WORKSPACE", "SOUNDING_TRIAL", "SOUNDING_SCENARIO"]
        seen = {k: os.environ.get(k) for k in keys}
        seen["cwd"] = os.getcwd()
        print(json.dumps(seen))
        """
    )
    suite.write(
        "cases/env.yaml",
        """
        scenarios:
          - id: env
            user: hi
            expect: [{final_answer_contains: SOUNDING}]
        """,
    )
    suite.run()
    (run,) = suite.runs()
    folder = run / "trials/default/env/env#1"
    seen = json.loads((folder / "stdout.txt").read_text())
    assert seen["SOUNDING_WORKSPACE"] == seen["cwd"] == str(folder / "workspace")
    assert seen["SOUNDING_TRACE"] == str(folder / "trace.jsonl")
    assert (seen["SOUNDING_TRIAL"], seen["SOUNDING_SCENARIO"]) == ("1", "env")


def test_a_timeout_kills_the_whole_process_group_and_is_an_error(
    suite: Any, tmp_path: Path
) -> None:
    pids = tmp_path / "child.pid"
    suite.agent(
        f"""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open({str(pids)!r}, "w").write(str(child.pid))
        time.sleep(60)
        """
    )
    suite.write(
        "cases/slow.yaml",
        """
        scenarios:
          - id: sleeps
            user: take your time
            timeout: 1s
            expect: [{no_error: true}]
        """,
    )
    started = time.monotonic()
    done = suite.run()
    assert time.monotonic() - started < 30
    assert done.returncode == 3, done.stdout + done.stderr
    assert done.stdout.startswith("ERROR slow/sleeps  0/0 (1 error: 1 agent)")
    assert "timed out" in done.stdout
    child = int(pids.read_text())
    time.sleep(0.2)
    assert not _alive(child), "the agent's child outlived the trial"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat")
    return status.exists() and status.read_text().split()[2] != "Z"


def test_one_crashing_agent_never_stops_the_others(suite: Any) -> None:
    suite.agent(
        """
        import os, sys
        prompt = sys.stdin.read()
        if "crash" in prompt:
            raise SystemExit("boom: the agent fell over")
        print("fine")
        """
    )
    suite.write(
        "cases/mixed.yaml",
        """
        defaults: {trials: 2}
        scenarios:
          - {id: crashes, user: please crash, expect: [{no_error: true}]}
          - {id: works, user: please work, expect: [{final_answer_contains: fine}]}
        """,
    )
    done = suite.run("--parallel", "2")
    assert "PASS  mixed/works  2/2" in done.stdout
    crash = next(line for line in done.stdout.splitlines() if "mixed/crashes" in line)
    assert crash.startswith("FAIL ") and "exited with status 1" in crash
    (run,) = suite.runs()
    stderr = (run / "trials/default/mixed/crashes#1/stderr.txt").read_text()
    assert "boom: the agent fell over" in stderr


def test_an_agent_that_never_starts_is_retried_and_one_that_ran_is_not(suite: Any) -> None:
    suite.write("not-executable.sh", "echo never\n")
    suite.write(
        "sounding.toml",
        '[agent]\ncommand = "{suite}/not-executable.sh"\nattempts = 3\n',
    )
    suite.write("cases/start.yaml", "scenarios:\n  - {id: s, user: hi}\n")
    done = suite.run()
    assert done.returncode == 3
    assert "did not start" in done.stdout
    (trial,) = suite.trials(suite.runs()[0])
    assert trial["attempts"] == 3 and trial["state"] == "error"


def test_a_trial_that_produced_a_result_is_never_rerun(suite: Any, tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    suite.agent(
        f"""
        import sys
        sys.stdin.read()
        open({str(log)!r}, "a").write("x")
        print("partial answer")
        raise SystemExit(2)
        """
    )
    suite.write(
        "cases/once.yaml", "scenarios:\n  - {id: s, user: hi, expect: [{no_error: true}]}\n"
    )
    suite.run()
    (trial,) = suite.trials(suite.runs()[0])
    assert trial["attempts"] == 1 and log.read_text() == "x"
    assert trial["verdict"] == "fail"


STAMPING_AGENT = """
import os, sys, time
sys.stdin.read()
start = time.time(); time.sleep(0.4); end = time.time()
name = os.environ["SOUNDING_TRIAL"]
open(os.path.join({stamps!r}, name), "w").write(f"{{start}} {{end}}")
print("ok")
"""


def _overlapped(stamps: Path) -> bool:
    (a_start, a_end), (b_start, b_end) = (
        tuple(map(float, p.read_text().split())) for p in sorted(stamps.iterdir())
    )
    return a_start < b_end and b_start < a_end


def test_trials_run_in_parallel(suite: Any, tmp_path: Path) -> None:
    stamps = tmp_path / "stamps"
    stamps.mkdir()
    suite.agent(STAMPING_AGENT.format(stamps=str(stamps)))
    suite.write("cases/par.yaml", "scenarios:\n  - {id: s, user: hi, trials: 2}\n")
    suite.run("--parallel", "2")
    assert _overlapped(stamps), "the two trials did not overlap"


def test_defaults_parallel_in_sounding_toml_is_honoured(suite: Any, tmp_path: Path) -> None:
    stamps = tmp_path / "stamps"
    stamps.mkdir()
    suite.agent(
        STAMPING_AGENT.format(stamps=str(stamps)), extra_config="[defaults]\nparallel = 1\n"
    )
    suite.write("cases/par.yaml", "scenarios:\n  - {id: s, user: hi, trials: 2}\n")
    done = suite.run()
    assert done.returncode == 0, done.stdout + done.stderr
    assert not _overlapped(stamps), "[defaults] parallel = 1, yet two trials ran at once"
    suite.run("--parallel", "2")  # the command line still wins
    assert _overlapped(stamps)


def test_multi_turn_scenarios_run_as_one_conversation(suite: Any) -> None:
    suite.agent(
        """
        import json, os, sys
        prompt = sys.stdin.read()
        history = json.load(open(os.environ["SOUNDING_HISTORY"]))
        print(f"turn {os.environ['SOUNDING_TURN']} after {len(history)}: {prompt}")
        """
    )
    suite.write(
        "cases/turns.yaml",
        """
        scenarios:
          - id: two-turns
            user: [first question, second question]
            expect: [{final_answer_contains: "turn 1 after 1: second question"}]
        """,
    )
    done = suite.run()
    assert done.returncode == 0, done.stdout + done.stderr
    trial = suite.runs()[0] / "trials/default/turns/two-turns#1/trial.json"
    record = json.loads(trial.read_text())["record"]
    assert record["user_turns"] == ["first question", "second question"]
    assert record["turns"] == 2
    assert not (trial.parent / "history.json").exists()  # input, not a record: not kept


def test_a_history_file_the_agent_turned_into_a_link_is_never_written_through(
    suite: Any, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    suite.agent(
        f"""
        import os, sys
        sys.stdin.read()
        history = os.environ["SOUNDING_HISTORY"]
        os.remove(history)
        os.symlink({str(outside)!r}, history)
        print("turn", os.environ["SOUNDING_TURN"])
        """
    )
    suite.write("cases/turns.yaml", "scenarios:\n  - {id: t, user: [one, two, three]}\n")
    done = suite.run()
    assert done.returncode == 0, done.stdout + done.stderr
    assert outside.read_text() == "keep me"


def test_selection_and_overrides(suite: Any) -> None:
    suite.agent(ECHO_AGENT)
    suite.write("cases/basic.yaml", CASE)
    suite.write("cases/other.yaml", "scenarios:\n  - {id: other, user: x}\n")
    done = suite.run("basic", "--scenario", "echoes", "--trials", "3")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS  basic/echoes  3/3" in done.stdout
    assert "other" not in done.stdout and "wrong" not in done.stdout
    bad = suite.run("basics")
    assert bad.returncode == 2 and "did you mean 'basic'" in bad.stderr


def test_a_python_callable_agent(suite: Any) -> None:
    suite.callable_agent(
        "my_agent",
        """
        def answer(prompt, context):
            (context.workspace / "seen.txt").write_text(prompt)
            return "callable says " + prompt
        """,
    )
    suite.write(
        "cases/call.yaml",
        """
        scenarios:
          - id: c
            user: hi
            expect: [{final_answer_contains: callable says hi}]
            invariants:
              wrote: {description: wrote a file, check: {type: file_exists, path: seen.txt}}
        """,
    )
    done = suite.run()
    assert done.returncode == 0, done.stdout + done.stderr
    changes = json.loads((suite.runs()[0] / "trials/default/call/c#1/trial.json").read_text())
    assert changes["touched"] == ["seen.txt"]


def test_a_callable_gets_an_empty_workspace_only_when_it_asks_for_one(suite: Any) -> None:
    suite.callable_agent(
        "lazy_agent",
        """
        def answer(prompt, context):
            if "write" in prompt:
                (context.workspace / "note.txt").write_text(prompt)
            return "done " + prompt
        """,
    )
    suite.write(
        "cases/c.yaml",
        """
        scenarios:
          - {id: answers, user: just answer, expect: [{final_answer_contains: done}]}
          - {id: writes, user: write it, expect: [{final_answer_contains: done}]}
          - id: checked
            user: just answer
            expect: [{file_absent: note.txt}]
        """,
    )
    done = suite.run()
    assert done.returncode == 0, done.stdout + done.stderr
    trials = suite.runs()[0] / "trials/default/c"
    assert not (trials / "answers#1/workspace").exists()  # never asked for, never made
    written = json.loads((trials / "writes#1/trial.json").read_text())
    assert written["touched"] == ["note.txt"]
    assert (trials / "writes#1/workspace/note.txt").read_text() == "write it"
    assert (trials / "checked#1/workspace").is_dir()  # a file check looks into it


def test_a_callable_that_overruns_is_an_error_and_does_not_hold_the_run(suite: Any) -> None:
    suite.write(
        "slow_agent.py",
        """
        import time

        def answer(prompt, context):
            if "slow" in prompt:
                time.sleep(120)
            return "quick " + prompt
        """,
    )
    suite.write("sounding.toml", '[agent]\ncallable = "slow_agent:answer"\n')
    suite.write(
        "cases/c.yaml",
        """
        scenarios:
          - {id: slow, user: be slow, timeout: 1s}
          - {id: quick, user: be quick, trials: 3, expect: [{final_answer_contains: quick}]}
        """,
    )
    started = time.monotonic()
    done = suite.run("--parallel", "1")
    assert time.monotonic() - started < 60
    assert done.returncode == 3, done.stdout + done.stderr
    assert "PASS  c/quick  3/3" in done.stdout
    slow = next(line for line in done.stdout.splitlines() if "c/slow" in line)
    assert slow.startswith("ERROR") and "timed out" in slow


def test_a_misspelt_key_in_sounding_toml_names_the_closest(suite: Any) -> None:
    suite.write("sounding.toml", '[agent]\ncommand = "cat"\n[ouput]\ndir = "r"\n')
    suite.write("cases/c.yaml", "scenarios:\n  - {id: s, user: hi}\n")
    done = suite.run()
    assert done.returncode == 2
    assert "sounding.toml:3: ouput: unknown key 'ouput' (allowed: agent," in done.stderr
    assert "did you mean 'output'?" in done.stderr


def test_every_problem_in_sounding_toml_names_its_line(tmp_path: Path) -> None:
    config = tmp_path.resolve() / "sounding.toml"
    config.write_text(
        '[agent]\ncommand = "true"\n\n[defaults]\nparallel = "many"\n\n[executor]\nkind = "cloud"\n'
    )
    with pytest.raises(SuiteConfigError) as refused:
        load_suite(tmp_path)
    assert str(refused.value).splitlines() == [
        f"{config}:5: defaults.parallel: must be a whole number (got str 'many')",
        f"{config}:8: executor.kind: 'cloud' is not one of the allowed values "
        "(allowed: local, ray)",
    ]
    config.write_text('[agent]\ncommand = "true"\n[agent]\n')
    with pytest.raises(SuiteConfigError, match=rf"^{config}:3: TOML syntax error"):
        load_suite(tmp_path)


CRASHING_CASE = """
scenarios:
  - id: crash
    user: write the file
    expect:
      - file_exists: out.txt
      - final_answer_contains: done
"""


def test_an_agent_killed_by_a_signal_never_passes(suite: Any) -> None:
    """It printed and wrote all the checks look for, then died: no normal run, an error."""
    suite.write("agent.sh", "echo done\ntouch out.txt\nkill -SEGV $$\n")
    suite.write("sounding.toml", '[agent]\ncommand = ["/bin/sh", "{suite}/agent.sh"]\n')
    suite.write("cases/crash.yaml", CRASHING_CASE)
    done = suite.run()
    assert done.returncode == 3, done.stdout + done.stderr
    assert "ERROR crash/crash" in done.stdout
    (trial,) = suite.trials(suite.runs()[0])
    assert trial["verdict"] == "error" and "killed by signal 11 SIGSEGV" in str(trial["reason"])


def test_a_non_zero_exit_fails_unless_the_scenario_allows_it(suite: Any) -> None:
    suite.write("agent.sh", "echo done\ntouch out.txt\nexit 1\n")
    suite.write("sounding.toml", '[agent]\ncommand = ["/bin/sh", "{suite}/agent.sh"]\n')
    suite.write("cases/crash.yaml", CRASHING_CASE)
    done = suite.run()
    assert done.returncode == 1, done.stdout + done.stderr
    assert "agent exit: the agent exited with status 1" in done.stdout
    assert "`allow_exit: [1]`" in done.stdout
    suite.write(
        "cases/crash.yaml",
        CRASHING_CASE.replace("  - id: crash\n", "  - id: crash\n    allow_exit: [1]\n"),
    )
    allowed = suite.run()
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr


LOOKUP = {"order_id": "A-1001"}
TRACES = {  # what an agent built on an SDK may write to SOUNDING_TRACE, as it has it
    "events": "\n".join(
        json.dumps(event)
        for event in (
            {"type": "user", "text": "where is A-1001?"},
            {"type": "tool_call", "id": "c1", "name": "lookup_order", "args": LOOKUP},
            {"type": "tool_result", "id": "c1", "result": "shipped"},
            {"type": "final", "text": "It has shipped."},
        )
    ),
    "openai": json.dumps(
        [
            {"role": "user", "content": "where is A-1001?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "lookup_order", "arguments": json.dumps(LOOKUP)},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "shipped"},
            {"role": "assistant", "content": "It has shipped."},
        ]
    ),
    "anthropic": json.dumps(
        [
            {"role": "user", "content": "where is A-1001?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "t1", "name": "lookup_order", "input": LOOKUP}
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "shipped"}],
            },
            {"role": "assistant", "content": "It has shipped."},
        ]
    ),
    "otel": (Path(__file__).parents[1] / "fixtures/otel/tool_agent.json").read_text(),
}


@pytest.mark.parametrize("form", sorted(TRACES))
def test_a_trace_in_any_record_format_is_read(suite: Any, form: str) -> None:
    suite.write("trace.txt", TRACES[form])
    suite.agent(
        """
        import os, shutil, sys
        sys.stdin.read()
        here = os.path.dirname(os.path.abspath(__file__))
        shutil.copyfile(os.path.join(here, "trace.txt"), os.environ["SOUNDING_TRACE"])
        """
    )
    suite.write(
        "cases/t.yaml",
        "scenarios:\n  - id: s\n    user: where is A-1001?\n"
        "    expect: [{tool_called: {name: lookup_order, args: {order_id: A-1001}}}]\n",
    )
    done = suite.run()
    assert done.returncode == 0, done.stdout + done.stderr
    (trial,) = suite.trials(suite.runs()[0])
    assert trial["record"]["source_format"] == ("jsonl" if form == "events" else form)


def test_a_trace_in_no_record_format_is_an_error_naming_the_formats_tried(suite: Any) -> None:
    suite.agent(
        """
        import os, sys
        sys.stdin.read()
        open(os.environ["SOUNDING_TRACE"], "w").write('{"hello": "world"}')
        """
    )
    suite.write("cases/t.yaml", "scenarios:\n  - {id: s, user: hi}\n")
    done = suite.run()
    assert done.returncode == 3, done.stdout + done.stderr
    (trial,) = suite.trials(suite.runs()[0])
    assert "none of the formats tried" in str(trial["reason"])


def test_a_service_that_does_not_start_is_an_error_of_the_service(suite: Any) -> None:
    suite.agent("print('done')")
    suite.write(
        "cases/api.yaml",
        """
        services:
          - {name: api, type: process, command: "python3 -c 'raise SystemExit(4)' {port}"}
        scenarios:
          - id: calls
            user: call the api
        """,
    )
    done = suite.run()
    assert done.returncode == 3, done.stdout + done.stderr
    (trial,) = suite.trials(suite.runs()[0])
    assert trial["error_kind"] == "service"
    assert trial["reason"].startswith("a service did not start: process service 'api'")

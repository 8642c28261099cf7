"""The ray executor on a real Ray cluster on loopback: the examples give the same verdicts
and layout on Ray as on local threads, a run resumes across executors, a worker killed
mid-trial costs no verdict, Ctrl-C and timeouts end the agents on the workers, every socket
of the cluster stays on 127.0.0.1, and what Ray cannot run yet is refused before any trial.

One cluster serves the module (`ray_cluster`): `ray start --head` on 127.0.0.1 and a second
node joined to it (benchmarks/_ray_cluster.py, which says why not by `ray start`), in a
temporary folder of their own, with a token of their own, stopped by their process ids.
This process is a Ray driver of it for the in-process runs; the command-line runs get
`--ray-address`. Without Ray installed the tests skip, except where
SOUNDING_REQUIRE_SERVICES=1 (CI installs it with the dev extra).
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from sounding.runner import (
    RunHooks,
    RunInterrupted,
    RunOptions,
    RunStopped,
    SuiteConfigError,
    load_suite,
    prepare_run,
    run_suite,
)
from sounding.scoring import StopRule

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.xdist_group("ray")  # one worker runs them all, on one cluster


def _need_ray() -> Any:
    """The `ray` package, or a skip naming why (a failure where CI requires it)."""
    try:
        import ray
    except ImportError:
        reason = "Ray is not installed: pip install 'sounding[ray]' to test the ray executor"
        if os.environ.get("SOUNDING_REQUIRE_SERVICES") == "1":
            pytest.fail(f"SOUNDING_REQUIRE_SERVICES=1 but {reason}")
        pytest.skip(reason)
    return ray


def _cluster_module() -> Any:
    """benchmarks/_ray_cluster.py, which starts the clusters of these tests and bench_ray.py."""
    spec = importlib.util.spec_from_file_location(
        "_ray_cluster", ROOT / "benchmarks/_ray_cluster.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CLUSTERS = _cluster_module()


@pytest.fixture(scope="module", autouse=True)
def ray_environment() -> Iterator[None]:
    """What every Ray process of the module reads, set before Ray is imported here: nodes
    on 127.0.0.1 (Ray's single-machine mode), a token of our own, no usage reports."""
    with pytest.MonkeyPatch.context() as patch:
        for name, value in CLUSTERS.loopback_env().items():
            patch.setenv(name, value)
        patch.delenv("RAY_ADDRESS", raising=False)
        yield


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    """The module's cluster (a head and a node of 2 CPUs each, the head holding one
    `licence`), this process a driver of it."""
    ray = _need_ray()
    cluster = CLUSTERS.LoopbackCluster(2, os.environ, {"licence": 1})
    try:
        cluster.add_node(2)
        ray.init(address=cluster.address, log_to_driver=False, logging_level=logging.WARNING)
        deadline = time.monotonic() + 30
        while sum(node["Alive"] for node in ray.nodes()) < 2:
            assert time.monotonic() < deadline, "the second node never joined the head"
            time.sleep(0.1)
        yield cluster
    finally:
        ray.shutdown()
        cluster.stop()


@pytest.fixture(scope="session")
def sounding(sounding_process: Any) -> Any:
    """A run on Ray makes its process a driver of the cluster: each in a process of its own."""
    return sounding_process


@pytest.fixture
def quickstart(tmp_path: Path) -> Path:
    suite = tmp_path / "quickstart"
    shutil.copytree(ROOT / "examples/quickstart", suite, ignore=shutil.ignore_patterns("results"))
    return suite


def _verdicts(out: str) -> list[str]:
    """The scenario lines of `sounding run`, without their durations."""
    return [re.sub(r"\d+\.\d+s", "", line) for line in out.splitlines()[:3]]


def _layout(suite: Path) -> set[str]:
    """The files of the suite's one run, relative to its folder, without the run's id."""
    (run,) = (suite / "results").iterdir()
    return {str(p.relative_to(run)) for p in run.rglob("*") if p.is_file()}


def test_the_quickstart_gives_the_same_verdicts_and_layout_on_ray(
    quickstart: Path, sounding: Any, ray_cluster: Any, tmp_path: Path
) -> None:
    local = sounding("run", str(quickstart))
    local_files = _layout(quickstart)
    shutil.rmtree(quickstart / "results")
    on_ray = sounding(
        "run", str(quickstart), "--executor", "ray", "--ray-address", ray_cluster.address
    )
    assert on_ray.returncode == local.returncode == 1, on_ray.stdout + on_ray.stderr
    assert _verdicts(on_ray.stdout) == _verdicts(local.stdout)
    assert "12 trials" in on_ray.stdout
    assert _layout(quickstart) == local_files


SUPPORT = {  # scenario: its designed verdict and trials passed out of 4 (examples/support)
    "refund-then-follow-up": ("flaky", 1),  # a second refund row in its database
    "receipt-and-feedback": ("fail", 0),  # a call to the tracker mock it must not call
}


def test_the_support_example_gives_its_verdicts_on_ray_set_in_sounding_toml(
    ray_cluster: Any, tmp_path: Path
) -> None:
    """[executor] kind = "ray", the cluster found through RAY_ADDRESS; the trials start a
    database, HTTP mocks and a mail server on the workers."""
    suite = tmp_path / "support"
    shutil.copytree(ROOT / "examples/support", suite, ignore=shutil.ignore_patterns("results"))
    config = suite / "sounding.toml"
    config.write_text(config.read_text() + '\n[executor]\nkind = "ray"\n')
    chosen = [arg for scenario in SUPPORT for arg in ("--scenario", scenario)]
    done = subprocess.run(
        [sys.executable, "-m", "sounding.cli", "run", str(suite), *chosen],
        capture_output=True,
        text=True,
        env={**os.environ, "RAY_ADDRESS": ray_cluster.address},
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    (run,) = (suite / "results").iterdir()
    summary = json.loads((run / "summary.json").read_text())["scenarios"]
    assert {s["scenario"]: (s["verdict"], s["passed"]) for s in summary} == SUPPORT
    assert all(s["errors"] == 0 for s in summary)


def _interrupted_after(first: int) -> RunHooks:
    """Hooks that ask the run to stop once `first` trials have finished."""
    finished: list[object] = []
    return RunHooks(on_trial=finished.append, interrupted=lambda: len(finished) >= first)


QUICKSTART = {
    ("where-is-my-order", "pass", 4),
    ("refund-after-lookup", "flaky", 1),
    ("refund-over-the-ceiling", "fail", 0),
}


@pytest.mark.parametrize(("first", "then"), [("local", "ray"), ("ray", "local")])
def test_a_run_resumes_on_the_other_executor(
    quickstart: Path, ray_cluster: Any, first: str, then: str
) -> None:
    suite = load_suite(quickstart)
    options = RunOptions(parallel=1, executor=first)
    with pytest.raises(RunInterrupted) as stopped:
        run_suite(suite, options, prepare_run(suite, options), _interrupted_after(2))
    assert stopped.value.root is not None and 2 <= stopped.value.finished < 12
    resumed = RunOptions(parallel=2, executor=then, resume=stopped.value.root.name)
    result = run_suite(suite, resumed, prepare_run(suite, resumed))
    assert result.ran == 12 - stopped.value.finished
    lines = {(s.scenario, s.verdict.value, s.passed) for s in result.summary.scenarios}
    assert lines == QUICKSTART


def test_errors_not_the_agents_run_again_on_ray(quickstart: Path, ray_cluster: Any) -> None:
    """A trial whose error is not the agent's (a service did not start) runs again, as long
    as `--retry-errors` allows; the tries that erred are set aside under retried/."""
    case = quickstart / "cases/support.yaml"
    broken = '[python3, -c, "raise SystemExit(1)", "{port}"]'  # a service that never starts
    service = f"services:\n  - {{name: api, type: process, command: {broken}, deadline: 2}}\n"
    case.write_text(case.read_text().replace("\nexpect:", f"\n{service}expect:", 1))
    suite = load_suite(quickstart)
    options = RunOptions(executor="ray", retry_errors=2, scenarios=["where-is-my-order"])
    result = run_suite(suite, options, prepare_run(suite, options))
    assert result.ran == 4
    assert result.summary.totals["error"] == 1
    assert len(list(result.layout.root.glob("retried/**/trial.json"))) == 2


def _victim_suite(suite: Any, tmp_path: Path) -> Path:
    """A suite whose scenario `victim` logs each try's agent and Ray worker (its parent) in
    tmp_path/tries and waits for tmp_path/go; `steady` answers at once. The log's path."""
    tries = tmp_path / "tries"
    suite.agent(
        f"""
        import os, sys, time
        sys.stdin.read()
        if os.environ["SOUNDING_SCENARIO"] == "victim":
            with open({str(tries)!r}, "a") as log:
                log.write(f"{{os.getpid()}} {{os.getppid()}}\\n")
            while not os.path.exists({str(tmp_path / "go")!r}):
                time.sleep(0.05)
        print("done")
        """
    )
    suite.write(
        "cases/c.yaml",
        """
        scenarios:
          - {id: steady, user: hi, trials: 3, expect: [{final_answer_contains: done}]}
          - {id: victim, user: hi, trials: 1, expect: [{final_answer_contains: done}]}
        """,
    )
    return tries


def _kill_workers(tries: Path, times: int, go: Path) -> threading.Thread:
    """A thread that SIGKILLs the Ray worker of each of the first `times` tries logged,
    then lets the next try finish (writes `go`)."""

    def kill() -> None:
        deadline = time.monotonic() + 60
        killed = 0
        while killed < times and time.monotonic() < deadline:
            logged = tries.read_text().splitlines() if tries.exists() else []
            if len(logged) > killed:
                worker = int(logged[killed].split()[1])
                command = Path(f"/proc/{worker}/cmdline").read_bytes()
                assert command.startswith(b"ray::"), command  # a Ray worker, not the run
                os.kill(worker, signal.SIGKILL)
                killed += 1
            time.sleep(0.02)
        go.write_text("")

    thread = threading.Thread(target=kill, daemon=True)
    thread.start()
    return thread


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat")
    return status.exists() and status.read_text().rpartition(")")[2].split()[0] != "Z"


def _gone(pids: list[int], within: float = 10) -> bool:
    deadline = time.monotonic() + within
    while any(_alive(pid) for pid in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_worker_killed_mid_trial_runs_that_trial_again(
    suite: Any, tmp_path: Path, ray_cluster: Any
) -> None:
    tries = _victim_suite(suite, tmp_path)
    killer = _kill_workers(tries, 1, tmp_path / "go")
    loaded = load_suite(suite.root)
    options = RunOptions(executor="ray", parallel=2)
    result = run_suite(loaded, options, prepare_run(loaded, options))
    killer.join(timeout=5)
    assert result.ran == 4
    verdicts = {(s.scenario, s.verdict.value, s.passed) for s in result.summary.scenarios}
    assert verdicts == {("steady", "pass", 3), ("victim", "pass", 1)}
    assert result.summary.totals.get("error", 0) == 0
    first, again = (line.split() for line in tries.read_text().splitlines())
    assert first[1] != again[1], "the trial ran again on another worker"
    assert _gone([int(first[0])]), "the agent of the killed worker is still running"


def test_a_trial_lost_again_and_again_is_left_for_resume(
    suite: Any, tmp_path: Path, ray_cluster: Any
) -> None:
    """Lost with its worker on every try the run gives it (3): the other trials finish, the
    run stops naming it, and `--resume` runs it; it is never counted as a failure."""
    tries = _victim_suite(suite, tmp_path)
    killer = _kill_workers(tries, 3, tmp_path / "go")
    loaded = load_suite(suite.root)
    options = RunOptions(executor="ray", parallel=2)
    with pytest.raises(RunStopped) as stopped:
        run_suite(loaded, options, prepare_run(loaded, options))
    killer.join(timeout=5)
    assert "c/victim#1" in stopped.value.why and "3 times" in stopped.value.why
    assert stopped.value.finished == 3 and stopped.value.root is not None
    (run,) = suite.runs()
    assert [t["scenario"] for t in suite.trials(run)] == ["steady"] * 3
    resumed = RunOptions(executor="ray", resume=run.name)
    result = run_suite(loaded, resumed, prepare_run(loaded, resumed))
    assert result.ran == 1 and result.summary.totals.get("fail", 0) == 0
    assert {s.scenario: s.passed for s in result.summary.scenarios} == {"steady": 3, "victim": 1}


def test_ctrl_c_cancels_the_tasks_ends_their_agents_and_resumes(
    suite: Any, tmp_path: Path, ray_cluster: Any
) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    suite.agent(
        f"""
        import os, sys, time
        sys.stdin.read()
        open(os.path.join({str(pids)!r}, str(os.getpid())), "w").close()
        while not os.path.exists({str(tmp_path / "go")!r}):
            time.sleep(0.05)
        print("done")
        """
    )
    suite.write("cases/c.yaml", "scenarios:\n  - {id: s, user: hi, trials: 4}\n")
    on_ray = ("--executor", "ray", "--ray-address", ray_cluster.address)
    process = suite.start(*on_ray, "--parallel", "2")
    deadline = time.monotonic() + 60
    while len(list(pids.iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    agents = [int(p.name) for p in pids.iterdir()]
    assert len(agents) == 2, "the agents never started on the workers"
    err = suite.interrupt(process)  # 130 within seconds
    assert "Traceback" not in err, err
    assert _gone(agents), "an agent outlived Ctrl-C"
    (run,) = suite.runs()
    assert f"--resume {run.name}" in err
    (tmp_path / "go").write_text("")
    loaded = load_suite(suite.root)
    resumed = RunOptions(executor="ray", resume=run.name)
    result = run_suite(loaded, resumed, prepare_run(loaded, resumed))
    assert result.ran == 4 and result.exit_code == 0


def test_a_timeout_ends_the_agents_process_group_on_the_worker(
    suite: Any, tmp_path: Path, ray_cluster: Any
) -> None:
    child = tmp_path / "child.pid"
    suite.agent(
        f"""
        import subprocess, sys, time
        sys.stdin.read()
        spawned = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open({str(child)!r}, "w").write(str(spawned.pid))
        time.sleep(60)
        """,
        extra_config="attempts = 1\n",
    )
    suite.write("cases/slow.yaml", "scenarios:\n  - {id: s, user: hi, timeout: 1s}\n")
    loaded = load_suite(suite.root)
    options = RunOptions(executor="ray")
    started = time.monotonic()
    result = run_suite(loaded, options, prepare_run(loaded, options))
    assert time.monotonic() - started < 20
    assert result.summary.totals["error"] == 1
    (trial,) = suite.trials(result.layout.root)
    assert "timed out" in json.dumps(trial)
    assert _gone([int(child.read_text())], within=2), "the agent's child outlived its timeout"


def test_a_callable_agent_named_in_sounding_toml_runs_on_the_workers(
    suite: Any, tmp_path: Path, ray_cluster: Any
) -> None:
    """`[agent] callable = "module:function"` travels as its name and is imported on the
    worker: the same verdicts as on local threads (a pass, a wrong answer, an exception,
    and a call that never returns, which Ray ends by cancelling its task past the grace)."""
    calls = tmp_path / "calls"
    suite.callable_agent(
        "agent_on_ray",
        f"""
        import os, time

        def answer(prompt, context):
            with open({str(calls)!r}, "a") as log:
                log.write(f"{{os.getpid()}}\\n")
            if "hang" in prompt:
                time.sleep(30)
            if "crash" in prompt:
                raise RuntimeError("the agent fell over")
            return "nope" if "wrong" in prompt else "ok"
        """,
    )
    config = suite.root / "sounding.toml"  # one attempt; cancelled 1 s past the timeout
    config.write_text(config.read_text() + "attempts = 1\n[executor]\ngrace = 1\n")
    expect = "expect: [{final_answer_contains: ok}]"
    suite.write(
        "cases/c.yaml",
        f"""
        scenarios:
          - {{id: good, user: hi, trials: 2, {expect}}}
          - {{id: wrong, user: be wrong, {expect}}}
          - {{id: crash, user: crash, {expect}}}
          - {{id: hang, user: hang, timeout: 0.5s, {expect}}}
        """,
    )
    loaded = load_suite(suite.root)
    verdicts, pids, hung = [], [], []
    for executor in ("local", "ray"):
        options = RunOptions(executor=executor)
        result = run_suite(loaded, options, prepare_run(loaded, options))
        verdicts.append({(s.scenario, s.verdict.value, s.passed) for s in result.summary.scenarios})
        pids.append({int(line) for line in calls.read_text().split()})
        calls.unlink()
        hung += [t["reason"] for t in suite.trials(result.layout.root) if t["scenario"] == "hang"]
    assert (
        verdicts[0]
        == verdicts[1]
        == {
            ("good", "pass", 2),
            ("wrong", "fail", 0),
            ("crash", "fail", 0),
            ("hang", "error", 0),
        }
    )
    assert hung[0] == hung[1] and "timed out after 0.5s" in hung[0], hung
    assert pids[0] == {os.getpid()} and pids[1] and os.getpid() not in pids[1], pids


def test_a_judge_check_gives_the_same_verdict_on_ray(
    suite: Any, llm_server: Any, ray_cluster: Any
) -> None:
    """The [judge] client travels as its settings and key; each worker opens its own
    connection to the judge's server (a scripted one on 127.0.0.1 here), which answers
    the trials in the other order on Ray: the same verdict, from answers asked anew."""
    judge = f'\n[judge]\nprovider = "openai"\nbase_url = "{llm_server.url}/v1"\nmodel = "j"\n'
    agent = (
        "import os, sys; sys.stdin.read(); print('Dear team, note', os.environ['SOUNDING_TRIAL'])"
    )
    suite.agent(agent, extra_config=judge)
    check = "{type: llm_as_judge, criteria: Is the note polite?}"
    suite.write(
        "cases/note.yaml",
        f"scoring: {{pass_threshold: 0.8}}\nscenarios:\n  - id: polite\n    user: a note\n"
        f"    trials: 2\n    invariants: {{tone: {{description: polite, check: {check}}}}}\n",
    )
    loaded = load_suite(suite.root)
    polite = {"score": 0.9, "passed": True, "reason": "courteous"}
    curt = {"score": 0.1, "passed": False, "reason": "curt"}
    verdicts, trials = [], []
    for executor, answers in (("local", (polite, curt)), ("ray", (curt, polite))):
        for answer in answers:
            llm_server.openai_call(answer)
        options = RunOptions(executor=executor, parallel=1)
        settings = prepare_run(loaded, options)
        shutil.rmtree(settings.judge.config.cache_dir, ignore_errors=True)  # asked anew
        result = run_suite(loaded, options, settings)
        verdicts.append([(s.verdict.value, s.passed) for s in result.summary.scenarios])
        trials.append([t["score"]["verdict"] for t in suite.trials(result.layout.root)])
    assert verdicts == [[("flaky", 1)], [("flaky", 1)]]
    assert trials == [["pass", "fail"], ["fail", "pass"]]
    assert llm_server.hits == 4


def test_a_scenario_s_resources_are_held_by_each_of_its_trials(
    suite: Any, tmp_path: Path, ray_cluster: Any
) -> None:
    """`resources: {licence: 1}` on a cluster of one licence: its trials run one at a time
    however many may run at once; asking for more than the cluster has is refused before
    any trial, naming the scenario's line."""
    spans = tmp_path / "spans"
    suite.agent(
        f"""
        import sys, time
        sys.stdin.read()
        started = time.time()
        time.sleep(0.3)
        with open({str(spans)!r}, "a") as log:
            log.write(f"{{started}} {{time.time()}}\\n")
        print("done")
        """
    )
    case = suite.write("cases/c.yaml", "scenarios:\n  - {id: s, user: hi, trials: 3}\n")
    case.write_text(case.read_text().replace("trials: 3}", "trials: 3, resources: {licence: 1}}"))
    loaded = load_suite(suite.root)
    options = RunOptions(executor="ray", parallel=3)
    assert run_suite(loaded, options, prepare_run(loaded, options)).ran == 3
    times = sorted(tuple(map(float, line.split())) for line in spans.read_text().splitlines())
    assert all(end <= start for (_, end), (start, _) in itertools.pairwise(times))
    case.write_text(case.read_text().replace("licence: 1", "licence: 2"))
    loaded = load_suite(suite.root)
    with pytest.raises(SuiteConfigError, match=r"c\.yaml:2: scenario 's' needs 2 licence .* has 1"):
        run_suite(loaded, options, prepare_run(loaded, options))


SIMULATED = """
scenarios:
  - id: rebook
    user:
      - Hi, I need to change my flight.
      - simulate: {goal: Move reservation ABC123 to the next day, max_turns: 3}
    expect: [{final_answer_contains: tomorrow}]
"""


def test_a_simulated_user_plays_the_same_conversation_on_ray(
    suite: Any, llm_server: Any, ray_cluster: Any
) -> None:
    """The [simulator] client travels like the judge's: the worker asks the scripted model
    for the user's turns, and the trial reads as the local one does."""
    config = f'\n[simulator]\nmodel = "user-model"\nbase_url = "{llm_server.url}/v1"\n'
    agent = (
        "import sys; prompt = sys.stdin.read()\n"
        "print('Done: ABC123 moves to tomorrow.' if 'ABC123' in prompt else 'Which one?')\n"
    )
    suite.agent(agent, extra_config=config)
    suite.write("cases/trip.yaml", SIMULATED)
    loaded = load_suite(suite.root)
    seen = []
    for executor in ("local", "ray"):
        for message, done in (("It is ABC123.", False), ("Thanks, that is all.", True)):
            llm_server.openai_call({"message": message, "done": done}, name="user_turn")
        options = RunOptions(executor=executor)
        settings = prepare_run(loaded, options)
        assert settings.simulator is not None
        shutil.rmtree(settings.simulator.config.cache_dir, ignore_errors=True)  # asked anew
        result = run_suite(loaded, options, settings)
        (trial,) = suite.trials(result.layout.root)
        turns = [(t["message"], t["done"]) for t in trial["simulated"]["turns"]]
        seen.append((result.summary.exit_code, trial["record"]["user_turns"], turns))
    assert seen[0] == seen[1]
    assert seen[0][0] == 0 and seen[0][1][-1] == "It is ABC123."
    assert llm_server.hits == 4


def _host(address: str) -> str:
    """The host of an `ss` address: `[::ffff:127.0.0.1]:80` → `127.0.0.1`."""
    host = address.rpartition(":")[0].strip("[]").removeprefix("::ffff:")
    return host.partition("%")[0]


def test_every_socket_of_the_cluster_is_on_127_0_0_1(ray_cluster: Any, quickstart: Path) -> None:
    """After a run on it, every TCP and UDP socket of the cluster's processes (and of this
    driver) is bound to and talks with 127.0.0.1: never the machine's other addresses."""
    if shutil.which("ss") is None:
        pytest.skip("`ss` (iproute2) is not installed: the sockets cannot be listed")
    suite = load_suite(quickstart)
    options = RunOptions(executor="ray", scenarios=["where-is-my-order"])
    assert run_suite(suite, options, prepare_run(suite, options)).ran == 4
    ours = ray_cluster.pids() | {os.getpid()}
    listed = subprocess.run(["ss", "-tunapH"], capture_output=True, text=True, check=True).stdout
    seen, wrong = [], []
    for line in listed.splitlines():
        fields = line.split()
        if not {int(pid) for pid in re.findall(r"pid=(\d+)", line)} & ours:
            continue
        state, local, peer = fields[1], _host(fields[4]), _host(fields[5])
        seen.append(line)
        open_to_all = state in ("LISTEN", "UNCONN") and peer in ("*", "0.0.0.0", "::")
        if local != "127.0.0.1" or not (peer == "127.0.0.1" or open_to_all):
            wrong.append(line)
    assert not wrong, "\n".join(wrong)
    port = ray_cluster.address.rpartition(":")[2]
    assert any("LISTEN" in line and f"127.0.0.1]:{port} " in line for line in seen), seen
    assert len({pid for line in seen for pid in re.findall(r"pid=(\d+)", line)}) >= 6


def test_what_ray_cannot_run_yet_is_refused_before_any_trial(quickstart: Path) -> None:
    _need_ray()
    suite = load_suite(quickstart)
    options = RunOptions(executor="ray")
    settings = prepare_run(suite, options)
    callable_agent = replace(settings.agent, kind="callable", function=print)
    with pytest.raises(SuiteConfigError, match="callable agent"):
        run_suite(suite, options, replace(settings, agent=callable_agent))
    with pytest.raises(SuiteConfigError, match="--until-decided"):
        run_suite(suite, replace(options, until_decided=StopRule()), settings)
    with pytest.raises(SuiteConfigError, match="--ray-address goes with --executor ray"):
        run_suite(suite, RunOptions(ray_address="127.0.0.1:6379"), settings)
    with socket.socket() as closed:  # a port nothing listens on once it is closed
        closed.bind(("127.0.0.1", 0))
        nowhere = f"127.0.0.1:{closed.getsockname()[1]}"
    with pytest.raises(
        SuiteConfigError, match=f"could not connect to the Ray cluster at {nowhere}"
    ):
        run_suite(suite, replace(options, ray_address=nowhere), settings)
    assert not (quickstart / "results").exists() or not any((quickstart / "results").iterdir())


def test_without_ray_the_executor_names_the_extra(quickstart: Path, tmp_path: Path) -> None:
    """As a missing package looks: `import ray` fails; the run exits 2 before any trial."""
    missing = tmp_path / "no-ray"
    missing.mkdir()
    (missing / "ray.py").write_text("raise ImportError('No module named ray')\n")
    path = os.pathsep.join([str(missing), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    with_toml = quickstart / "sounding.toml"
    with_toml.write_text(with_toml.read_text() + '\n[executor]\nkind = "ray"\n')
    for args in (["--executor", "ray"], []):
        done = subprocess.run(
            [sys.executable, "-m", "sounding.cli", "run", str(quickstart), *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )
        assert done.returncode == 2, done.stdout + done.stderr
        assert "pip install 'sounding[ray]'" in done.stderr
    assert not (quickstart / "results").exists()


DRIVER = '\n[executor]\nartifacts = "driver"\n'


def test_with_artifacts_on_the_driver_the_quickstart_gives_the_same_verdicts_and_layout(
    quickstart: Path, sounding: Any, ray_cluster: Any
) -> None:
    local = sounding("run", str(quickstart))
    local_files = _layout(quickstart)
    shutil.rmtree(quickstart / "results")
    config = quickstart / "sounding.toml"
    config.write_text(config.read_text() + DRIVER)
    on_ray = sounding(
        "run", str(quickstart), "--executor", "ray", "--ray-address", ray_cluster.address
    )
    assert on_ray.returncode == local.returncode == 1, on_ray.stdout + on_ray.stderr
    assert _verdicts(on_ray.stdout) == _verdicts(local.stdout)
    assert _layout(quickstart) == local_files


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _bare_repo(at: Path, work: Path) -> None:
    """A bare repository at `at` holding README.md at the tag v1."""
    work.mkdir()
    (work / "README.md").write_text("the app\n")
    _git("init", "--quiet", str(work), cwd=work.parent)
    _git("add", "README.md", cwd=work)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "one", cwd=work)
    _git("tag", "v1", cwd=work)
    _git("clone", "--quiet", "--bare", str(work), str(at), cwd=work.parent)


def test_with_artifacts_on_the_driver_workspaces_are_built_on_the_worker(
    suite: Any, ray_cluster: Any, tmp_path: Path
) -> None:
    """The workers never use the driver's suite or results folder, and the trial folders
    still arrive in the results with their workspace files, checked where they were made.

    How it could fail: the agent (on a Ray worker) logs where it runs: its own script (the
    agent command's `{suite}`), its workspace, and the repository its clone came from. On
    this one machine the workers could reach the driver's folders; in shared mode every
    one of those paths is under the driver's suite or results folder, so the asserts that
    none is would fail, as they would for a worker that wrote into the results in place.
    """
    log = tmp_path / "where.jsonl"
    suite.agent(
        f"""
        import json, os, pathlib, subprocess, sys
        sys.stdin.read()
        workspace = pathlib.Path(os.environ["SOUNDING_WORKSPACE"])
        (workspace / "answer.txt").write_text((workspace / "given.txt").read_text().upper())
        origin = subprocess.run(["git", "remote", "get-url", "origin"], cwd=workspace,
                                capture_output=True, text=True).stdout.strip()
        where = {{"agent": __file__, "workspace": str(workspace), "origin": origin}}
        with open({str(log)!r}, "a") as out:
            out.write(json.dumps(where) + "\\n")
        print("done")
        """,
        extra_config=DRIVER,
    )
    suite.write("fixtures/shop/stock.txt", "3 left\n")
    suite.write("given/order.txt", "order a-1\n")
    _bare_repo(suite.root / "app.git", tmp_path / "app")
    suite.write(
        "cases/c.yaml",
        """
        scenarios:
          - id: fixture
            user: hi
            trials: 2
            workspace: {fixture: fixtures/shop, given: {given.txt: given/order.txt}}
            expect:
              - file_content: {path: answer.txt, contains: ORDER A-1}
              - file_exists: stock.txt
          - id: clone
            user: hi
            trials: 2
            workspace: {repo: app.git, ref: v1, given: {given.txt: given/order.txt}}
            expect:
              - file_exists: README.md
              - file_content: {path: answer.txt, contains: ORDER A-1}
        """,
    )
    done = suite.run("--executor", "ray", "--ray-address", ray_cluster.address)
    assert done.returncode == 0, done.stdout + done.stderr
    (run,) = suite.runs()
    assert len(list(run.glob("trials/default/c/*/workspace/answer.txt"))) == 4
    where = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(where) == 4
    for path in (p for w in where for p in w.values() if p.startswith("/")):
        assert not Path(path).is_relative_to(suite.root), path
    assert sorted(Path(w["origin"]).name for w in where) == ["", "", "app.git", "app.git"]


def test_with_artifacts_on_the_driver_what_cannot_come_back_is_refused(
    quickstart: Path, ray_cluster: Any
) -> None:
    """`--llm record` writes its cassettes into the suite, which workers hold as a copy;
    a Ray this process started without the suite as its working_dir cannot ship it."""
    config = quickstart / "sounding.toml"
    config.write_text(config.read_text() + DRIVER)
    suite = load_suite(quickstart)
    options = RunOptions(executor="ray", llm="record")
    with pytest.raises(SuiteConfigError, match=r"--llm record with \[executor\] artifacts"):
        run_suite(suite, options, prepare_run(suite, options))
    options = RunOptions(executor="ray")  # this process is a Ray driver already (the fixture)
    with pytest.raises(SuiteConfigError, match="without one: let sounding connect to Ray"):
        run_suite(suite, options, prepare_run(suite, options))
    assert not list((quickstart / "results").glob("*/trials/**/trial.json"))


def test_max_cost_on_ray_stops_new_trials_as_costs_arrive(suite: Any, ray_cluster: Any) -> None:
    """Each trial costs 0.01 USD (its trace says so); past --max-cost 0.015, counted as the
    trials arrive one at a time, no trial starts any more and the run exits 130."""
    suite.agent(
        """
        import sys
        from sounding.record import Trace
        sys.stdin.read()
        with Trace() as trace:
            trace.usage(input_tokens=1, output_tokens=1, cost_usd=0.01, model="m")
            trace.final("done")
        print("done")
        """
    )
    suite.write("cases/c.yaml", "scenarios:\n  - {id: s, user: hi, trials: 6}\n")
    address = ("--ray-address", ray_cluster.address)
    stopped = suite.run("--executor", "ray", *address, "--parallel", "1", "--max-cost", "0.015")
    assert stopped.returncode == 130, stopped.stdout + stopped.stderr
    assert "the run spent 0.0200 USD, over --max-cost 0.015" in stopped.stderr
    (run,) = suite.runs()
    assert len(suite.trials(run)) == 2

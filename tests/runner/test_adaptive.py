"""`sounding run --until-decided`: real command agents that pass or fail by trial number,
scenarios stopped by the rule, cells kept in step, and an adaptive run resumed."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

# The agent answers by its mode (a cell's MODE, else the scenario's id) and trial number,
# and logs `cell trial scenario` for each trial it runs.
AGENT = """
import os, sys, time
sys.stdin.read()
n = int(os.environ["SOUNDING_TRIAL"])
scenario = os.environ["SOUNDING_SCENARIO"]
mode = os.environ.get("MODE", scenario)
with open({log!r}, "a") as log:
    log.write(f"{{os.environ.get('MODE', '-')}} {{n}} {{scenario}}\\n")
if mode == "stalls" and n >= 3 and not os.path.exists({go!r}):
    time.sleep(60)
if mode == "erring" and n == 1:
    open(os.environ["SOUNDING_TRACE"], "w").write('{{"hello": "world"}}')
answers = {{"alternates": "ok" if n % 2 else "no", "never": "no"}}
print(answers.get(mode, "ok"))
"""


def _suite(suite: Any, tmp_path: Path, scenarios: list[str], extra_config: str = "") -> Path:
    log = tmp_path / "trials.log"
    suite.agent(AGENT.format(log=str(log), go=str(tmp_path / "go")), extra_config=extra_config)
    lines = [
        f"  - {{id: {name}, user: hi, expect: [{{final_answer_contains: ok}}]}}"
        for name in scenarios
    ]
    suite.write("cases/c.yaml", "scenarios:\n" + "\n".join(lines) + "\n")
    return log


def _ran(log: Path) -> list[tuple[str, int, str]]:
    rows = [line.split() for line in log.read_text().splitlines()]
    return [(cell, int(n), scenario) for cell, n, scenario in rows]


def _summary(run: Path) -> dict[tuple[str, str], dict[str, Any]]:
    document = json.loads((run / "summary.json").read_text())
    return {(s["cell"], s["scenario"]): s for s in document["scenarios"]}


def test_a_steady_scenario_stops_when_the_bound_clears(suite: Any, tmp_path: Path) -> None:
    """95 % sure of a 50 % rate: five agreeing trials (0.5 ** 5 = 0.031 <= 0.05), not four."""
    _suite(suite, tmp_path, ["steady", "never"])
    done = suite.run("--until-decided", "--min-rate", "0.5", "--parallel", "2")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "PASS  c/steady  5/5" in done.stdout and "FAIL  c/never  0/5" in done.stdout
    assert "2 by the bound; 10 trials, 20 at a fixed 10" in done.stdout
    (run,) = suite.runs()
    summary = _summary(run)
    assert summary[("default", "steady")]["stopped"] == "bound"
    assert summary[("default", "never")]["stopped"] == "bound"
    document = json.loads((run / "summary.json").read_text())
    assert document["until_decided"] == {"least": 2, "most": 10, "confidence": 0.95, "rate": 0.5}
    plan = json.loads((run / "run.json").read_text())
    assert plan["options"]["until_decided"]["rate"] == 0.5
    assert sorted((t["scenario"], t["trial"]) for t in plan["trials"]) == [
        (scenario, n) for scenario in ("never", "steady") for n in range(1, 6)
    ]
    assert len(suite.trials(run)) == 10
    said = "until decided (95% sure of a 50% rate, at most 10 trials): 2 by the bound; 10 trials"
    shown = suite.sounding("report", str(run))
    assert said in shown.stdout, shown.stderr
    page, notes = tmp_path / "report.html", tmp_path / "report.md"
    written = suite.sounding("report", str(run), "--html", str(page), "--markdown", str(notes))
    assert written.returncode == 0
    assert said in page.read_text() and said in notes.read_text()  # every report says so


def test_the_default_rule_takes_nine_agreeing_trials(suite: Any, tmp_path: Path) -> None:
    """95 % sure of a 70 % rate: 0.7 ** 9 = 0.040 <= 0.05 < 0.7 ** 8 = 0.058."""
    _suite(suite, tmp_path, ["steady"])
    done = suite.run("--until-decided", "--parallel", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS  c/steady  9/9" in done.stdout


def test_trials_sets_the_least_a_scenario_takes(suite: Any, tmp_path: Path) -> None:
    _suite(suite, tmp_path, ["steady"])
    done = suite.run("--until-decided", "--min-rate", "0.5", "--trials", "7")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS  c/steady  7/7" in done.stdout


def test_an_alternating_scenario_stops_flaky_at_its_first_differing_trial(
    suite: Any, tmp_path: Path
) -> None:
    log = _suite(suite, tmp_path, ["alternates"])
    done = suite.run("--until-decided", "--parallel", "1")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FLAKY c/alternates  1/2" in done.stdout
    assert "1 at a differing outcome; 2 trials, 10 at a fixed 10" in done.stdout
    assert _ran(log) == [("-", 1, "alternates"), ("-", 2, "alternates")]
    (run,) = suite.runs()
    assert _summary(run)[("default", "alternates")]["stopped"] == "differ"


def test_max_trials_caps_a_scenario_the_bound_has_not_decided(suite: Any, tmp_path: Path) -> None:
    _suite(suite, tmp_path, ["steady"])
    done = suite.run("--until-decided", "--max-trials", "4")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS  c/steady  4/4" in done.stdout and "1 at --max-trials" in done.stdout
    (run,) = suite.runs()
    assert _summary(run)[("default", "steady")]["stopped"] == "max-trials"


def test_an_errored_trial_is_no_outcome_and_one_more_trial_is_run(
    suite: Any, tmp_path: Path
) -> None:
    _suite(suite, tmp_path, ["erring"])
    done = suite.run("--until-decided", "--min-rate", "0.5", "--parallel", "2")
    assert done.returncode == 3, done.stdout + done.stderr  # an error leaves the run without one
    assert "ERROR c/erring  5/5 (1 error: 1 agent)" in done.stdout
    (run,) = suite.runs()
    line = _summary(run)[("default", "erring")]
    assert (line["trials"], line["errors"], line["stopped"]) == (6, 1, "bound")


CELLS = """
[cells.variants.steady]
env = { MODE = "steady" }

[cells.variants.shaky]
env = { MODE = "alternates" }
"""


def test_cells_stay_in_step_until_every_cell_is_decided(suite: Any, tmp_path: Path) -> None:
    """`shaky` is flaky at its second trial, but `steady` needs five: both take five, round
    by round, so the comparison stays paired."""
    log = _suite(suite, tmp_path, ["s"], extra_config=CELLS)
    done = suite.run("--until-decided", "--min-rate", "0.5", "--parallel", "1")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "PASS  [steady] c/s  5/5" in done.stdout
    assert "FLAKY [shaky] c/s  3/5" in done.stdout
    rounds = [(cell, n) for cell, n, _ in _ran(log)]
    assert rounds == [(cell, n) for n in range(1, 6) for cell in ("steady", "alternates")]
    (run,) = suite.runs()
    summary = _summary(run)
    assert summary[("steady", "s")]["stopped"] == "bound"
    assert summary[("shaky", "s")]["stopped"] == "differ"


def test_cells_stay_in_step_in_parallel(suite: Any, tmp_path: Path) -> None:
    log = _suite(suite, tmp_path, ["s", "t"], extra_config=CELLS)
    done = suite.run("--until-decided", "--min-rate", "0.5", "--parallel", "3")
    assert done.returncode == 1, done.stdout + done.stderr
    ran = _ran(log)
    for scenario in ("s", "t"):
        for cell in ("steady", "alternates"):
            trials = sorted(n for c, n, s in ran if (c, s) == (cell, scenario))
            assert trials == [1, 2, 3, 4, 5], (cell, scenario, ran)


def test_an_adaptive_run_resumes_where_it_stopped(suite: Any, tmp_path: Path) -> None:
    log = _suite(suite, tmp_path, ["stalls"])
    process = suite.start("--until-decided", "--min-rate", "0.5", "--parallel", "1")
    deadline = time.monotonic() + 30
    while (not log.exists() or len(_ran(log)) < 3) and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.communicate()
    (run,) = suite.runs()
    assert [t["trial"] for t in suite.trials(run)] == [1, 2]
    plan = json.loads((run / "run.json").read_text())
    assert len(plan["trials"]) == 10  # while it runs: the most it may take
    (tmp_path / "go").write_text("")
    refused = suite.run("--resume", run.name, "--until-decided", "--max-trials", "4")
    assert refused.returncode == 2 and "resume it without --until-decided" in refused.stderr
    done = suite.run("--resume", run.name)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS  c/stalls  5/5" in done.stdout
    assert [n for _, n, _ in _ran(log)] == [1, 2, 3, 3, 4, 5]  # only the unfinished ran again
    plan = json.loads((run / "run.json").read_text())
    assert [t["trial"] for t in plan["trials"]] == [1, 2, 3, 4, 5]  # once ended: those it took


def test_a_scenario_gated_by_a_majority_is_refused(suite: Any, tmp_path: Path) -> None:
    suite.agent("print('ok')")
    suite.write(
        "cases/m.yaml",
        "scenarios:\n  - {id: m, user: hi, scoring: {replica_aggregation: majority}}\n",
    )
    done = suite.run("--until-decided")
    assert done.returncode == 2
    assert "replica_aggregation: majority" in done.stderr and "fixed --trials" in done.stderr
    assert not (suite.root / "results").exists() or not suite.runs()


def test_its_settings_need_until_decided_and_the_least_fits_the_most(suite: Any) -> None:
    suite.agent("print('ok')")
    suite.write("cases/a.yaml", "scenarios:\n  - {id: a, user: hi}\n")
    alone = suite.run("--max-trials", "5")
    assert alone.returncode == 2 and "go with --until-decided" in alone.stderr
    over = suite.run("--until-decided", "--trials", "12")
    assert over.returncode == 2 and "--max-trials 10" in over.stderr

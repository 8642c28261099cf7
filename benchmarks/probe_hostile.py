"""Probe: agents that crash, hang, exit non-zero and leave daemons, and a sounding that is
killed with `kill -9` again and again. Counts what must be zero.

    python benchmarks/probe_hostile.py [--trials 1000] [--kills 20] [--sandbox]

1. A run of N trials (N/10 scenarios, 10 trials each, a 2 s timeout). Trial k of scenario
   s behaves by (10 s + k) mod 20: 0 writes its file and answer, then kills itself with
   SIGSEGV; 1 writes them, leaves a daemon in a session of its own holding its stdout, and
   hangs; 2 writes them and exits 3; the others write them and exit 0. Every scenario
   checks the file and the answer, which all of them wrote. Counted: false passes (a
   misbehaving trial that passed), trials unaccounted for, hanging trials that ran past
   the timeout + 2 s, and processes of the run still alive once `sounding run` returned.
2. A run of 4 x K one-trial scenarios whose agents take 0.2 s each, killed with SIGKILL
   at a random moment K times, each time resumed with `--resume`, then finished. Counted:
   agents still running after a kill, stored JSON files that do not parse, trials finished
   before a kill that ran again, and a final summary that misses a trial.

Targets: every count 0. Sizes below the defaults make a quicker, weaker probe.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from _bench import figure, heading, sounding_argv, target, workdir

TIMEOUT = 2.0
TRIALS_PER_SCENARIO = 10

HOSTILE_AGENT = """\
#!/bin/sh
cat > /dev/null
mode=$(( (${SOUNDING_SCENARIO#s} * 10 + SOUNDING_TRIAL) % 20 ))
echo made > made.txt
echo done
case $mode in
  0) kill -SEGV $$ ;;
  1) setsid sh -c 'sleep 30; : MARKER' & sleep 30 ;;
  2) exit 3 ;;
esac
"""

SLOW_AGENT = """\
#!/bin/sh
cat > /dev/null
echo "$SOUNDING_SCENARIO" >> "$PROBE_LOG"
sleep 0.2
echo done
"""


def mode(scenario: str, trial: int) -> str:
    """What trial `trial` of `scenario` does, as HOSTILE_AGENT decides it."""
    found = (int(scenario.removeprefix("s")) * 10 + trial) % 20
    return {0: "crash", 1: "hang", 2: "exit 3"}.get(found, "well")


def write_suite(root: Path, agent: str, scenarios: list[str], config: str = "") -> None:
    (root / "cases").mkdir(parents=True)
    (root / "agent.sh").write_text(agent)
    (root / "sounding.toml").write_text(
        f'[agent]\ncommand = ["sh", "{{suite}}/agent.sh"]\n{config}'
    )
    (root / "cases" / "probe.yaml").write_text(
        "scenarios:\n" + "".join(scenarios), encoding="utf-8"
    )


def alive_with(marker: str) -> list[int]:
    """Processes whose command line holds `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def trials_of(run: Path) -> list[dict[str, object]]:
    return [json.loads(p.read_bytes()) for p in sorted(run.glob("trials/*/*/*/trial.json"))]


def probe_hostile(folder: Path, trials: int, sandbox: bool) -> bool:
    heading(f"{trials} trials: 5 % crash, 5 % hang with a daemon, 5 % exit 3")
    marker = f"sounding-probe-{os.getpid()}"
    scenarios = [
        f"  - id: s{n}\n    user: go\n    trials: {TRIALS_PER_SCENARIO}\n"
        f"    timeout: {TIMEOUT}\n"
        "    expect: [{file_exists: made.txt}, {final_answer_contains: done}]\n"
        for n in range(trials // TRIALS_PER_SCENARIO)
    ]
    config = 'sandbox = "bwrap"\n' if sandbox else ""
    write_suite(folder, HOSTILE_AGENT.replace("MARKER", marker), scenarios, config)
    started = time.monotonic()
    done = subprocess.run(
        [*sounding_argv(), "run", str(folder), "--parallel", "8"],
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.monotonic() - started
    left = alive_with(marker)
    for pid in left:  # the probe's own mess: not left for the next one
        os.kill(pid, signal.SIGKILL)
    (run,) = (folder / "results").iterdir()
    stored = trials_of(run)
    false_passes = late = 0
    kinds: dict[str, int] = {}
    for trial in stored:
        kind = mode(str(trial["scenario"]), int(str(trial["trial"])))
        kinds[f"{kind}: {trial['verdict']}"] = kinds.get(f"{kind}: {trial['verdict']}", 0) + 1
        false_passes += kind != "well" and trial["verdict"] == "pass"
        late += kind == "hang" and float(str(trial["duration_ms"])) > (TIMEOUT + 2) * 1000
    summary = json.loads((run / "summary.json").read_text())
    counted = sum(s["trials"] for s in summary["scenarios"])
    figure("sounding run", f"exit {done.returncode} in {seconds:.1f} s")
    for kind, count in sorted(kinds.items()):
        figure(kind, str(count))
    met = target("false passes", false_passes == 0, str(false_passes))
    unaccounted = trials - len(stored) + abs(trials - counted)
    met &= target("trials unaccounted for", unaccounted == 0, str(unaccounted))
    met &= target("hangs past the timeout + 2 s", late == 0, str(late))
    met &= target("processes left running", not left, str(len(left)))
    return met


def probe_kills(folder: Path, kills: int) -> bool:
    heading(f"kill -9 of sounding, {kills} times, each resumed")
    count = 4 * kills
    log = folder / "agents.log"
    scenarios = [
        f"  - {{id: s{n}, user: go, expect: [{{final_answer_contains: done}}]}}\n"
        for n in range(count)
    ]
    write_suite(folder, SLOW_AGENT, scenarios, f"env = {{PROBE_LOG = '{log}'}}\n")
    log.touch()
    results, chance = folder / "results", random.Random(7)
    corrupt = rerun = done_kills = survivors = 0
    watched: list[tuple[set[str], int]] = []  # trials finished at a kill, log lines then
    for _ in range(kills):
        process = subprocess.Popen(
            [*sounding_argv(), "run", str(folder), "--parallel", "2", *resumed(results)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(chance.uniform(0.4, 1.2))
        if process.poll() is not None:
            break  # it finished first
        process.kill()
        process.wait()
        done_kills += 1
        time.sleep(0.2)  # its agents die with it (the kernel's parent-death signal)
        survivors += len(alive_with(str(folder / "agent.sh")))
        runs = list(results.iterdir()) if results.is_dir() else []
        if not runs:
            continue  # killed before it made its run folder: the next one starts afresh
        finished = {str(t["scenario"]) for t in trials_of(runs[0])}
        watched.append((finished, len(log.read_text().split())))
        corrupt += count_corrupt(results)
    final = subprocess.run(
        [*sounding_argv(), "run", str(folder), *resumed(results)],
        capture_output=True,
        text=True,
        check=False,
    )
    ran = log.read_text().split()
    for finished, seen in watched:  # a trial finished at a kill never runs again
        rerun += sum(1 for name in ran[seen:] if name in finished)
    corrupt += count_corrupt(results)
    run = next(results.iterdir())
    summary = json.loads((run / "summary.json").read_text())
    figure("kills done", f"{done_kills} of {kills}")
    figure("final resume", f"exit {final.returncode}")
    met = target("agents alive after a kill", survivors == 0, str(survivors))
    met &= target("stored files that do not parse", corrupt == 0, str(corrupt))
    met &= target("finished trials run again", rerun == 0, str(rerun))
    missing = count - sum(s["trials"] for s in summary["scenarios"])
    met &= target("trials missing from the summary", missing == 0, str(missing))
    return met


def resumed(results: Path) -> list[str]:
    """`--resume RUN` for the run a kill left, or nothing when none had made its folder."""
    runs = list(results.iterdir()) if results.is_dir() else []
    return ["--resume", runs[0].name] if runs else []


def count_corrupt(results: Path) -> int:
    """Stored JSON files (not a temporary file of a write cut short) that do not parse."""
    bad = 0
    for path in results.rglob("*.json"):
        if path.name.startswith(".tmp-"):
            continue
        try:
            json.loads(path.read_bytes())
        except ValueError:
            bad += 1
    return bad


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--sandbox", action="store_true", help='[agent] sandbox = "bwrap"')
    parser.add_argument("--keep", action="store_true", help="keep the generated suites")
    args = parser.parse_args()
    if args.trials < 20 or args.kills < 1:
        parser.error("--trials must be at least 20 and --kills at least 1")
    with workdir("probe-hostile", args.keep) as folder:
        probe_hostile(folder / "hostile", args.trials, args.sandbox)
        probe_kills(folder / "kills", args.kills)
    return 0


if __name__ == "__main__":
    sys.exit(main())

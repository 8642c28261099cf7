"""The ray executor against the local one, and how it scales over nodes while agents wait.

One scenario of `--trials` trials whose agent is `sleep --sleep` (0.2 s), run by
`sounding run` in a child process:

1. Local threads, `--parallel 2` (the floor), against one Ray node of 2 CPUs, `--executor
   ray --ray-address` of a cluster on 127.0.0.1 started beforehand (`--parallel 2`).
2. The same suite on 2, then 4 nodes of 2 CPUs each (simulated nodes on 127.0.0.1, each a
   raylet declaring its CPUs; the agents wait, so they scale past the machine's cores),
   `--parallel` as many as the cluster's CPUs: the throughput of each doubling.

The per-trial scheduling overhead is the time a trial's slot spends on Ray beyond what it
spends locally: (Ray run − local run) × parallel / trials. The cluster is started once, by
benchmarks/_ray_cluster.py, and stopped by its processes' ids.

    python benchmarks/bench_ray.py [--trials 2000] [--sleep 0.2] [--keep]

Targets: one node within 1.5× of local; each doubling of the workers gives at least 1.7×
the throughput.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from _bench import BenchError, figure, heading, run_child, sounding_argv, target, workdir
from _ray_cluster import ClusterError, LoopbackCluster, loopback_env
from bench_harness import write_suite

LOCAL_TARGET = 1.5
DOUBLING_TARGET = 1.7
CPUS = 2  # per node


def sounding_run(suite: Path, parallel: int, env: dict[str, str], *ray: str) -> float:
    """Wall time of `sounding run SUITE --parallel N [ray options]`; exit 0: every trial passed."""
    argv = [*sounding_argv(), "run", str(suite), "--parallel", str(parallel), *ray]
    return run_child(argv, env=env).seconds


def per_second(trials: int, seconds: float) -> str:
    return f"{trials / seconds:.1f} trials/s ({seconds:.1f} s)"


def against_local(suite: Path, cluster: LoopbackCluster, env: dict[str, str], trials: int) -> float:
    """Report one node against local threads; return the Ray run's seconds."""
    heading(f"bench_ray: one node of {CPUS} CPUs against local threads, --parallel {CPUS}")
    local = sounding_run(suite, CPUS, env)
    on_ray = sounding_run(suite, CPUS, env, "--executor", "ray", "--ray-address", cluster.address)
    figure("local --parallel 2 (the floor)", per_second(trials, local))
    figure("ray, one node", per_second(trials, on_ray))
    overhead = (on_ray - local) * CPUS / trials * 1000
    figure("scheduling overhead per trial", f"{overhead:.1f} ms (of each slot's time)")
    ratio = on_ray / local
    target(
        "time ratio ray / local", ratio <= LOCAL_TARGET, f"{ratio:.2f} (target ≤ {LOCAL_TARGET})"
    )
    return on_ray


def doublings(
    suite: Path, cluster: LoopbackCluster, env: dict[str, str], trials: int, one: float
) -> None:
    """Add nodes, 1 → 2 → 4, and report the throughput each doubling buys."""
    heading(f"bench_ray: nodes of {CPUS} CPUs on 127.0.0.1, as many trials at once as CPUs")
    figure(f"1 node, {CPUS} workers", per_second(trials, one))
    before, ratios = one, []
    for nodes in (2, 4):
        while len(cluster.started) < nodes:
            cluster.add_node(CPUS)
        ray = ("--executor", "ray", "--ray-address", cluster.address)
        seconds = sounding_run(suite, nodes * CPUS, env, *ray)
        figure(f"{nodes} nodes, {nodes * CPUS} workers", per_second(trials, seconds))
        ratios.append(before / seconds)
        before = seconds
    worst = min(ratios)
    shown = ", ".join(f"{r:.2f}" for r in ratios)
    target(
        "throughput per doubling",
        worst >= DOUBLING_TARGET,
        f"{shown} (target ≥ {DOUBLING_TARGET} each)",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=2000, help="trials of the sleeping agent")
    parser.add_argument("--sleep", type=float, default=0.2, help="seconds the agent takes")
    parser.add_argument("--keep", action="store_true", help="keep the generated suite")
    args = parser.parse_args(argv)
    if args.trials < 1 or args.sleep <= 0:
        parser.error("--trials needs at least 1, --sleep more than 0")
    try:
        import ray  # noqa: F401  (only to fail early, naming the extra)
    except ImportError:
        parser.error("--executor ray needs Ray: pip install 'sounding[ray]'")
    env = {**os.environ, **loopback_env()}
    env.pop("RAY_ADDRESS", None)
    cluster = None
    try:
        with workdir("ray", args.keep) as folder:
            suite = write_suite(folder / "sleep", f"sleep {args.sleep}", args.trials, 0)
            cluster = LoopbackCluster(CPUS, env)
            one = against_local(suite, cluster, env, args.trials)
            doublings(suite, cluster, env, args.trials, one)
    except (BenchError, ClusterError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        if cluster is not None:
            cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

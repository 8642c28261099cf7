"""A Ray cluster on 127.0.0.1 of this machine, for the Ray tests and bench_ray.py: a head
started by `ray start --head`, nodes joined to it, each declaring its CPUs, in a temporary
folder of its own, stopped by the ids of the processes it started.

Every process it starts reads `ENV` (set by `loopback_env`): Ray's single-machine mode
(RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0), in which a node's address is 127.0.0.1 and its
servers listen there alone, and a token of its own (RAY_AUTH_MODE=token). A driver (a
`sounding run --executor ray`) needs the same environment to reach it.

Nodes are not joined by `ray start --address=127.0.0.1:PORT`: with Ray's default settings
it replaces 127.0.0.1 by the machine's outward address (for the node and for the head it
dials), and in single-machine mode it refuses to join a node. Run as a script, this file
is one node: it does what `ray start --address ... --block` does once that check passed, as
`ray.cluster_utils.Cluster.add_node` (Ray's own multi-node testing helper) does.

    python _ray_cluster.py HEAD_ADDRESS CPUS    (one node, until SIGTERM)
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path

STARTED_WITHIN = 90.0  # seconds a head or node has to say it started


def loopback_env() -> dict[str, str]:
    """What every process of a loopback cluster, and each of its drivers, reads."""
    return {
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": secrets.token_hex(32),
        "RAY_USAGE_STATS_ENABLED": "0",
        # a raylet waits 30 s by default for the GCS to register it, which a loaded
        # 2-core machine can miss; the head then gives up (seen in CI)
        "RAY_raylet_start_wait_time_s": "90",
    }


class ClusterError(RuntimeError):
    """A head or node did not start; the message holds the end of its log."""


class LoopbackCluster:
    """`ray start --head` with `head_cpus` CPUs (and the custom `resources`) on a free port of
    127.0.0.1; `add_node` joins more. `env` is the whole environment of its processes
    (`loopback_env` in it)."""

    def __init__(
        self, head_cpus: int, env: Mapping[str, str], resources: Mapping[str, float] = {}
    ) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="sounding-ray-"))  # short: sockets live there
        self.address = f"127.0.0.1:{_free_port()}"
        self.started: list[subprocess.Popen[bytes]] = []
        self._env = dict(env)
        head = [
            str(Path(sys.executable).with_name("ray")),
            "start",
            "--head",
            "--block",
            "--node-ip-address=127.0.0.1",
            f"--port={self.address.rpartition(':')[2]}",
            "--include-dashboard=false",
            f"--temp-dir={self.folder}",
            f"--num-cpus={head_cpus}",
            f"--resources={json.dumps(dict(resources))}",
            "--disable-usage-stats",
        ]
        self._start(head, "head", "Ray runtime started")

    def add_node(self, cpus: int) -> None:
        """One more node of `cpus` CPUs, joined once this returns (Ray may take a moment
        more to count it)."""
        node = [sys.executable, str(Path(__file__).resolve()), self.address, str(cpus)]
        self._start(node, f"node{len(self.started)}", "node started")

    def pids(self) -> set[int]:
        """The started processes and every process descended from them."""
        return descendants({p.pid for p in self.started})

    def stop(self) -> None:
        """SIGTERM to each started process (each stops its own), then SIGKILL to whatever
        of them and theirs is left: by process id, never `ray stop` (other people's Ray)."""
        left = self.pids()
        for process in self.started:
            if process.poll() is None:
                process.terminate()
        for process in self.started:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=15)
        for pid in left | self.pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for process in self.started:
            process.wait(timeout=5)
        shutil.rmtree(self.folder, ignore_errors=True)

    def _start(self, argv: list[str], name: str, ready: str) -> None:
        log = self.folder / f"{name}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                argv, stdout=out, stderr=subprocess.STDOUT, env=self._env, start_new_session=True
            )
        self.started.append(process)
        deadline = time.monotonic() + STARTED_WITHIN
        while ready not in log.read_text(errors="replace"):
            if process.poll() is not None or time.monotonic() > deadline:
                shown = log.read_text(errors="replace")[-3000:]
                self.stop()
                raise ClusterError(f"the Ray {name} did not start ({argv[:3]}):\n{shown}")
            time.sleep(0.1)


def descendants(roots: set[int]) -> set[int]:
    """`roots` and every process descended from them, from /proc."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue  # it ended meanwhile
        parents[int(stat.parent.name)] = int(fields[1])
    found, grew = set(roots), True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in found} - found
        found |= more
        grew = bool(more)
    return found


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def _node(head: str, cpus: int) -> None:
    """One node joined to `head`, on 127.0.0.1, until SIGTERM; then its processes stop."""
    from ray._private.node import Node
    from ray._private.parameter import RayParams

    params = RayParams(
        gcs_address=head,
        node_ip_address="127.0.0.1",
        num_cpus=cpus,
        include_log_monitor=False,
        node_manager_port=0,
        min_worker_port=0,
        max_worker_port=0,
        dashboard_agent_listen_port=None,
    )
    node = Node(params, head=False, shutdown_at_exit=True, spawn_reaper=False)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print("node started", flush=True)
    stop.wait()
    node.kill_all_processes(check_alive=False, allow_graceful=True)


if __name__ == "__main__":
    _node(sys.argv[1], int(sys.argv[2]))

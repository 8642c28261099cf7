"""A second Ray node on this machine, joined to the head at argv[1] on 127.0.0.1 with
argv[2] CPUs; it runs until SIGTERM, then stops its processes.

`ray start --address=127.0.0.1:PORT` cannot do this: with its default settings Ray replaces
127.0.0.1 by the machine's outward address (for the node and for the head it dials), and
with RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 (what keeps a node on 127.0.0.1) it refuses to join
a node to a head. This does what `ray start --address ... --block` does once that check
passed, as `ray.cluster_utils.Cluster.add_node` (Ray's own multi-node testing helper) does.
"""

from __future__ import annotations

import signal
import sys
import threading

from ray._private.node import Node
from ray._private.parameter import RayParams


def main(head: str, cpus: int) -> None:
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
    main(sys.argv[1], int(sys.argv[2]))

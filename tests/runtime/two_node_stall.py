"""Two simulated nodes (ray.cluster_utils.Cluster): the plain loop stalls on iteration 2.

A reader on another node has a single channel buffer, so `out = dag.execute(i).get()` blocks
while the previous `out` is still bound. Prints one line per iteration; run by
tests/runtime/test_tracker.py (slow) in a subprocess, since it needs a cluster of its own.
"""

from __future__ import annotations

import os
import sys
import threading

import numpy as np
import ray
from ray.cluster_utils import Cluster
from ray.dag import InputNode
from ray.dag.context import DAGContext
from ray.exceptions import RayChannelTimeoutError


def main() -> int:
    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False},
    )
    cluster.add_node(num_cpus=1, resources={"remote_node": 1})
    ray.init(address=cluster.address, log_to_driver=False, configure_logging=False)

    @ray.remote(resources={"remote_node": 1})
    class Worker:
        def forward(self, step: int) -> np.ndarray:
            return np.full((512, 64), float(step))  # zero-copy, read on the driver's node

    worker = Worker.remote()
    with InputNode() as inp:
        dag = worker.forward.bind(inp)
    DAGContext.get_current().get_timeout = 2
    compiled = dag.experimental_compile()
    out = None
    for iteration in (1, 2, 3):
        try:
            out = compiled.execute(iteration).get()  # the old `out` is alive during this read
        except RayChannelTimeoutError:
            print(f"iteration {iteration} RayChannelTimeoutError", flush=True)
            break
        print(f"iteration {iteration} ok", flush=True)
    del out
    # Teardown after a stall may block (Ray aborts the remote reader): bound it.
    closer = threading.Thread(target=compiled.teardown, daemon=True)
    closer.start()
    closer.join(timeout=20)
    ray.shutdown()
    cluster.shutdown()
    sys.stdout.flush()
    os._exit(0)  # daemon threads of a stalled graph must not hold the interpreter open


if __name__ == "__main__":
    sys.exit(main())

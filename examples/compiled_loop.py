"""Ray's compiled-graph troubleshooting example: `result` is alive while the next read runs."""

import numpy as np
import ray
from ray.dag import InputNode


@ray.remote
class NumPyActor:
    def get_arr(self, _):
        return np.ones((5, 1024))


actor = NumPyActor.remote()
with InputNode() as inp:
    dag = actor.get_arr.bind(inp)
cgraph = dag.experimental_compile()

history = []
for step in range(5):
    result = ray.get(cgraph.execute(step))
    history.append(result.sum())  # a scalar: fine

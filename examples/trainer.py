"""An RL trainer that keeps rollout arrays read with `ray.get` on long-lived objects."""

import numpy as np
import ray


class Trainer:
    buffer: list[np.ndarray]

    def __init__(self, workers) -> None:
        self.workers = workers
        self.buffer = []

    def collect(self) -> None:
        for worker in self.workers:
            rollout: np.ndarray = ray.get(worker.sample.remote())
            self.buffer.append(rollout)

    def latest_weights(self, ref) -> np.ndarray:
        return ray.get(ref)

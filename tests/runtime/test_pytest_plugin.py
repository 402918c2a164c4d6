"""The pytest plugin: ``--shm-track`` and ``@pytest.mark.shm_track`` (real Ray, subprocess)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.ray

TESTS = """
import numpy as np
import pytest
import ray
from ray.dag import InputNode


@pytest.fixture(scope="module")
def compiled():
    ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)

    @ray.remote
    class Model:
        def forward(self, step):
            return np.full((512, 64), float(step))

    with InputNode() as inp:
        dag = Model.remote().forward.bind(inp)
    graph = dag.experimental_compile()
    yield graph
    graph.teardown()
    ray.shutdown()


def keeps(compiled):
    outputs = []
    for step in range(3):
        outputs.append(compiled.execute(step).get())
    outputs.clear()


def copies(compiled):
    return [compiled.execute(step).get().copy() for step in range(3)]


def test_keeps(compiled):
    keeps(compiled)


@pytest.mark.shm_track
def test_marked_keeps(compiled):
    keeps(compiled)


@pytest.mark.shm_track
def test_marked_copies(compiled):
    assert len(copies(compiled)) == 3
"""


def test_marker_and_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_retention=TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=2, failed=1)  # only the marked retention fails
    result.stdout.fnmatch_lines(["*ZeroCopyRetentionError*is still alive*"])
    tracked = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q", "--shm-track")
    tracked.assert_outcomes(passed=1, failed=2)  # now every test is tracked

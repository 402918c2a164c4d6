"""The runtime helpers against real Ray (CPU): real ``ray.get``, a real compiled graph."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from shmlint.runtime import (
    detach_zero_copy,
    detach_zero_copy_from_model_runner_output,
    is_zero_copy,
)
from tests.runtime.outputs import make_output

pytestmark = pytest.mark.ray

# Above Ray's 100 KB inline limit, so the value lives in the shared-memory object store.
BIG = (1024, 64)


def test_object_store_read_is_zero_copy_and_detaches(ray_session: Any) -> None:
    ray = ray_session
    array = ray.get(ray.put(np.ones(BIG)))
    assert array.flags.writeable is False
    assert is_zero_copy(array)
    assert is_zero_copy(array[3:7])  # views keep the Ray buffer alive too

    copied = detach_zero_copy(array)
    assert copied.flags.writeable
    assert not np.shares_memory(copied, array)
    assert not is_zero_copy(copied)
    np.testing.assert_array_equal(copied, array)


def test_object_store_structures_detach(ray_session: Any) -> None:
    ray = ray_session
    value = ray.get(ray.put({"a": np.ones(BIG), "b": [np.zeros(BIG)], "n": 3}))
    assert is_zero_copy(value["a"]) and is_zero_copy(value["b"][0])
    detached = detach_zero_copy(value)
    assert not is_zero_copy(detached["a"]) and not is_zero_copy(detached["b"][0])
    assert detached["a"].flags.writeable and detached["b"][0].flags.writeable


def test_object_store_pandas_and_pyarrow(ray_session: Any) -> None:
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    ray = ray_session
    frame = ray.get(ray.put(pd.DataFrame({"a": np.arange(50_000.0)})))
    assert not all(a.flags.writeable for a in frame._mgr.arrays)
    new_frame = detach_zero_copy(frame)
    assert all(a.flags.writeable for a in new_frame._mgr.arrays)
    assert new_frame.equals(frame)

    table = ray.get(ray.put(pa.table({"a": np.arange(50_000.0)})))
    old = table.column("a").chunks[0].buffers()[1]
    assert not old.is_mutable
    new_table = detach_zero_copy(table)
    new = new_table.column("a").chunks[0].buffers()[1]
    assert new.is_mutable and new.address != old.address
    assert new_table.equals(table)


def test_object_store_pydantic_and_msgspec_records(ray_session: Any) -> None:
    models = pytest.importorskip("tests.runtime.models")
    ray = ray_session
    for record in (models.Batch(tokens=np.ones(BIG)), models.FrozenStep(np.ones(BIG))):
        value = ray.get(ray.put(record))
        assert type(value) is type(record)
        assert not value.tokens.flags.writeable and is_zero_copy(value.tokens)  # as Ray hands it
        detached = detach_zero_copy(value)
        assert type(detached) is type(record) and detached is not value
        assert detached.tokens.flags.writeable and not is_zero_copy(detached.tokens)
        np.testing.assert_array_equal(detached.tokens, value.tokens)
        assert detached.label is value.label  # untouched fields are the same objects
        assert is_zero_copy(value.tokens)  # the value read is not mutated


@pytest.fixture(scope="module")
def output_graph(ray_session: Any) -> Any:
    """A compiled graph whose actor returns a ModelRunnerOutput-like dataclass."""
    ray = ray_session
    from ray.dag import InputNode

    @ray.remote
    class Worker:
        def step(self, rows: int) -> Any:
            return make_output(rows, writeable=True)

    worker = Worker.remote()
    with InputNode() as inp:
        dag = worker.step.bind(inp)
    compiled = dag.experimental_compile()
    yield compiled
    compiled.teardown()


def test_compiled_graph_output_is_zero_copy_and_detaches(output_graph: Any) -> None:
    output = output_graph.execute(2048).get()
    old = output.logprobs
    cu = old.cu_num_generated_tokens
    prompt = output.prompt_logprobs_dict
    assert all(is_zero_copy(old[i]) for i in range(3))
    assert not old.logprobs.flags.writeable

    assert detach_zero_copy_from_model_runner_output(output) is output

    for index in range(3):
        new = output.logprobs[index]
        assert new.flags.writeable and not is_zero_copy(new)
        assert not np.shares_memory(new, old[index])
        np.testing.assert_array_equal(new, old[index])
    assert output.logprobs.cu_num_generated_tokens is cu
    assert output.prompt_logprobs_dict is prompt


def test_detached_outputs_can_be_kept_across_reads(output_graph: Any) -> None:
    """Keeping detached outputs never holds the channel: more reads than buffers succeed."""
    kept = []
    for _ in range(25):  # > the default 10 in-flight buffers
        kept.append(detach_zero_copy_from_model_runner_output(output_graph.execute(512).get()))
    assert all(o.logprobs.logprobs.flags.writeable for o in kept)

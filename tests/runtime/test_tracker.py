"""The compiled-graph stall and the retention tracker, on real Ray (CPU).

One Ray session for the whole test session; each test compiles its own graph on a shared actor
(an actor runs one compiled graph at a time) and tears it down.

No test measures time (durations belong in benchmarks/), so a loaded machine cannot fail them.
The graphs get a generous compiled-graph timeout (``DAGContext.get_timeout``): reads that must
succeed are never cut short. The stall test gives its one blocked read a short timeout of its own
(the stall is permanent, so that timeout always fires). The tracker tests prove a refusal came
*before* the channel read with a spy on the graph's channel reads (`spy_channel_reads`), not with
a clock; the spy also fails them at once if a read the tracker should refuse gets through.
"""

from __future__ import annotations

import asyncio
import gc
import inspect
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from shmlint.runtime import (
    ZeroCopyRetentionError,
    ZeroCopyRetentionWarning,
    detach_zero_copy,
    detach_zero_copy_from_model_runner_output,
    track_retention,
)
from tests.runtime.outputs import make_output

pytestmark = pytest.mark.ray

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def actor(ray_session: Any) -> Any:
    ray = ray_session

    @ray.remote
    class Model:
        def forward(self, step: int) -> Any:
            return np.full((512, 64), float(step))  # 256 KB: shared memory, zero-copy

        def step(self, rows: int) -> Any:
            return make_output(rows, writeable=True)

        def tokens(self, step: int) -> list[int]:
            return [step, step + 1, step + 2]  # a list of ints: copied out of the channel

    return Model.remote()


# Compiled-graph read timeout (s) for the graphs of these tests: far above any read's cost on a
# loaded machine; only reached when a test is wrong (a read that should not block did).
GET_TIMEOUT = 120


@pytest.fixture
def long_get_timeout(ray_session: Any) -> Iterator[None]:
    from ray.dag.context import DAGContext

    context = DAGContext.get_current()
    old = context.get_timeout
    context.get_timeout = GET_TIMEOUT  # read by each graph when it is compiled
    yield
    context.get_timeout = old


class Graphs:
    """Compiles graphs on the shared actor and tears each down at the end of the test."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor
        self.compiled: list[Any] = []

    def compile(self, method: str = "forward", **options: Any) -> Any:
        from ray.dag import InputNode

        with InputNode() as inp:
            dag = getattr(self.actor, method).bind(inp)
        compiled = dag.experimental_compile(**options)
        self.compiled.append(compiled)
        return compiled

    def teardown(self) -> None:
        gc.collect()
        for compiled in self.compiled:
            compiled.teardown()


@pytest.fixture
def graphs(actor: Any, long_get_timeout: None) -> Iterator[Graphs]:
    made = Graphs(actor)
    yield made
    made.teardown()


def spy_channel_reads(compiled: Any, limit: int | None = None) -> list[int]:
    """The execution indices whose results ``compiled`` goes on to read from its channel.

    ``CompiledDAGRef.get`` (and ``ray.get`` of one) reads through ``CompiledDAG._execute_until``:
    the step that waits on the output channel, and so the one a kept value blocks. The spy sits
    on the graph instance, below the tracker's wrappers, so it sees only reads the tracker let
    through. Past ``limit`` reads it fails the test at once, instead of letting a read the
    tracker should have refused wait on the channel.
    """
    reads: list[int] = []
    original = compiled._execute_until

    def execute_until(execution_index: int, *args: Any, **kwargs: Any) -> Any:
        reads.append(execution_index)
        if limit is not None and len(reads) > limit:
            raise AssertionError(f"channel read #{len(reads)} attempted: reads {reads}")
        return original(execution_index, *args, **kwargs)

    compiled._execute_until = execute_until
    return reads


# --- (a) the stall itself -------------------------------------------------------------------


def test_keeping_the_previous_result_stalls_the_channel(graphs: Graphs) -> None:
    from ray.exceptions import RayChannelTimeoutError

    compiled = graphs.compile(_max_inflight_executions=1)
    reads = spy_channel_reads(compiled)
    kept = compiled.execute(0).get()
    # The kept value holds the channel's only buffer, so this read can never finish: its own
    # timeout fires however loaded the machine is (a clock would prove nothing more).
    with pytest.raises(RayChannelTimeoutError):
        compiled.execute(1).get(timeout=1)
    assert reads == [0, 1]  # the second read did wait on the channel
    del kept


def test_kept_ints_do_not_stall_while_a_kept_array_does(graphs: Graphs) -> None:
    """Why shmlint does not report a channel read whose payload is array-free (DESIGN §3):
    a list of ints is deserialised into new objects, so keeping every value holds no buffer."""
    from ray.exceptions import RayChannelTimeoutError

    ints = graphs.compile("tokens", _max_inflight_executions=1)
    # Every value kept across 20 executions of a one-buffer channel. A held buffer would make
    # the second read wait forever; 10 s only bounds a wrong test under heavy load.
    kept = [ints.execute(step).get(timeout=10) for step in range(20)]
    assert kept[19] == [19, 20, 21]
    graphs.compiled.remove(ints)
    ints.teardown()  # an actor runs one compiled graph at a time
    arrays = graphs.compile("forward", _max_inflight_executions=1)
    held = [arrays.execute(0).get()]
    with pytest.raises(RayChannelTimeoutError):
        held.append(arrays.execute(1).get(timeout=1))
    del held


@pytest.mark.parametrize("variant", ["helper", "copy", "del"])
def test_detached_loops_run_100_iterations(graphs: Graphs, variant: str) -> None:
    compiled = graphs.compile(_max_inflight_executions=1)
    kept = []
    for step in range(100):
        if variant == "helper":
            out = detach_zero_copy_from_model_runner_output(compiled.execute(step).get())
        elif variant == "copy":
            out = compiled.execute(step).get().copy()
        else:
            out = compiled.execute(step).get()
            value = float(out[0, 0])
            del out
            out = np.array([value])
        kept.append(out)
    assert float(kept[-1].ravel()[0]) == 99.0


# --- (b) the tracker ------------------------------------------------------------------------


def test_tracker_catches_rays_troubleshooting_example(graphs: Graphs) -> None:
    compiled = graphs.compile()
    reads = spy_channel_reads(compiled, limit=1)
    refs = [compiled.execute(i) for i in range(5)]
    results = []
    with track_retention(), pytest.raises(ZeroCopyRetentionError) as caught:
        for ref in refs:
            result = ray_get(ref)  # each result kept in `result` while the next is read
            results.append(float(result[0, 0]))
    # Refused at the second read, before it touched the channel (no wait for a timeout).
    assert results == [0.0] and reads == [0]
    site = f"{__file__}:{RAY_GET_LINE}"  # both reads happen on the `ray.get` line of `ray_get`
    message = str(caught.value)
    assert f"read at {site} (read #1) is still alive" in message
    assert f"while the compiled-graph read at {site} runs" in message
    del refs, result


def ray_get(ref: Any) -> Any:
    import ray

    return ray.get(ref)


def line_of(function: Any, text: str) -> int:
    """The line number of the first line of ``function`` containing ``text``."""
    lines, first = inspect.getsourcelines(function)
    return first + next(index for index, line in enumerate(lines) if text in line)


RAY_GET_LINE = line_of(ray_get, "ray.get(ref)")


def execute_model(compiled: Any, batch: int) -> Any:
    """vLLM's `_execute_dag` before the fix: the output goes back to the scheduler."""
    refs = [compiled.execute(batch)]
    return refs[0].get()


def test_tracker_catches_the_vllm_shaped_loop(graphs: Graphs) -> None:
    compiled = graphs.compile("step")
    reads = spy_channel_reads(compiled, limit=1)
    scheduler_outputs = []
    with track_retention(), pytest.raises(ZeroCopyRetentionError) as caught:
        for batch in range(1, 5):
            scheduler_outputs.append(execute_model(compiled, batch))  # the scheduler keeps it
    assert len(scheduler_outputs) == 1 and reads == [0]  # the second read never waited
    assert "execute_model" not in str(caught.value)  # sites are file:line
    assert str(caught.value).count(f"{__file__}:") == 2  # the earlier read and this one
    scheduler_outputs.clear()


def test_tracker_catches_a_kept_slice_view(graphs: Graphs) -> None:
    compiled = graphs.compile()
    reads = spy_channel_reads(compiled, limit=1)
    with track_retention(), pytest.raises(ZeroCopyRetentionError):
        out = compiled.execute(0).get()
        head = out[:2]  # a view keeps the buffer alive
        del out
        compiled.execute(1).get()
    assert reads == [0]
    del head


@pytest.mark.parametrize("variant", ["helper", "detach_zero_copy", "copy", "del", "scalar"])
def test_tracker_is_silent_on_detached_variants(graphs: Graphs, variant: str) -> None:
    compiled = graphs.compile("step")
    kept = []
    with track_retention() as tracker:
        for batch in range(1, 21):
            if variant == "helper":
                kept.append(
                    detach_zero_copy_from_model_runner_output(execute_model(compiled, batch))
                )
            elif variant == "detach_zero_copy":
                kept.append(detach_zero_copy(execute_model(compiled, batch)))
            elif variant == "copy":
                kept.append(execute_model(compiled, batch).logprobs.logprobs.copy())
            elif variant == "del":
                out = execute_model(compiled, batch)
                kept.append(out.req_ids)
                del out
            else:
                kept.append(float(execute_model(compiled, batch).logprobs.logprobs.sum()))
    assert tracker.retentions == [] and len(kept) == 20


def test_warn_action_warns_and_restores_ray(graphs: Graphs) -> None:
    import ray
    from ray.experimental.compiled_dag_ref import CompiledDAGRef

    original_get, original_ref_get = ray.get, CompiledDAGRef.get
    compiled = graphs.compile()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with track_retention(action="warn") as tracker:
            first = compiled.execute(0).get()
            second = compiled.execute(1).get()  # 10 buffers: the read itself goes through
    assert any(issubclass(w.category, ZeroCopyRetentionWarning) for w in seen)
    assert len(tracker.retentions) == 1
    assert ray.get is original_get and CompiledDAGRef.get is original_ref_get
    del first, second


def test_ray_is_restored_after_an_exception(ray_session: Any) -> None:
    original = ray_session.get
    with pytest.raises(KeyError), track_retention():
        assert ray_session.get is not original
        raise KeyError("boom")
    assert ray_session.get is original


# --- (c) asyncio ----------------------------------------------------------------------------


def test_asyncio_retention_is_reported_instead_of_hanging(graphs: Graphs) -> None:
    async def loop(compiled: Any) -> None:
        kept = []
        for step in range(3):
            future = await compiled.execute_async(step)
            kept.append(await future)  # kept: the next await would hang forever

    async def guarded() -> None:
        # An asyncio graph is compiled in the event loop that drives it (outside the bound).
        compiled = graphs.compile(enable_asyncio=True, _max_inflight_executions=1)
        with track_retention():
            # Not a time limit on the test: an awaited read has no Ray timeout, so without a
            # bound a tracker that failed to refuse would hang the suite instead of failing.
            await asyncio.wait_for(loop(compiled), timeout=GET_TIMEOUT)

    with pytest.raises(ZeroCopyRetentionError):
        asyncio.run(guarded())


# --- (d) two nodes --------------------------------------------------------------------------


@pytest.mark.slow
def test_two_node_cluster_stalls_on_the_second_iteration() -> None:
    """Across nodes a reader has one buffer: `out = dag.execute(i).get()` stalls at once.

    Runs in a subprocess: it needs a Ray cluster of its own (ray.cluster_utils.Cluster).
    """
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "runtime" / "two_node_stall.py")],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "iteration 1 ok" in proc.stdout
    assert "iteration 2 RayChannelTimeoutError" in proc.stdout


def test_tracking_is_safe_with_threads(ray_session: Any) -> None:
    import threading

    ray = ray_session
    original = ray.get
    refs = [ray.put(np.full((256, 64), float(i))) for i in range(8)]
    errors: list[BaseException] = []

    def reader() -> None:
        try:
            for ref in refs * 5:
                assert ray.get(ref).shape == (256, 64)
        except BaseException as error:  # collected for the assertion below
            errors.append(error)

    with track_retention() as tracker:
        threads = [threading.Thread(target=reader) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert not errors and tracker.retentions == []  # object-store reads never stall
    assert len(tracker.reads) > 0
    assert ray.get is original

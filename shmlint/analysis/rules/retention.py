"""SHM101–SHM107: a value read from Ray shared memory outlives the current iteration."""

from __future__ import annotations

from shmlint.analysis.rules.base import Rule


class ReturnedUndetached(Rule):
    """
    ## What it does
    Reports a value read from Ray shared memory (`ray.get`, a compiled-graph `ref.get()`) that is
    returned without being detached.

    ## Why is this bad?
    Ray returns numpy arrays zero-copy: read-only views of the object store or of the compiled
    graph's channel buffer. The caller — typically a scheduler loop — keeps the returned value
    across iterations. For a compiled graph the buffer's read lock is held until the value dies,
    so a later `execute()` stalls until `RAY_CGRAPH_get_timeout` kills the engine (vLLM issue
    35319); for `ray.get` the object's memory stays pinned.

    ## Example
    ```python
    from ray.dag import CompiledDAG

    def execute_model(forward_dag: CompiledDAG, scheduler_output):
        refs = forward_dag.execute(scheduler_output)
        output = refs[0].get()
        return output
    ```

    ## Use instead
    ```python
    from ray.dag import CompiledDAG
    from shmlint.runtime import detach_zero_copy_from_model_runner_output

    def execute_model(forward_dag: CompiledDAG, scheduler_output):
        refs = forward_dag.execute(scheduler_output)
        output = detach_zero_copy_from_model_runner_output(refs[0].get())
        return output
    ```

    ## Fix safety
    Safe: the fix wraps the read in the detach helper, which copies only read-only arrays and
    returns its argument.

    With `helper-style = "in-place"`, a read hoisted out of `and` / `or` / `if-else` is an
    unsafe fix (the hoisted read would run on every path): `--unsafe-fixes` applies it.

    ## References
    - [Ray Compiled Graph troubleshooting](https://docs.ray.io/en/latest/ray-core/compiled-graph/troubleshooting.html)
    - vLLM issue 35319 and PR 35736
    """

    code = "SHM101"
    name = "returned-undetached"
    summary = "A value read from Ray shared memory is returned without being detached"
    escape = "is returned undetached: the caller keeps its shared-memory buffer alive"


class StoredOnObject(Rule):
    """
    ## What it does
    Reports a value read from Ray shared memory that is stored on an attribute
    (`self.x = …`, `batch.x = …`).

    ## Why is this bad?
    The object outlives the current iteration, and with it the zero-copy view: the compiled
    graph's channel buffer stays locked (stalling later reads), or object-store memory stays
    pinned after the reference is gone.

    ## Example
    ```python
    import ray

    def collect(self, ref):
        self.last = ray.get(ref).logprobs
    ```

    ## Use instead
    ```python
    import ray
    from shmlint.runtime import detach_zero_copy

    def collect(self, ref):
        self.last = detach_zero_copy(ray.get(ref)).logprobs
    ```

    ## Fix safety
    Safe: the read is wrapped in the detach helper.

    With `helper-style = "in-place"`, a read hoisted out of `and` / `or` / `if-else` is an
    unsafe fix (the hoisted read would run on every path): `--unsafe-fixes` applies it.

    ## References
    - [Ray: serialization and zero-copy numpy](https://docs.ray.io/en/latest/ray-core/objects/serialization.html)
    """

    code = "SHM102"
    name = "stored-on-object"
    summary = "A value read from Ray shared memory is stored on an attribute"
    escape = "is stored on an attribute: the object keeps its shared-memory buffer alive"


class StoredInContainer(Rule):
    """
    ## What it does
    Reports a value read from Ray shared memory that goes into a container or channel that
    outlives the iteration: `append`/`extend`/`insert`/`add`/`update`/`setdefault`,
    `c[k] = …`, `put`/`put_nowait`, `set_result`, `heapq.heappush`. A local list counts when it
    later escapes (returned, stored) or when it collects compiled-graph reads across a loop.

    ## Why is this bad?
    Every value kept in the container keeps its zero-copy buffer: compiled-graph reads stall
    once the channel's buffers are all held; object-store reads pin memory.

    ## Example
    ```python
    import ray

    def gather(self, refs):
        kept = []
        for ref in refs:
            kept.append(ray.get(ref))
        self.history = kept
    ```

    ## Use instead
    ```python
    import ray
    from shmlint.runtime import detach_zero_copy

    def gather(self, refs):
        kept = []
        for ref in refs:
            kept.append(detach_zero_copy(ray.get(ref)))
        self.history = kept
    ```

    ## Fix safety
    Safe: the read is wrapped in the detach helper.

    With `helper-style = "in-place"`, a read hoisted out of `and` / `or` / `if-else` is an
    unsafe fix (the hoisted read would run on every path): `--unsafe-fixes` applies it.

    ## References
    - [Ray Compiled Graph troubleshooting](https://docs.ray.io/en/latest/ray-core/compiled-graph/troubleshooting.html)
    """

    code = "SHM103"
    name = "stored-in-container"
    summary = (
        "A value read from Ray shared memory goes into a container that outlives the iteration"
    )
    escape = "goes into a container that outlives the iteration and keeps its buffer alive"


class HeldAcrossRead(Rule):
    """
    ## What it does
    Reports a value read from a compiled graph's channel that is still bound to a local variable
    when the next read in the same loop runs.

    ## Why is this bad?
    A channel buffer's read lock is released only when the last reference to the value read from
    it dies. In `out = dag.execute(i).get()` the old `out` is still alive while the next `get()`
    runs: with one buffer per reader (always, across nodes) that read blocks until
    `RAY_CGRAPH_get_timeout`. This is Ray's own documented hang.

    ## Example
    ```python
    compiled = dag.experimental_compile()
    for i in range(10):
        out = compiled.execute(i).get()
        process(out)
    ```

    ## Use instead
    ```python
    compiled = dag.experimental_compile()
    for i in range(10):
        out = compiled.execute(i).get()
        process(out)
        del out
    ```

    ## Fix safety
    Safe: the fix detaches the read (`out = helper(compiled.execute(i).get())`), so the buffer is
    released as soon as the copy is made.

    With `helper-style = "in-place"`, a read hoisted out of `and` / `or` / `if-else` is an
    unsafe fix (the hoisted read would run on every path): `--unsafe-fixes` applies it.

    ## References
    - [Ray Compiled Graph troubleshooting](https://docs.ray.io/en/latest/ray-core/compiled-graph/troubleshooting.html)
    """

    code = "SHM104"
    name = "held-across-read"
    summary = "A compiled-graph value is still bound when the next read in the loop runs"
    escape = "is still bound when the next read in this loop runs, holding the channel's read lock"


class YieldedUndetached(Rule):
    """
    ## What it does
    Reports a value read from Ray shared memory that is yielded without being detached.

    ## Why is this bad?
    The consumer of a generator decides how long the value lives, usually past the next read.

    ## Example
    ```python
    import ray

    def stream(refs):
        for ref in refs:
            yield ray.get(ref)
    ```

    ## Use instead
    ```python
    import ray
    from shmlint.runtime import detach_zero_copy

    def stream(refs):
        for ref in refs:
            yield detach_zero_copy(ray.get(ref))
    ```

    ## Fix safety
    Safe: the read is wrapped in the detach helper.

    With `helper-style = "in-place"`, a read hoisted out of `and` / `or` / `if-else` is an
    unsafe fix (the hoisted read would run on every path): `--unsafe-fixes` applies it.

    ## References
    - [Ray: serialization and zero-copy numpy](https://docs.ray.io/en/latest/ray-core/objects/serialization.html)
    """

    code = "SHM105"
    name = "yielded-undetached"
    summary = "A value read from Ray shared memory is yielded without being detached"
    escape = "is yielded undetached: the consumer keeps its buffer alive"


class StoredInGlobal(Rule):
    """
    ## What it does
    Reports a value read from Ray shared memory that is assigned to a `global` or `nonlocal`
    variable, or to a class variable.

    ## Why is this bad?
    Such variables live as long as the module, closure or class: the zero-copy buffer is never
    released.

    ## Example
    ```python
    import ray

    CACHE = None

    def load(ref):
        global CACHE
        CACHE = ray.get(ref)
    ```

    ## Use instead
    ```python
    import ray
    from shmlint.runtime import detach_zero_copy

    CACHE = None

    def load(ref):
        global CACHE
        CACHE = detach_zero_copy(ray.get(ref))
    ```

    ## Fix safety
    Safe: the read is wrapped in the detach helper.

    With `helper-style = "in-place"`, a read hoisted out of `and` / `or` / `if-else` is an
    unsafe fix (the hoisted read would run on every path): `--unsafe-fixes` applies it.

    ## References
    - [Ray: serialization and zero-copy numpy](https://docs.ray.io/en/latest/ray-core/objects/serialization.html)
    """

    code = "SHM106"
    name = "stored-in-global"
    summary = (
        "A value read from Ray shared memory is stored in a global, nonlocal or class variable"
    )
    escape = "is stored in a global, nonlocal or class variable that keeps its buffer alive"


class CapturedByClosure(Rule):
    """
    ## What it does
    Reports a value read from Ray shared memory that is captured by a lambda or nested function
    which then escapes (returned, stored, put in a container).

    ## Why is this bad?
    The closure keeps the captured value, and its zero-copy buffer, alive as long as the closure
    lives.

    ## Example
    ```python
    import ray

    def make_callback(ref):
        out = ray.get(ref)
        return lambda: out.sum()
    ```

    ## Use instead
    ```python
    import ray
    from shmlint.runtime import detach_zero_copy

    def make_callback(ref):
        out = detach_zero_copy(ray.get(ref))
        return lambda: out.sum()
    ```

    ## Fix safety
    Safe: the read is wrapped in the detach helper.

    With `helper-style = "in-place"`, a read hoisted out of `and` / `or` / `if-else` is an
    unsafe fix (the hoisted read would run on every path): `--unsafe-fixes` applies it.

    ## References
    - [Ray: serialization and zero-copy numpy](https://docs.ray.io/en/latest/ray-core/objects/serialization.html)
    """

    code = "SHM107"
    name = "captured-by-closure"
    summary = "A value read from Ray shared memory is captured by a closure that escapes"
    escape = "is captured by a closure that escapes and keeps its buffer alive"

"""SHM301: a detach helper misses an array-bearing field of the class it detaches."""

from __future__ import annotations

from shmlint.analysis.rules.base import Rule


class IncompleteDetachHelper(Rule):
    """
    ## What it does
    Reports, at the `def` of a detach helper, each field of the class the helper detaches that
    may hold arrays Ray hands back zero-copy (a numpy / pandas / pyarrow annotation or a
    configured `array-types` name, directly or nested in NamedTuples, dataclasses, `Optional`
    or unions; not torch tensors, which Ray copies unless `RAY_ENABLE_ZERO_COPY_TORCH_TENSORS`
    is set) and that the helper does not detach on every path through it. An early `return`
    before a field is handled misses it; a field known to be `None` on a path
    (`if out.logprobs is None: return`) is not missed there.

    A detach helper is a function named like the bundled helpers, a configured sanitizer
    (`extend-sanitizers`), or any function that copies *read-only* arrays back into fields
    of its parameter (it checks `flags.writeable` or `is_zero_copy`, itself or through a
    module-level function of its module that does, such as a shared `_copy_if_readonly(arr)`);
    its parameter must be annotated with a class of the project (or a list / `Optional` of
    one). A field counts as
    detached on a path when it is assigned (`out.f = …`, `setattr(out, "f", …)`), rebuilt
    (`dataclasses.replace(out, f=…)`, `out._replace(f=…)`), passed to a detach helper, or
    tested by a condition the path did not enter (`if out.f is None`, `if not
    out.f.flags.writeable`, also through locals computed from the field, as in vLLM's own
    `if token_ids_c is token_ids and ...: return`).

    ## Why is this bad?
    Hand-written helpers list fields, and field lists rot: vLLM's
    `detach_zero_copy_from_model_runner_output` had to be extended by hand when
    `routed_experts` was added to `ModelRunnerOutput`, and `sampling_masks` was missed. A missed
    field is still a zero-copy view of the channel buffer after the helper ran, so the engine
    stalls exactly as if the helper had not been called.

    ## Example
    ```python
    from dataclasses import dataclass
    import numpy as np

    @dataclass
    class StepOutput:
        token_ids: np.ndarray
        routed_experts: np.ndarray | None

    def detach_step_output(output: StepOutput) -> None:
        if not output.token_ids.flags.writeable:
            output.token_ids = output.token_ids.copy()
    ```

    ## Use instead
    ```python
    from dataclasses import dataclass
    import numpy as np

    @dataclass
    class StepOutput:
        token_ids: np.ndarray
        routed_experts: np.ndarray | None

    def detach_step_output(output: StepOutput) -> None:
        if not output.token_ids.flags.writeable:
            output.token_ids = output.token_ids.copy()
        if output.routed_experts is not None and not output.routed_experts.flags.writeable:
            output.routed_experts = output.routed_experts.copy()
    ```

    Or call `shmlint.runtime.detach_zero_copy(output)`, which walks every field.

    ## Fix safety
    No automatic fix: which copy a field needs (and whether to rebuild a frozen record) is the
    helper author's call.

    ## References
    - vLLM issue 35319 and PR 35736 (`detach_zero_copy_from_model_runner_output`)
    - [Project-wide analysis](../project-analysis.md)
    """

    code = "SHM301"
    name = "incomplete-detach-helper"
    summary = "A detach helper misses an array-bearing field of the class it detaches"
    escape = "is not detached by the helper"
    fix_safety = "none"

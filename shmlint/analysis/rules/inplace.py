"""SHM201: the result of an in-place detach helper is used."""

from __future__ import annotations

from shmlint.analysis.rules.base import Rule


class InPlaceHelperResult(Rule):
    """
    ## What it does
    Reports a call of a detach helper that detaches *in place* and returns `None` — a project
    function named like the bundled helpers (`detach_zero_copy_from_model_runner_output`,
    `detach_zero_copy`) or a configured sanitizer (`extend-sanitizers`), annotated `-> None`
    or returning no value — whose result is used: assigned, returned, passed on, put in a
    container. Only a call on its own line (`helper(output)`, `await helper(output)`, also in
    a conditional or boolean expression statement: `flag and helper(output)`) is how such a
    helper is meant to be called. Not reported: calls in a lambda (a callback's value is
    usually dropped), calls handed to `asyncio.gather` / `create_task` / `ensure_future` /
    `run_until_complete` and the like (a coroutine function's call gives a coroutine), and a
    coroutine function or a decorated function of the module itself (what its call gives is
    not what its body returns). A configured sanitizer given by qualified name matches only
    that function, not others of its name. Not followed: `self.helper(...)`, and a helper
    re-exported under another name in a file that spells no helper's name.

    The helper may live in another module of the project (vLLM's is in
    `vllm/v1/executor/ray_utils.py`, called from `ray_executor.py`): the project run finds it;
    the flake8 plugin and `--per-file`, which see one module, find only the module's own.

    ## Why is this bad?
    vLLM's own `detach_zero_copy_from_model_runner_output` (and Aphrodite's copy) copies the
    read-only arrays of the output it is given in place and returns `None`, while the bundled
    `shmlint.runtime` helper of the same name returns the output. Written as the bundled one
    is called, `output = detach_zero_copy_from_model_runner_output(refs[0].get())` binds
    `None`: the engine fails on the next attribute access, or, where `None` is a valid value,
    silently drops the step's output.

    ## Example
    ```python
    def detach_zero_copy_from_model_runner_output(output) -> None:
        if not output.logprobs.flags.writeable:
            output.logprobs = output.logprobs.copy()


    def execute_model(refs):
        output = detach_zero_copy_from_model_runner_output(refs[0].get())
        return output
    ```

    ## Use instead
    ```python
    def detach_zero_copy_from_model_runner_output(output) -> None:
        if not output.logprobs.flags.writeable:
            output.logprobs = output.logprobs.copy()


    def execute_model(refs):
        output = refs[0].get()
        detach_zero_copy_from_model_runner_output(output)
        return output
    ```

    Or import the bundled helper, which returns what it detaches, under another name:
    `from shmlint.runtime import detach_zero_copy_from_model_runner_output as detach_output`.

    ## Fix safety
    No automatic fix: the value the call was meant to give is the helper's argument, which
    may be an expression to bind first. `shmlint --fix` never writes such a call itself: in a
    module that binds the helper's name to an in-place helper it imports the bundled one
    under a fresh alias.

    ## References
    - vLLM issue 35319 and PR 35736 (`detach_zero_copy_from_model_runner_output`)
    - [Fixing](../fixing.md)
    """

    code = "SHM201"
    name = "in-place-helper-result"
    summary = "The None of an in-place detach helper is used as its result"
    escape = "is the None an in-place helper returns"
    fix_safety = "none"

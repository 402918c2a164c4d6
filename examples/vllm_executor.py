"""The shape of vLLM 0.19's Ray compiled-graph executor, before the fix of PR 35736.

`shmlint examples/` reports both returns of `execute_model`: the scheduler keeps the returned
`ModelRunnerOutput`, whose logprobs arrays are zero-copy views of the channel buffer.
"""

import ray


class RayDistributedExecutor:
    def _compiled_ray_dag(self, enable_asyncio: bool):
        forward_dag = self._build_dag()
        return forward_dag.experimental_compile(enable_asyncio=enable_asyncio)

    def _init_executor(self) -> None:
        self.forward_dag = self._compiled_ray_dag(enable_asyncio=False)

    def execute_model(self, scheduler_output):
        refs = self.forward_dag.execute(scheduler_output)
        if not self.has_connector:
            output = refs[0].get()
            return output
        outputs = ray.get(refs)
        return self.kv_output_aggregator.aggregate(outputs, output_rank=0)

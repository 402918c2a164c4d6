"""Benchmark the runtime helper against raw ``ndarray.copy()`` at vLLM logprobs sizes.

    python benchmarks/bench_runtime.py [--repeat N]

For each size (rows × 21 logprobs) it times:
- ``noop``: the helper on an output whose arrays are writeable (nothing to copy);
- ``copy``: the helper on an output whose three logprobs arrays are read-only views;
- ``raw``: ``a.copy(); b.copy(); c.copy()`` of the same three arrays (the floor);
and prints µs per call and the ratio copy/raw. Targets: noop ≤ 1 µs, copy ≤ 1.3× raw.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import timeit
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from shmlint.runtime import detach_zero_copy_from_model_runner_output as detach  # noqa: E402

SIZES = (256, 2048, 8192)
TOP_K = 21


class LogprobsLists(NamedTuple):
    logprob_token_ids: np.ndarray[Any, Any]
    logprobs: np.ndarray[Any, Any]
    sampled_token_ranks: np.ndarray[Any, Any]
    cu_num_generated_tokens: list[int] | None


@dataclasses.dataclass
class ModelRunnerOutput:
    """vLLM's ModelRunnerOutput fields (v0.19)."""

    req_ids: list[str]
    req_id_to_index: dict[str, int]
    sampled_token_ids: list[list[int]]
    logprobs: LogprobsLists | None
    prompt_logprobs_dict: dict[str, Any]
    pooler_output: list[Any] | None = None
    kv_connector_output: Any = None
    num_nans_in_logits: dict[str, int] | None = None
    routed_experts: Any = None


def _arrays(rows: int, writeable: bool) -> tuple[np.ndarray[Any, Any], ...]:
    arrays = (
        np.random.randint(0, 32000, (rows, TOP_K), dtype=np.int32),
        np.random.rand(rows, TOP_K).astype(np.float32),
        np.random.randint(0, 100, rows, dtype=np.int32),
    )
    if not writeable:
        for array in arrays:
            array.flags.writeable = False
    return arrays


def _output(rows: int, writeable: bool) -> ModelRunnerOutput:
    ids, logprobs, ranks = _arrays(rows, writeable)
    return ModelRunnerOutput(
        req_ids=[f"r{i}" for i in range(rows)],
        req_id_to_index={f"r{i}": i for i in range(rows)},
        sampled_token_ids=[[i] for i in range(rows)],
        logprobs=LogprobsLists(ids, logprobs, ranks, list(range(rows + 1))),
        prompt_logprobs_dict={},
    )


def _best_us(stmt: Any, setup: Any = None, number: int = 2000, repeat: int = 7) -> float:
    timer = timeit.Timer(stmt, setup=setup) if setup else timeit.Timer(stmt)
    return min(timer.repeat(repeat=repeat, number=number)) / number * 1e6


def bench(repeat: int) -> list[dict[str, float]]:
    rows_out = []
    for rows in SIZES:
        number = max(200, 400_000 // rows)
        noop_output = _output(rows, writeable=True)
        noop = _best_us(lambda: detach(noop_output), number=number, repeat=repeat)

        readonly_lp = _output(rows, writeable=False).logprobs
        assert readonly_lp is not None
        target = _output(rows, writeable=True)

        def copy_call() -> None:
            target.logprobs = readonly_lp  # reset to the read-only arrays, then detach
            detach(target)

        def reset_only() -> None:
            target.logprobs = readonly_lp

        a, b, c = readonly_lp[:3]

        def raw() -> None:
            a.copy()
            b.copy()
            c.copy()

        copy_us = _best_us(copy_call, number=number, repeat=repeat)
        copy_us -= _best_us(reset_only, number=number, repeat=repeat)
        raw_us = _best_us(raw, number=number, repeat=repeat)
        rows_out.append(
            {
                "rows": rows,
                "noop_us": noop,
                "copy_us": copy_us,
                "raw_us": raw_us,
                "ratio": copy_us / raw_us,
            }
        )
    return rows_out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    print(f"numpy {np.__version__}, python {sys.version.split()[0]}")
    print(f"{'size':>10} {'noop µs':>9} {'copy µs':>9} {'raw µs':>9} {'copy/raw':>9}")
    ok = True
    for row in bench(args.repeat):
        size = f"{int(row['rows'])}x{TOP_K}"
        print(
            f"{size:>10} {row['noop_us']:9.2f} {row['copy_us']:9.2f} {row['raw_us']:9.2f} "
            f"{row['ratio']:9.2f}"
        )
        ok &= row["noop_us"] <= 1.0 and row["ratio"] <= 1.3
    print("targets (noop <= 1 us, copy <= 1.3x raw):", "met" if ok else "MISSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())

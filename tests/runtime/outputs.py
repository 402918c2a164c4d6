"""vLLM-shaped output types used by the runtime tests (no vLLM needed)."""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import numpy as np


class LogprobsLists(NamedTuple):
    """Same fields as vLLM's ``LogprobsLists``."""

    logprob_token_ids: np.ndarray[Any, Any]
    logprobs: np.ndarray[Any, Any]
    sampled_token_ranks: np.ndarray[Any, Any]
    cu_num_generated_tokens: list[int] | None


@dataclasses.dataclass
class ModelRunnerOutput:
    """The fields of vLLM's ``ModelRunnerOutput`` that matter here."""

    req_ids: list[str]
    sampled_token_ids: list[list[int]]
    logprobs: Any = None
    prompt_logprobs_dict: dict[str, Any] = dataclasses.field(default_factory=dict)
    routed_experts: Any = None
    sampling_masks: Any = None


def readonly(array: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """A read-only view, as Ray's zero-copy deserialization returns."""
    view = array.view()
    view.flags.writeable = False
    return view


def make_logprobs(rows: int = 4, k: int = 21, *, writeable: bool = False) -> LogprobsLists:
    """A ``LogprobsLists`` of (rows, k) arrays, read-only unless ``writeable``."""
    wrap = (lambda a: a) if writeable else readonly
    return LogprobsLists(
        wrap(np.arange(rows * k, dtype=np.int32).reshape(rows, k)),
        wrap(np.linspace(-5.0, 0.0, rows * k, dtype=np.float32).reshape(rows, k)),
        wrap(np.arange(rows, dtype=np.int32)),
        list(range(rows + 1)),
    )


def make_output(rows: int = 4, *, writeable: bool = False) -> ModelRunnerOutput:
    """A ``ModelRunnerOutput`` with logprobs and a prompt-logprobs dict."""
    return ModelRunnerOutput(
        req_ids=[f"r{i}" for i in range(rows)],
        sampled_token_ids=[[i] for i in range(rows)],
        logprobs=make_logprobs(rows, writeable=writeable),
        prompt_logprobs_dict={"r0": None},
    )

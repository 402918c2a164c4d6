"""``detach_zero_copy_from_model_runner_output``: the seed's semantics, then the extensions."""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import numpy as np
import pytest

from shmlint.runtime import detach_zero_copy_from_model_runner_output as detach
from tests.runtime.outputs import LogprobsLists, ModelRunnerOutput, make_output, readonly


def _assert_detached(new: np.ndarray[Any, Any], old: np.ndarray[Any, Any]) -> None:
    assert new is not old
    assert new.flags.writeable
    np.testing.assert_array_equal(new, old)
    assert not np.shares_memory(new, old)


def test_seed_copies_only_numpy_views() -> None:
    """The shape of vLLM's own unit test for PR 35736."""
    output = make_output()
    old = output.logprobs
    cu, prompt = old.cu_num_generated_tokens, output.prompt_logprobs_dict

    result = detach(output)

    assert result is output
    new = output.logprobs
    assert type(new) is LogprobsLists
    for index in range(3):
        _assert_detached(new[index], old[index])
    assert new.cu_num_generated_tokens is cu
    assert output.prompt_logprobs_dict is prompt


def test_writeable_arrays_are_left_alone() -> None:
    output = make_output(writeable=True)
    old = output.logprobs
    assert detach(output) is output
    assert output.logprobs is old  # not rebuilt when nothing was copied


def test_only_readonly_fields_are_copied() -> None:
    output = make_output(writeable=True)
    ranks = readonly(output.logprobs.sampled_token_ranks)
    output.logprobs = output.logprobs._replace(sampled_token_ranks=ranks)
    ids = output.logprobs.logprob_token_ids
    detach(output)
    assert output.logprobs.logprob_token_ids is ids
    _assert_detached(output.logprobs.sampled_token_ranks, ranks)


def test_none_logprobs_and_none_output() -> None:
    output = ModelRunnerOutput(req_ids=[], sampled_token_ids=[])
    assert detach(output) is output
    assert output.logprobs is None
    assert detach(None) is None


def test_plain_tuple_logprobs() -> None:
    output = make_output()
    old = tuple(output.logprobs)
    output.logprobs = old
    detach(output)
    assert type(output.logprobs) is tuple
    _assert_detached(output.logprobs[0], old[0])
    assert output.logprobs[3] is old[3]


def test_list_and_tuple_of_outputs() -> None:
    outputs = [make_output(), make_output()]
    olds = [o.logprobs for o in outputs]
    assert detach(outputs) is outputs
    for output, old in zip(outputs, olds):
        _assert_detached(output.logprobs.logprobs, old.logprobs)

    pair = (make_output(), make_output())
    old_pair = [o.logprobs for o in pair]
    assert detach(pair) is pair
    for output, old in zip(pair, old_pair):
        _assert_detached(output.logprobs.logprob_token_ids, old.logprob_token_ids)


def test_bare_readonly_array_returns_a_copy() -> None:
    array = readonly(np.ones((3, 4)))
    copied = detach(array)
    _assert_detached(copied, array)
    writeable = np.ones(3)
    assert detach(writeable) is writeable


def test_new_top_level_array_fields_are_detached() -> None:
    """vLLM added ``routed_experts`` and then ``sampling_masks``: no field list to rot."""
    output = make_output()
    experts = readonly(np.arange(12).reshape(3, 4))
    output.routed_experts = experts
    detach(output)
    _assert_detached(output.routed_experts, experts)


class Masks(NamedTuple):
    allowed: np.ndarray[Any, Any]
    count: int


@dataclasses.dataclass
class MaskRecord:
    allowed: np.ndarray[Any, Any]


def test_new_top_level_record_fields_are_detached() -> None:
    output = make_output()
    masks = Masks(readonly(np.zeros(5, dtype=bool)), 5)
    record = MaskRecord(readonly(np.ones(2)))
    output.sampling_masks = masks
    output.routed_experts = record
    detach(output)
    assert type(output.sampling_masks) is Masks
    _assert_detached(output.sampling_masks.allowed, masks.allowed)
    assert output.sampling_masks.count == 5
    _assert_detached(output.routed_experts.allowed, record.allowed)
    assert record.allowed.flags.writeable is False  # the old record was not mutated


def test_prompt_logprobs_dict_is_never_touched() -> None:
    output = make_output()
    inner = readonly(np.ones(3))
    prompt = {"r0": inner}
    output.prompt_logprobs_dict = prompt
    detach(output)
    assert output.prompt_logprobs_dict is prompt
    assert prompt["r0"] is inner


@dataclasses.dataclass(frozen=True)
class FrozenOutput:
    logprobs: Any


def test_frozen_output_is_returned_detached() -> None:
    frozen = FrozenOutput(make_output().logprobs)
    result = detach(frozen)
    assert result is not frozen
    assert result.logprobs.logprobs.flags.writeable
    assert not frozen.logprobs.logprobs.flags.writeable


class SlottedOutput:
    __slots__ = ("logprobs", "extra")

    def __init__(self, logprobs: Any, extra: Any) -> None:
        self.logprobs = logprobs
        self.extra = extra


def test_slotted_plain_class() -> None:
    extra = readonly(np.ones(4))
    output = SlottedOutput(make_output().logprobs, extra)
    assert detach(output) is output
    assert output.logprobs.logprobs.flags.writeable
    _assert_detached(output.extra, extra)


def test_no_broad_except_in_runtime() -> None:
    import importlib
    import inspect
    import pkgutil

    import shmlint.runtime

    names = [info.name for info in pkgutil.iter_modules(shmlint.runtime.__path__)]
    assert {"_arrays", "_detach", "_detacher", "_tracker", "walk"} <= set(names)
    for name in names:
        source = inspect.getsource(importlib.import_module(f"shmlint.runtime.{name}"))
        assert "except Exception" not in source
        assert "except:" not in source
        assert "except BaseException" not in source


@pytest.mark.parametrize("rows", [1, 256])
def test_idempotent(rows: int) -> None:
    output = make_output(rows)
    detach(output)
    first = output.logprobs
    detach(output)
    assert output.logprobs is first


def test_dict_payload_is_detached_in_place() -> None:
    inner = readonly(np.ones(3))
    payload = {"a": inner, "b": [readonly(np.zeros(2))], "n": 1}
    assert detach(payload) is payload
    assert payload["a"].flags.writeable and payload["a"] is not inner
    assert payload["b"][0].flags.writeable

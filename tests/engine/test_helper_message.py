"""A finding's message names the helper its fix calls: by the read's payload, or the configured
one."""

from __future__ import annotations

import dataclasses

from shmlint.analysis.engine import check_text
from shmlint.basics.config import Config

ARRAYS = """import numpy as np
import ray


def fetch(ref) -> np.ndarray:
    return ray.get(ref)
"""
CHANNEL = """import ray


def run(dag):
    return dag.experimental_compile().execute(1).get()
"""


def _hint(text: str, config: Config) -> str:
    (finding,) = check_text(text, "m.py", config).findings
    return finding.message.rpartition("; ")[2]


def test_arrays_name_the_deep_helper() -> None:
    assert _hint(ARRAYS, Config()) == "detach it at the read (copy, or detach_zero_copy)"


def test_a_channel_read_of_unknown_payload_names_vllms_helper() -> None:
    hint = _hint(CHANNEL, Config())
    assert hint == "detach it at the read (copy, or detach_zero_copy_from_model_runner_output)"


def test_a_configured_helper_is_named() -> None:
    config = dataclasses.replace(Config(), helper="mypkg.util:detach", helper_by_payload=False)
    assert _hint(ARRAYS, config) == "detach it at the read (copy, or detach)"

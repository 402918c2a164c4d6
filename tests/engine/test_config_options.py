"""Config keys that change the analysis: extend-sources, extend-sanitizers, array-types,
ref-name-pattern (each shown to change a result)."""

from __future__ import annotations

from typing import Any

from shmlint.analysis.engine import check_text
from shmlint.basics.config import config_from_table


def codes(source: str, **table: Any) -> list[tuple[int, str, str]]:
    config = config_from_table({k.replace("_", "-"): v for k, v in table.items()}, "test", None)
    result = check_text(source, "t.py", config)
    return [(f.line, f.code, f.confidence.value) for f in result.findings]


def test_extend_sources() -> None:
    source = "from mypkg.io import fetch_shared\n\ndef f(key):\n    return fetch_shared(key)\n"
    assert codes(source) == []
    assert codes(source, extend_sources=["mypkg.io.fetch_shared"]) == [(4, "SHM101", "high")]


def test_extend_sanitizers() -> None:
    source = (
        "import numpy as np\nimport ray\nfrom mypkg import detach_all\n\n"
        "def f(ref) -> np.ndarray:\n    return detach_all(ray.get(ref))\n"
    )
    assert codes(source) == [(6, "SHM101", "high")]  # an unknown call passes the value on
    assert codes(source, extend_sanitizers=["mypkg.detach_all"]) == []
    assert codes(source, extend_sanitizers=["detach_all"]) == []


def test_array_types() -> None:
    source = (
        "import ray\nfrom vllm.v1.outputs import ModelRunnerOutput\n\n"
        "def f(ref) -> ModelRunnerOutput:\n    return ray.get(ref)\n"
    )
    assert codes(source) == []  # medium: not shown by default
    assert codes(source, min_confidence="medium") == [(5, "SHM101", "medium")]
    assert codes(source, array_types=["ModelRunnerOutput"]) == [(5, "SHM101", "high")]


def test_ref_name_pattern() -> None:
    source = "import ray\n\ndef f(self):\n    return self.dag_refs[0].get()\n"
    assert codes(source) == []
    assert codes(source, ref_name_pattern=r".*_refs?") == [(4, "SHM101", "high")]


def test_min_confidence_from_config() -> None:
    source = "import ray\n\ndef f(ref):\n    return ray.get(ref)\n"
    assert codes(source) == []
    assert codes(source, min_confidence="medium") == [(4, "SHM101", "medium")]

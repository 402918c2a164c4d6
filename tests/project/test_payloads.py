"""Payload evidence across modules and configurations (DESIGN §3 "Confidence")."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from shmlint.cli import main
from tests.fixture_markers import FIXTURES

PAYLOADS = FIXTURES / "project" / "payloads"


def _findings(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, object]]:
    main(["check", "--no-cache", "--output-format", "json", *args])
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def _at(findings: list[dict[str, object]], path: str, line: int) -> list[dict[str, object]]:
    return [f for f in findings if str(f["path"]).endswith(path) and f["line"] == line]


def test_a_payload_class_that_gains_an_array_field_makes_its_reads_findings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = tmp_path / "payloads"
    shutil.copytree(PAYLOADS, case)
    line = 16  # trainer.py: self.last = ray.get(...rollout.remote(prompt))
    assert "rollout.remote" in (case / "pkg" / "trainer.py").read_text().splitlines()[line - 1]
    assert not _at(_findings(capsys, str(case)), "trainer.py", line)
    records = case / "pkg" / "records.py"
    text = records.read_text().replace(
        "from dataclasses import dataclass\n", "from dataclasses import dataclass\n\nimport numpy\n"
    )
    records.write_text(text + "    logprobs: numpy.ndarray\n")
    (found,) = _at(_findings(capsys, str(case)), "trainer.py", line)
    assert found["code"] == "SHM102" and found["confidence"] == "high"
    assert found["evidence"] == (
        "remote method `RolloutWorker.rollout` returns `Rollout`, which holds arrays (`logprobs`)"
    )


def test_the_actor_class_in_another_module_needs_the_project_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    trainer = PAYLOADS / "pkg" / "trainer.py"
    args = ["--min-confidence", "medium"]
    per_file = _findings(capsys, *args, "--per-file", str(trainer))
    project = _findings(capsys, *args, str(PAYLOADS))
    # On its own the trainer cannot know what the workers return: every read is unknown.
    assert {(f["line"], f["confidence"]) for f in per_file} >= {(13, "medium"), (16, "medium")}
    assert not _at(project, "trainer.py", 13) and not _at(project, "trainer.py", 16)
    (observe,) = _at(project, "trainer.py", 19)
    assert observe["evidence"] == "remote method `RolloutWorker.observe` returns `np.ndarray`"


TORCH = """\
import ray
import torch


@ray.remote
def forward(batch) -> torch.Tensor:
    return torch.zeros(8)


class Driver:
    def step(self, batch):
        self.hidden = ray.get(forward.remote(batch))
"""


def test_torch_tensors_are_copied_unless_zero_copy_torch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "driver.py"
    source.write_text(TORCH)
    assert _findings(capsys, "--min-confidence", "medium", str(source)) == []
    (found,) = _findings(capsys, "--zero-copy-torch", str(source))
    assert found["confidence"] == "high"
    assert found["evidence"] == "remote function `forward` returns `torch.Tensor`"
    (tmp_path / "pyproject.toml").write_text("[tool.shmlint]\nzero-copy-torch = true\n")
    assert len(_findings(capsys, str(source))) == 1
    (tmp_path / "pyproject.toml").write_text("[tool.shmlint]\nzero-copy-torch = 1\n")
    assert main(["check", "--no-cache", str(source)]) == 2
    assert "tool.shmlint.zero-copy-torch must be true or false" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("annotation", "confidence"),
    [
        ('"np.ndarray"', "high"),  # np never imported: matched by its last component
        ('"jax.Array"', "high"),  # jax never imported: only the spelling, `Array`, is left...
        ("jax.Array", "medium"),  # ...imported, it resolves to jax's: no evidence
        ("pa.Table", "high"),
        ("Table", "medium"),  # the module's own class, not pyarrow's
    ],
)
def test_type_names_resolve_through_imports_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], annotation: str, confidence: str
) -> None:
    source = tmp_path / "m.py"
    imports = "import jax\n" if annotation == "jax.Array" else ""
    imports += "import pyarrow as pa\n" if "pa." in annotation else ""
    source.write_text(
        f"import ray\n{imports}\n\nclass Table:\n    rows: list\n\n\n"
        f"def fetch(ref) -> {annotation}:\n    return ray.get(ref)\n"
    )
    (found,) = _findings(capsys, "--min-confidence", "medium", str(source))
    assert found["confidence"] == confidence


@pytest.mark.parametrize(
    "member",
    [
        "    def model(self):\n        return None\n",
        "    @staticmethod\n    def model():\n        return None\n",
    ],
)
def test_a_method_named_as_a_base_s_package_leaves_the_base_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], member: str
) -> None:
    # A class's base `model.records.Base` is resolved in its module: a method of that name
    # is no name of the module's own (a review found the base rated as
    # the module's `model`, so `Out` lost its array field).
    package = tmp_path / "model"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "records.py").write_text(
        "from dataclasses import dataclass\n\nimport numpy as np\n\n\n"
        "@dataclass\nclass Base:\n    arr: np.ndarray\n"
    )
    runner = (
        "import ray\n\nfrom model.records import Base\n\n\nclass Out(Base):\n    pass\n\n\n"
        "class Runner:\n    def fetch(self, ref):\n        out: Out = ray.get(ref)\n"
        "        self.out = out\n"
    )
    (package / "a.py").write_text(runner)
    args = ("--isolated", "--min-confidence", "medium", str(tmp_path))
    before = _findings(capsys, *args)
    assert "holds arrays (`arr`)" in str(before)
    (package / "a.py").write_text(runner + "\n" + member)
    assert _findings(capsys, *args) == before

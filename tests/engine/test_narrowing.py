"""A type test narrows a variable where it holds (StatementMixin.narrow): the cases the
fixture (fixtures/SHM102.py, `Narrowed`) cannot hold — a module shadowing `isinstance`,
tests of other shapes — and the project run, where the class is another module's."""

from __future__ import annotations

from pathlib import Path

import pytest

from shmlint.analysis.engine import check_bytes
from shmlint.basics.config import Config
from shmlint.basics.options import Options
from shmlint.basics.types import Confidence
from shmlint.cli import main

MEDIUM = Config(options=Options(min_confidence=Confidence.MEDIUM))

KEEPER = """\
import ray
{extra}

class Keeper:
    def keep(self, ref):
        out = ray.get(ref)
        if {test}:
            self.kept = out
"""


def _lines(text: str) -> list[int]:
    return [f.line for f in check_bytes(text.encode(), "m.py", MEDIUM).findings]


def test_an_array_free_test_narrows() -> None:
    assert _lines(KEEPER.format(extra="", test="isinstance(out, int)")) == []


@pytest.mark.parametrize(
    ("extra", "test"),
    [
        ("from checks import isinstance", "isinstance(out, int)"),  # not the builtin
        ("", "isinstance(out.value, int)"),  # not a variable
        ("", "isinstance(out)"),  # not a type test (nor valid)
        ("", "isinstance(out, int, str)"),
        ("", "isinstance(obj=out, class_or_tuple=int)"),
        ("", "isinstance(out, int) or out is None"),  # may fail the type test
        ("", "type(out) is int"),
        ("from torch import *", "isinstance(out, Tensor)"),  # unbound: not the builtin's
        ("import numpy as np", "isinstance(out, np.ndarray)"),  # an array type
        ("", "isinstance(out, (int, object))"),
    ],
)
def test_other_tests_narrow_nothing(extra: str, test: str) -> None:
    assert _lines(KEEPER.format(extra=extra, test=test)) == [8]


def test_a_project_class_narrows_nothing_in_the_project_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Project-wide too: a class of scalars may have a subclass holding arrays."""
    (tmp_path / "status.py").write_text(
        "import dataclasses\n\n\n@dataclasses.dataclass\nclass Status:\n    code: int\n"
    )
    (tmp_path / "keeper.py").write_text(
        KEEPER.format(extra="from status import Status", test="isinstance(out, Status)")
    )
    main(["check", "--no-cache", "--min-confidence", "medium", "--exit-zero", str(tmp_path)])
    assert "keeper.py:8:" in capsys.readouterr().out


def test_a_project_class_named_as_a_builtin_narrows_nothing() -> None:
    text = KEEPER.format(extra="", test="isinstance(out, int)").replace(
        "import ray\n", "import ray\n\n\nclass int:\n    data: object\n", 1
    )
    assert _lines(text) == [12]

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
    ],
)
def test_other_tests_narrow_nothing(extra: str, test: str) -> None:
    assert _lines(KEEPER.format(extra=extra, test=test)) == [8]


def test_a_project_class_of_scalars_narrows_in_the_project_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "status.py").write_text(
        "import dataclasses\n\n\n@dataclasses.dataclass\nclass Status:\n    code: int\n"
    )
    (tmp_path / "keeper.py").write_text(
        KEEPER.format(extra="from status import Status", test="isinstance(out, Status)")
    )
    argv = ["check", "--no-cache", "--min-confidence", "medium", "--exit-zero"]
    main([*argv, "--per-file", str(tmp_path)])
    assert "keeper.py:8:" in capsys.readouterr().out  # on its own, `Status` is unknown
    main([*argv, str(tmp_path)])
    assert "keeper.py" not in capsys.readouterr().out

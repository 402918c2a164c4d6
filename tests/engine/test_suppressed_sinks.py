"""A suppressed sink hides no other sink of the same read (as every violation stands on its own
in ruff and flake8): each read is reported at the first sink on a path that the filters keep.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shmlint.cli import main

KEPT_THEN_RETURNED = """import numpy as np
import ray

HISTORY: list = []


def f(ref) -> np.ndarray:
    x: np.ndarray = ray.get(ref)
    HISTORY.append(x){noqa}
    return x
"""


def _codes(args: list[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    main(["check", "--no-cache", *args, "m.py"])
    out = capsys.readouterr().out
    return [line.split(" ")[1] + "@" + line.split(":")[1] for line in out.splitlines()[:-1]]


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "m.py"
    path.write_text(KEPT_THEN_RETURNED.format(noqa=""), encoding="utf-8")
    return path


def test_unsuppressed_read_is_reported_once(
    module: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _codes([], capsys) == ["SHM103@9"]  # its first sink only (DESIGN §3)


@pytest.mark.parametrize("noqa", ["  # noqa: SHM103", "  # noqa", "  # NOQA:SHM1"])
def test_noqa_on_the_first_sink(
    noqa: str, module: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module.write_text(KEPT_THEN_RETURNED.format(noqa=noqa), encoding="utf-8")
    assert _codes([], capsys) == ["SHM101@10"]


def test_noqa_for_another_code_suppresses_nothing(
    module: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module.write_text(KEPT_THEN_RETURNED.format(noqa="  # noqa: SHM101"), encoding="utf-8")
    assert _codes([], capsys) == ["SHM103@9"]


@pytest.mark.parametrize("args", [["--ignore", "SHM103"], ["--select", "SHM101"]])
def test_deselected_first_sink(
    args: list[str], module: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _codes(args, capsys) == ["SHM101@10"]


def test_per_file_ignores(module: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (module.parent / "pyproject.toml").write_text(
        '[tool.shmlint]\nper-file-ignores = { "m.py" = ["SHM103"] }\n', encoding="utf-8"
    )
    assert _codes([], capsys) == ["SHM101@10"]


STORED_THEN_RETURNED = """import numpy as np
import ray


class Worker:
    def step(self, ref) -> np.ndarray:
        out = ray.get(ref)
        self.last = out
        return out
"""


def test_a_sink_below_the_threshold_hides_no_other(
    module: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The store is medium (the read's payload is unknown), the return high (its declared
    type): the default threshold drops the first, so the second is reported."""
    module.write_text(STORED_THEN_RETURNED, encoding="utf-8")
    assert _codes([], capsys) == ["SHM101@9"]
    assert _codes(["--min-confidence", "medium"], capsys) == ["SHM102@8"]

"""SHM201 across modules: a call of another module's in-place detach helper whose result is
used; an edit of the helper's return is followed by a warm run as a run without cache
follows it (the question asked is the helper's payload, whose answer names its return)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.project.merged import file_codes, findings, warm_after_edits, write_tree

IN_PLACE = """\
def detach_zero_copy_from_model_runner_output(output) -> None:
    if not output.logprobs.flags.writeable:
        output.logprobs = output.logprobs.copy()
"""
RETURNING = """\
def detach_zero_copy_from_model_runner_output(output):
    if not output.logprobs.flags.writeable:
        output.logprobs = output.logprobs.copy()
    return output
"""
UNANNOTATED = """\
def detach_zero_copy_from_model_runner_output(output):
    if not output.logprobs.flags.writeable:
        output.logprobs = output.logprobs.copy()
"""
EXECUTOR = """\
from pkg.mod import detach_zero_copy_from_model_runner_output


def finish(output):
    return detach_zero_copy_from_model_runner_output(output)
"""


def _files(helper: str) -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/mod.py": helper, "pkg/executor.py": EXECUTOR}


def test_another_modules_in_place_helper_is_found_project_wide(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_tree(tmp_path, _files(IN_PLACE))
    assert file_codes(findings(tmp_path, capsys, "--no-cache")) == [("executor.py", 5, "SHM201")]
    assert findings(tmp_path, capsys, "--no-cache", "--per-file") == []  # (one module each)


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        (IN_PLACE, RETURNING, []),
        (RETURNING, IN_PLACE, [("executor.py", 5, "SHM201")]),
        (RETURNING, UNANNOTATED, [("executor.py", 5, "SHM201")]),
    ],
    ids=["made-returning", "made-in-place", "made-unannotated-in-place"],
)
def test_an_edit_of_the_helper_is_followed_warm(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    before: str,
    after: str,
    expected: list[tuple[str, int, str]],
) -> None:
    warm = warm_after_edits(tmp_path, capsys, monkeypatch, _files(before), [after])
    assert file_codes(warm) == expected

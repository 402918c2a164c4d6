"""What ``shmlint check`` checks of the paths it is given: each file once."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from tests.cli_run import run

SOURCE = "import numpy as np\nimport ray\n\n\ndef f(ref) -> np.ndarray:\n    return ray.get(ref)\n"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "n.py").write_text(SOURCE)
    return tmp_path


def test_a_file_named_twice_is_checked_once(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "src").mkdir()
    (workdir / "src" / "m.py").write_text(SOURCE)
    (workdir / "link.py").symlink_to("n.py")
    os.link(workdir / "n.py", workdir / "hard.py")
    names = ["n.py", "n.py", "./n.py", str(workdir / "n.py"), "link.py", "hard.py"]
    code, out, _ = run(["check", "--no-cache", *names, "src/m.py", "src"], capsys)
    assert code == 1
    assert [line.split(":")[0] for line in out.splitlines()[:-1]] == ["n.py", "src/m.py"]
    assert out.splitlines()[-1] == "Found 2 findings."


def test_a_file_named_twice_is_fixed_once(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["check", "--no-cache", "--fix", "-j", "1", "n.py", "./n.py", str(workdir / "n.py")]
    code, out, err = run(args, capsys)
    assert (code, err) == (0, "")
    assert out == "Found 1 finding (1 fixed, 0 remaining).\n"
    assert (workdir / "n.py").read_text().count("detach_zero_copy(ray.get(ref))") == 1


def _stdin(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode())))


def test_stdin_filename_reads_stdin_without_a_dash(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "n.py").write_text("x = 1\n")  # (not what is checked)
    _stdin(monkeypatch, SOURCE)
    code, out, err = run(["check", "--no-cache", "--stdin-filename", "s.py"], capsys)
    assert (code, err) == (1, "")
    assert out.startswith("s.py:6:5: SHM101 ") and out.endswith("Found 1 finding.\n")
    _stdin(monkeypatch, SOURCE)
    code, out, err = run(["check", "--no-cache", "--stdin-filename", "s.py", "n.py"], capsys)
    assert code == 1 and out.startswith("s.py:6:5: SHM101 ")
    assert err == "shmlint: warning: ignoring n.py: --stdin-filename reads standard input\n"


def test_stdin_filename_of_a_new_file_takes_its_directory_s_configuration(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "proj" / "pkg").mkdir(parents=True)
    (workdir / "proj" / "pyproject.toml").write_text('[tool.shmlint]\nignore = ["SHM101"]\n')
    for name, code in (("proj/pkg/new.py", 0), ("elsewhere/new.py", 1), ("proj/new.py", 0)):
        _stdin(monkeypatch, SOURCE)
        assert run(["check", "--no-cache", "-", "--stdin-filename", name], capsys)[0] == code


@pytest.fixture
def excluded(workdir: Path) -> Path:
    """A project excluding ``vendored/``, with a file there, in ``build`` (excluded by default)
    and in ``src``."""
    (workdir / "pyproject.toml").write_text('[tool.shmlint]\nextend-exclude = ["vendored/"]\n')
    (workdir / "n.py").unlink()
    for directory in ("vendored/deep", "build", "src"):
        (workdir / directory).mkdir(parents=True)
        (workdir / directory / "a.py").write_text(SOURCE)
    return workdir


def _reported(out: str) -> list[str]:
    return [line.split(":")[0] for line in out.splitlines() if ": SHM" in line]


def test_a_named_excluded_directory_is_walked(
    excluded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["check", "--no-cache", "build", "vendored"], capsys)
    assert (code, err) == (1, "")
    assert _reported(out) == ["build/a.py", "vendored/deep/a.py"]
    (excluded / "build" / ".venv").mkdir()  # (the default excludes apply below it)
    (excluded / "build" / ".venv" / "b.py").write_text(SOURCE)
    assert _reported(run(["check", "--no-cache", "build", "vendored/deep"], capsys)[1]) == [
        "build/a.py",
        "vendored/deep/a.py",
    ]
    assert _reported(run(["check", "--no-cache", "."], capsys)[1]) == ["src/a.py"]


def test_no_python_files_is_a_warning(excluded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (excluded / "empty").mkdir()
    code, out, err = run(["check", "--no-cache", "empty"], capsys)
    assert (code, out) == (0, "All checks passed!\n")
    assert err == "shmlint: warning: No Python files found under the given path(s)\n"


def test_force_exclude_applies_exclusions_to_named_paths(
    excluded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    named = ["vendored/deep/a.py", "src/a.py", "build/a.py", "./vendored/deep/a.py"]
    assert _reported(run(["check", "--no-cache", *named], capsys)[1]) == [
        "build/a.py",
        "src/a.py",
        "vendored/deep/a.py",
    ]
    code, out, _ = run(["check", "--no-cache", "--force-exclude", *named], capsys)
    assert code == 1 and _reported(out) == ["src/a.py"]
    absolute = [str(excluded / "vendored" / "deep"), str(excluded / "build" / "a.py")]
    code, out, err = run(["check", "--no-cache", "--force-exclude", *absolute], capsys)
    assert (code, out) == (0, "All checks passed!\n") and "No Python files found" in err
    assert _reported(run(["check", "--no-cache", "--force-exclude", "."], capsys)[1]) == [
        "src/a.py"
    ]
    fixed = run(["check", "--no-cache", "--fix", "--force-exclude", *named], capsys)[1]
    assert fixed == "Found 1 finding (1 fixed, 0 remaining).\n"
    assert (excluded / "vendored" / "deep" / "a.py").read_text() == SOURCE


def test_the_pre_commit_hooks_force_exclusions() -> None:
    yaml = pytest.importorskip("yaml")

    root = Path(__file__).resolve().parents[2]
    hooks = yaml.safe_load((root / ".pre-commit-hooks.yaml").read_text())
    assert {hook["id"]: hook["entry"] for hook in hooks} == {
        "shmlint": "shmlint check --force-exclude",
        "shmlint-fix": "shmlint check --fix --force-exclude",
    }


def test_exclude_and_extend_exclude_on_the_command_line(
    excluded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    check = ["check", "--no-cache"]
    # --exclude replaces the list (build is no longer skipped), keeping extend-exclude.
    assert _reported(run([*check, "--exclude", "src", "."], capsys)[1]) == ["build/a.py"]
    out = run([*check, "--extend-exclude", "other, src", "."], capsys)[1]
    assert out == "All checks passed!\n"
    assert (
        _reported(run([*check, "--force-exclude", "--extend-exclude", "src", "src"], capsys)[1])
        == []
    )


def test_quiet_prints_the_findings_only(excluded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["check", "--no-cache", "-q", "src"], capsys)
    assert (code, err) == (1, "") and _reported(out) == ["src/a.py"] and len(out.splitlines()) == 1
    (excluded / "empty").mkdir()
    assert run(["check", "--no-cache", "--quiet", "empty"], capsys) == (0, "", "")
    assert run(["check", "--no-cache", "-q", "--fix", "src"], capsys) == (0, "", "")


def test_force_exclude_applies_to_the_stdin_filename(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """As ruff: an editor passes `--force-exclude --stdin-filename vend/x.py`; an excluded
    name is not checked, and `--fix` gives the source back unchanged."""
    (workdir / "pyproject.toml").write_text('[tool.shmlint]\nextend-exclude = ["vend/"]\n')
    args = ["check", "--no-cache", "--force-exclude", "--stdin-filename", "vend/x.py"]
    _stdin(monkeypatch, SOURCE)
    assert run(args, capsys)[0] == 0
    _stdin(monkeypatch, SOURCE)
    assert run([*args, "--fix"], capsys)[1] == SOURCE
    _stdin(monkeypatch, SOURCE)
    assert run(["check", "--no-cache", "--stdin-filename", "vend/x.py"], capsys)[0] == 1


def test_an_absolute_exclude_pattern_below_the_root(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As ruff: `--extend-exclude /abs/gen` excludes `gen/` (it matched nothing)."""
    (workdir / "gen").mkdir()
    (workdir / "gen" / "g.py").write_text(SOURCE)
    code, out, _ = run(["check", "--no-cache", "--extend-exclude", str(workdir / "gen")], capsys)
    assert code == 1 and "gen/g.py" not in out and "n.py" in out

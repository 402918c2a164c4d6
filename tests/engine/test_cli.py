"""The command line: formats, exit codes, config, suppression, discovery, bad input."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import pytest

from shmlint.cli import main
from tests.cli_run import run

RETAINING = """import numpy as np
import ray


def fetch(ref) -> np.ndarray:
    return ray.get(ref)
"""
CLEAN = """import ray


def fetch(ref) -> int:
    return ray.get(ref)
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "bad.py").write_text(RETAINING, encoding="utf-8")
    (tmp_path / "pkg" / "good.py").write_text(CLEAN, encoding="utf-8")
    return tmp_path


def test_text_format_and_exit_code(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["pkg"], capsys)
    assert code == 1
    lines = out.splitlines()
    assert re.fullmatch(
        r"pkg/bad\.py:6:5: SHM101 value read from the object store at line 6 \(the declared "
        r"return type `np\.ndarray` holds arrays\) is returned undetached: .*",
        lines[0],
    )
    assert lines[-1] == "Found 1 finding."


def test_check_subcommand_and_default_path(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["check", "pkg/good.py"], capsys)[0] == 0
    code, out, _ = run([], capsys)  # default: `.`
    assert code == 1 and out.startswith("pkg/bad.py:6:5: SHM101")


def test_exit_zero_and_json(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["--exit-zero", "--output-format", "json", "pkg"], capsys)
    assert code == 0
    (finding,) = json.loads(out)
    assert finding["code"] == "SHM101" and finding["line"] == 6 and finding["column"] == 5
    assert finding["confidence"] == "high" and finding["source"]["kind"] == "object store"


def test_select_ignore_and_min_confidence(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["--ignore", "SHM101", "pkg"], capsys)[0] == 0
    assert run(["--select", "SHM102", "pkg"], capsys)[0] == 0
    assert run(["--select", "SHM1", "pkg"], capsys)[0] == 1
    (project / "pkg" / "medium.py").write_text("import ray\ndef f(r):\n    return ray.get(r)\n")
    assert "medium.py" not in run(["pkg"], capsys)[1]
    assert "medium.py:3:5: SHM101" in run(["--min-confidence", "medium", "pkg"], capsys)[1]


def test_extend_select_and_extend_ignore(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["--select", "SHM102", "--extend-select", "SHM101", "pkg"], capsys)[0] == 1
    assert run(["--extend-ignore", "SHM1", "pkg"], capsys)[0] == 0
    assert run(["--ignore", "SHM102", "--extend-ignore", "SHM101", "pkg"], capsys)[0] == 0
    code, _, err = run(["--extend-select", "SHM109", "pkg"], capsys)
    assert code == 2 and "--extend-select: unknown rule code 'SHM109'" in err
    pyproject = project / "pyproject.toml"
    pyproject.write_text('[tool.shmlint]\nselect = ["SHM102"]\nextend-select = ["SHM101"]\n')
    assert run(["pkg"], capsys)[0] == 1
    assert run(["--select", "SHM102", "pkg"], capsys)[0] == 0  # (replaces both)
    assert run(["--extend-ignore", "SHM101", "pkg"], capsys)[0] == 0
    pyproject.write_text('[tool.shmlint]\nextend-ignore = ["SHM101"]\n')
    assert run(["pkg"], capsys)[0] == 0
    assert run(["--extend-select", "SHM101", "pkg"], capsys)[0] == 0  # (still ignored)
    pyproject.write_text('[tool.shmlint]\nextend-ignore = ["SHM9"]\n')
    code, _, err = run(["pkg"], capsys)
    assert code == 2 and "tool.shmlint.extend-ignore: unknown rule code 'SHM9'" in err


def test_noqa(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = project / "pkg" / "bad.py"
    path.write_text(RETAINING.replace("ray.get(ref)\n", "ray.get(ref)  # noqa: SHM101\n"))
    assert run(["pkg"], capsys)[0] == 0
    path.write_text(RETAINING.replace("ray.get(ref)\n", "ray.get(ref)  # noqa\n"))
    assert run(["pkg"], capsys)[0] == 0
    path.write_text(RETAINING.replace("ray.get(ref)\n", "ray.get(ref)  # noqa: SHM102,E501\n"))
    assert run(["pkg"], capsys)[0] == 1


def test_config_from_pyproject(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.shmlint]\nper-file-ignores = { "pkg/bad.py" = ["SHM101"] }\n'
    )
    assert run(["pkg"], capsys)[0] == 0
    assert run(["--isolated", "pkg"], capsys)[0] == 1
    (project / "pyproject.toml").write_text('[tool.shmlint]\nextend-exclude = ["pkg/bad.py"]\n')
    assert run(["pkg"], capsys)[0] == 0
    assert run(["pkg/bad.py"], capsys)[0] == 1  # a file named explicitly is always checked


def test_config_found_by_walking_up(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "pyproject.toml").write_text('[tool.shmlint]\nignore = ["SHM101"]\n')
    monkeypatch.chdir(project / "pkg")
    assert run(["bad.py"], capsys)[0] == 0


@pytest.mark.parametrize(
    ("table", "key"),
    [
        ("bogus = 1", "tool.shmlint.bogus"),
        ('select = "SHM101"', "tool.shmlint.select"),
        ('select = ["E501"]', "tool.shmlint.select"),
        ('min-confidence = "low"', "tool.shmlint.min-confidence"),
        ('helper-style = "inline"', "tool.shmlint.helper-style"),
        ('helper = "no colon"', "tool.shmlint.helper"),
        ('ref-name-pattern = "("', "tool.shmlint.ref-name-pattern"),
        ("per-file-ignores = 3", "tool.shmlint.per-file-ignores"),
    ],
)
def test_bad_config_is_exit_2_naming_the_key(
    project: Path, capsys: pytest.CaptureFixture[str], table: str, key: str
) -> None:
    (project / "pyproject.toml").write_text(f"[tool.shmlint]\n{table}\n")
    code, out, err = run(["pkg"], capsys)
    assert code == 2
    assert key in err and "pyproject.toml" in err
    assert "Traceback" not in err


def test_explicit_config_file(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = project / "other.toml"
    config.write_text('[tool.shmlint]\nignore = ["SHM1"]\n')
    assert run(["--config", str(config), "pkg"], capsys)[0] == 0
    code, _, err = run(["--config", "missing.toml", "pkg"], capsys)
    assert code == 2 and "missing.toml" in err


def test_missing_path_is_exit_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["nope.py"], capsys)
    assert code == 2 and "nope.py" in err


def test_stdin(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(RETAINING.encode())))
    code, out, _ = run(["-", "--stdin-filename", "pkg/from_stdin.py"], capsys)
    assert code == 1 and out.startswith("pkg/from_stdin.py:6:5: SHM101")


def test_statistics(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pkg" / "bad2.py").write_text(RETAINING)
    code, out, _ = run(["--statistics", "pkg"], capsys)
    assert code == 1
    assert re.search(r"^\s+2\tSHM101\t\[\*\] returned-undetached$", out, re.M)
    # Beside json on stdout, on stderr: stdout stays one document.
    code, out, err = run(["--statistics", "--output-format", "json", "pkg"], capsys)
    assert len(json.loads(out)) == 2
    assert re.search(r"^\s+2\tSHM101\t\[\*\] returned-undetached$", err, re.M)


def test_walk_skips_vcs_venv_caches_and_build(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for skipped in (".git", ".venv", "__pycache__", "build", "node_modules", "x.egg-info"):
        (project / "pkg" / skipped).mkdir()
        (project / "pkg" / skipped / "kept.py").write_text(RETAINING)
    out = run(["pkg"], capsys)[1]
    assert "kept.py" not in out


def test_bad_files_are_shm001_and_the_run_goes_on(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "pkg" / "syntax.py").write_text("import ray\ndef f(:\n    pass\n")
    (project / "pkg" / "latin.py").write_bytes(b"import ray\nname = '\xe9t\xe9'\n")
    (project / "pkg" / "dir.py").mkdir()
    code, out, err = run(["pkg"], capsys)
    assert code == 1 and not err
    assert re.search(r"^pkg/syntax\.py:2:\d+: SHM001 cannot parse the file", out, re.M)
    assert re.search(r"^pkg/latin\.py:1:1: SHM001 cannot decode the file", out, re.M)
    assert "pkg/bad.py:6:5: SHM101" in out  # the rest of the run went on
    assert "dir.py" not in out  # a directory named *.py is walked, not read


def test_pep263_cookie_is_honoured(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = "# -*- coding: latin-1 -*-\n" + RETAINING.replace("def fetch", "# \xe9\ndef fetch")
    (project / "pkg" / "bad.py").write_bytes(source.encode("latin-1"))
    out = run(["pkg"], capsys)[1]
    assert "pkg/bad.py:8:5: SHM101" in out


def test_non_ascii_columns_are_characters(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "pkg" / "bad.py").write_text(
        "import ray\nimport numpy as np\ndef f(r) -> np.ndarray:\n    é = 1; return ray.get(r)\n",
        encoding="utf-8",
    )
    out = run(["pkg"], capsys)[1]
    assert "pkg/bad.py:4:12: SHM101" in out


def test_rules_and_explain(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["rules"], capsys)
    assert code == 0 and "SHM104  held-across-read" in out
    code, out, _ = run(["explain", "shm101"], capsys)
    assert code == 0 and "## Why is this bad?" in out
    assert run(["explain", "SHM999"], capsys)[0] == 2


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["--version"], capsys)[0] == 0


def test_exclude_patterns_relative_to_the_project_root(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "gen").mkdir()
    (project / "gen" / "out.py").write_text(RETAINING)
    (project / "top.py").write_text(RETAINING)
    (project / "pyproject.toml").write_text(
        '[tool.shmlint]\nextend-exclude = ["gen/", "top.py", "pkg/b*.py"]\n'
    )
    code, out, _ = run(["."], capsys)
    assert code == 0, out
    assert run(["--isolated", "."], capsys)[0] == 1


@pytest.mark.parametrize(
    ("args", "usage"),
    [
        (["check", "--bogus", "a.py"], "usage: shmlint check [-h]"),
        (["--bogus", "a.py"], "usage: shmlint check [-h]"),  # (`check` is the default)
        (["clean", "--bogus"], "usage: shmlint clean [-h]"),
        (["baseline", "--write", "b.json", "--bogus"], "usage: shmlint baseline [-h]"),
    ],
)
def test_a_bad_option_shows_its_command_s_usage(
    args: list[str], usage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith(usage) and "unrecognized arguments: --bogus" in err

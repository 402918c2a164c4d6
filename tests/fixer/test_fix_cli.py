"""``shmlint --fix`` / ``--diff`` on files: what is written, and what never is."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from shmlint.basics.config import Config
from shmlint.cli.fixes import Fixed
from shmlint.cli.inputs import Checked
from tests.cli_run import run

# A model-runner output (a class with a `logprobs` field): the fix keeps vLLM's helper for it.
RETAINING = (
    "import numpy as np\nimport ray\n\n\nclass Output:\n    logprobs: np.ndarray\n\n\n"
    "def fetch(ref) -> Output:\n    return ray.get(ref)\n"
)
WRAPPED = "detach_zero_copy_from_model_runner_output(ray.get(ref))"
IMPORT = "from shmlint.runtime import detach_zero_copy_from_model_runner_output"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_fix_rewrites_and_summarises(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = workdir / "a.py"
    path.write_text(RETAINING)
    code, out, _ = run(["--fix", "a.py"], capsys)
    assert code == 0
    assert out.strip().splitlines()[-1] == "Found 1 finding (1 fixed, 0 remaining)."
    text = path.read_text()
    assert WRAPPED in text and text.count(IMPORT) == 1
    assert run(["a.py"], capsys)[0] == 0  # clean afterwards
    code, out, _ = run(["--fix", "a.py"], capsys)  # idempotent
    assert code == 0 and path.read_text() == text


def test_check_marks_fixable_findings(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "a.py").write_text(RETAINING)
    out = run(["a.py"], capsys)[1]
    assert out.splitlines()[0].endswith(" [*]")
    assert "\t[*] returned-undetached" in run(["--statistics", "a.py"], capsys)[1]


def test_diff_writes_nothing(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = workdir / "a.py"
    path.write_text(RETAINING)
    code, out, err = run(["--diff", "a.py"], capsys)
    assert code == 1
    assert out.startswith("--- a.py\n+++ a.py\n")
    assert f"+    return {WRAPPED}\n" in out and "-    return ray.get(ref)\n" in out
    assert path.read_text() == RETAINING
    assert "1 would be fixed" in err
    (workdir / "b.py").write_text("import ray\n")
    assert run(["--diff", "b.py"], capsys)[0] == 0


def test_unparseable_file_is_never_written(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = workdir / "bad.py"
    data = b"import ray\ndef f(:\n    return ray.get(x)\n"
    path.write_bytes(data)
    code, out, _ = run(["--fix", "bad.py"], capsys)
    assert code == 1 and "SHM001" in out
    assert path.read_bytes() == data


def test_mode_encoding_newlines_and_bom_are_kept(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    latin = workdir / "latin.py"
    latin.write_bytes(("# -*- coding: latin-1 -*-\n# café\n" + RETAINING).encode("latin-1"))
    os.chmod(latin, 0o750)
    crlf = workdir / "crlf.py"
    crlf.write_bytes(RETAINING.replace("\n", "\r\n").encode())
    bom = workdir / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbf" + RETAINING.encode())
    tabs = workdir / "tabs.py"
    tabs.write_bytes(RETAINING.replace("    return", "\treturn").encode())
    assert run(["--fix", "."], capsys)[0] == 0
    assert stat.S_IMODE(latin.stat().st_mode) == 0o750
    assert "café" in latin.read_bytes().decode("latin-1") and WRAPPED in latin.read_bytes().decode(
        "latin-1"
    )
    assert b"\r\n" in crlf.read_bytes() and b"\n" not in crlf.read_bytes().replace(b"\r\n", b"")
    assert bom.read_bytes().startswith(b"\xef\xbb\xbf") and WRAPPED.encode() in bom.read_bytes()
    assert f"\treturn {WRAPPED}".encode() in tabs.read_bytes()
    assert not list(workdir.glob(".*.shmlint"))  # no temporary file left behind


def test_positions_on_tricky_lines(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = """import functools
import numpy as np
import ray


@functools.lru_cache
def decorated(ref) -> np.ndarray:
    return ray.get(ref)


def non_ascii(ref) -> np.ndarray:
    label = "é→"; return ray.get(ref)


def multiline(ref) -> np.ndarray:
    return ray.get(
        ref,
        timeout=3,
    )


def fstring(ref) -> tuple[str, np.ndarray]:
    return (f"{'é'} {ref}", ray.get(ref))
"""
    path = workdir / "tricky.py"
    path.write_text(source, encoding="utf-8")
    assert run(["--fix", "tricky.py"], capsys)[0] == 0
    text = path.read_text(encoding="utf-8")
    assert text.count("detach_zero_copy(ray.get(") == 4  # plain arrays: the deep helper
    assert '    label = "é→"; return detach_zero_copy(ray.get(ref))' in text
    assert "@functools.lru_cache\ndef decorated" in text


def test_fix_from_stdin(
    workdir: Path, capsys: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "shmlint", "--fix", "-", "--stdin-filename", "x.py"],
        input=RETAINING.encode(),
        capture_output=True,
        cwd=workdir,
    )
    assert proc.returncode == 0
    assert WRAPPED.encode() in proc.stdout and IMPORT.encode() in proc.stdout
    assert b"1 fixed" in proc.stderr


def test_unsafe_fixes_need_the_flag(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "pyproject.toml").write_text(
        '[tool.shmlint]\nhelper-style = "in-place"\nhelper = "mypkg.utils:detach"\n'
    )
    path = workdir / "a.py"
    source = RETAINING.replace("return ray.get(ref)", "return cache or ray.get(ref)")
    path.write_text(source)
    code, out, _ = run(["--fix", "a.py"], capsys)
    assert code == 1 and path.read_text() == source
    assert "1 more fixable with --fix --unsafe-fixes" in run(["a.py"], capsys)[1]
    assert run(["--fix", "--unsafe-fixes", "a.py"], capsys)[0] == 0
    assert (
        "    output = ray.get(ref)\n    detach(output)\n    return cache or output\n"
        in path.read_text()
    )


@pytest.mark.parametrize(
    ("prelude", "expect_import"),
    [
        (
            "from shmlint.runtime import detach_zero_copy\n",
            "from shmlint.runtime import "
            "detach_zero_copy_from_model_runner_output, detach_zero_copy",
        ),
        ("def detach_zero_copy_from_model_runner_output(x):\n    return x\n", None),
        ("from shmlint.runtime import detach_zero_copy_from_model_runner_output\n", IMPORT),
    ],
)
def test_imports_are_merged_or_skipped(
    workdir: Path, capsys: pytest.CaptureFixture[str], prelude: str, expect_import: str | None
) -> None:
    path = workdir / "a.py"
    path.write_text(prelude + RETAINING)
    assert run(["--fix", "a.py"], capsys)[0] == 0
    text = path.read_text()
    assert WRAPPED in text
    if expect_import is None:
        assert IMPORT not in text
    else:
        assert expect_import in text and text.count("from shmlint.runtime import") == 1


ALIASED = "shmlint_detach_zero_copy_from_model_runner_output"
ALIAS_IMPORT = (
    "from shmlint.runtime import detach_zero_copy_from_model_runner_output as "
    "shmlint_detach_zero_copy_from_model_runner_output"
)


@pytest.mark.parametrize(
    "prelude",
    [
        # vLLM's and Aphrodite's own helper detaches in place and returns None: wrapping a
        # read with it would bind None.
        "from vllm.v1.executor.ray_utils import detach_zero_copy_from_model_runner_output\n",
        "def detach_zero_copy_from_model_runner_output(output) -> None:\n    output.x = 1\n",
        "def detach_zero_copy_from_model_runner_output(output):\n    output.x = 1\n    return\n",
        "import detach_zero_copy_from_model_runner_output\n",
        "detach_zero_copy_from_model_runner_output = None\n",
        "try:\n"
        "    from vllm.v1.executor.ray_utils import detach_zero_copy_from_model_runner_output\n"
        "except ImportError:\n    detach_zero_copy_from_model_runner_output = None\n",
        "if X:\n    def detach_zero_copy_from_model_runner_output(output) -> None:\n        pass\n",
        "X = 1\nfrom vllm.v1.executor.ray_utils import *\n",
        "async def detach_zero_copy_from_model_runner_output(output):\n    return output\n",
        "@cache\ndef detach_zero_copy_from_model_runner_output(output):\n    return output\n",
    ],
    ids=[
        "vllm-import",
        "in-place-annotated",
        "in-place-bare-return",
        "a-module",
        "a-variable",
        "in-a-try",
        "in-an-if",
        "a-star-import",
        "a-coroutine",
        "decorated",
    ],
)
def test_a_name_bound_otherwise_is_not_called_by_the_fix(
    workdir: Path, capsys: pytest.CaptureFixture[str], prelude: str
) -> None:
    path = workdir / "a.py"
    path.write_text(prelude + RETAINING)
    assert run(["--fix", "a.py"], capsys)[0] == 0
    text = path.read_text()
    assert f"{ALIASED}(ray.get(ref))" in text and ALIAS_IMPORT in text
    assert prelude in text  # (the module's own binding is left as it was)
    (workdir / "b.py").write_text(f"{prelude}\n{ALIASED} = 1\n" + RETAINING)
    run(["--fix", "b.py"], capsys)
    assert f"{ALIASED}_1(ray.get(ref))" in (workdir / "b.py").read_text()


def test_a_binding_inside_the_function_is_seen(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = workdir / "a.py"
    inner = "    from vllm.v1.executor.ray_utils import detach_zero_copy_from_model_runner_output\n"
    path.write_text(
        RETAINING.replace("    return ray.get(ref)\n", inner + "    return ray.get(ref)\n")
    )
    assert run(["--fix", "a.py"], capsys)[0] == 0
    assert f"{ALIASED}(ray.get(ref))" in path.read_text()


def test_a_second_fix_reuses_the_alias(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = workdir / "a.py"
    prelude = "from vllm.v1.executor.ray_utils import detach_zero_copy_from_model_runner_output\n"
    path.write_text(prelude + RETAINING)
    run(["--fix", "a.py"], capsys)
    path.write_text(path.read_text() + "\n\ndef fetch2(ref) -> Output:\n    return ray.get(ref)\n")
    assert run(["--fix", "a.py"], capsys)[0] == 0
    text = path.read_text()
    assert text.count(f"{ALIASED}(ray.get(ref))") == 2 and f"{ALIASED}_1" not in text


def test_an_aliased_import_of_the_helper_is_called_by_its_alias(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = workdir / "a.py"
    path.write_text(f"{IMPORT} as detach_output\n" + RETAINING)
    assert run(["--fix", "a.py"], capsys)[0] == 0
    text = path.read_text()
    assert "detach_output(ray.get(ref))" in text and text.count("import") == 3


def test_a_relative_import_of_the_configured_helper_is_called(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "pyproject.toml").write_text('[tool.shmlint]\nhelper = "pkg.utils:detach"\n')
    (workdir / "pkg").mkdir()
    (workdir / "pkg" / "__init__.py").write_text("")
    (workdir / "pkg" / "utils.py").write_text("def detach(value):\n    return value\n")
    path = workdir / "pkg" / "a.py"
    path.write_text("from .utils import detach\n" + RETAINING)
    assert run(["--fix", "pkg/a.py"], capsys)[0] == 0  # (the re-check resolves `.utils`)
    text = path.read_text()
    assert "return detach(ray.get(ref))" in text and "shmlint_" not in text


@pytest.mark.parametrize(
    "prelude",
    [
        "detach_zero_copy_from_model_runner_output = None\n",
        "def detach_zero_copy_from_model_runner_output(output):\n    return output.copy()\n",
    ],
    ids=["a-variable", "a-copying-function"],
)
def test_the_in_place_style_calls_only_an_in_place_helper(
    workdir: Path, capsys: pytest.CaptureFixture[str], prelude: str
) -> None:
    (workdir / "pyproject.toml").write_text('[tool.shmlint]\nhelper-style = "in-place"\n')
    path = workdir / "a.py"
    path.write_text(prelude + RETAINING)
    run(["--fix", "a.py"], capsys)
    text = path.read_text()
    assert f"    {ALIASED}(output)\n" in text and ALIAS_IMPORT in text


def test_libcst_codemod_runner(workdir: Path) -> None:
    path = workdir / "a.py"
    path.write_text(RETAINING)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "libcst.tool",
            "codemod",
            "-x",
            "shmlint.codemod.DetachZeroCopy",
            "--no-format",
            "a.py",
        ],
        capture_output=True,
        text=True,
        cwd=workdir,
    )
    assert proc.returncode == 0, proc.stderr
    assert WRAPPED in path.read_text()


def test_check_never_imports_libcst() -> None:
    code = (
        "import sys\nfrom shmlint.cli import main\n"
        "main(['check', '--isolated', 'examples'])\n"
        "print('libcst' in sys.modules)\n"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root)
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_writes_go_through_a_temporary_file_and_a_rename(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shmlint.fixer import write

    path = workdir / "a.py"
    path.write_text(RETAINING)
    seen: list[tuple[str, str, str]] = []
    real_replace = os.replace

    def spy(src: str, dst: str) -> None:
        # At the moment of the rename the target still holds the old text in full.
        seen.append((str(Path(src).parent), Path(dst).read_text(), Path(src).read_text()))
        real_replace(src, dst)

    monkeypatch.setattr(write.os, "replace", spy)
    write.write_atomically(path, b"new = 1\n")
    ((directory, old, new),) = seen
    assert directory == str(workdir) and old == RETAINING and new == "new = 1\n"
    assert path.read_text() == "new = 1\n"


def test_a_failed_write_leaves_the_file_and_no_temporary(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shmlint.fixer import write

    path = workdir / "a.py"
    path.write_text(RETAINING)

    def broken(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(write.os, "replace", broken)
    with pytest.raises(OSError):
        write.write_atomically(path, b"new = 1\n")
    assert path.read_text() == RETAINING
    assert sorted(p.name for p in workdir.iterdir()) == ["a.py"]


def test_unwritable_directory_is_reported_not_raised(
    workdir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from shmlint.fixer import write

    path = workdir / "a.py"
    path.write_text(RETAINING)

    def refuse(*args: object, **kwargs: object) -> tuple[int, str]:
        raise PermissionError(13, "Permission denied")

    # No temporary file beside it: the file itself is writable, so it is edited in place (as
    # ruff does), not refused.
    monkeypatch.setattr(write.tempfile, "mkstemp", refuse)
    code, out, err = run(["--fix", "a.py"], capsys)
    assert code == 0 and "(1 fixed, 0 remaining)" in out
    assert "detach_zero_copy" in path.read_text()
    # And when the file cannot be written either: reported, not raised, the file unchanged.
    path.write_text(RETAINING)
    monkeypatch.setattr(write, "write_in_place", refuse)
    code, out, err = run(["--fix", "a.py"], capsys)
    assert code == 1
    assert "a.py: not fixed: Permission denied" in err
    assert "(0 fixed, 1 remaining)" in out
    assert path.read_text() == RETAINING


@pytest.mark.parametrize(
    ("source", "config", "call"),
    [
        pytest.param(
            RETAINING, "", "detach_zero_copy_from_model_runner_output(", id="model-output"
        ),
        pytest.param(
            "import numpy as np\nimport ray\n\n\ndef f(ref) -> np.ndarray:\n"
            "    return ray.get(ref)\n",
            "",
            "detach_zero_copy(",
            id="arrays",
        ),
        pytest.param(
            "def f(dag):\n    return dag.experimental_compile().execute(1).get()\n",
            "",
            "detach_zero_copy_from_model_runner_output(",
            id="channel-unknown",
        ),
        pytest.param(
            "import numpy as np\nimport ray\n\n\ndef f(ref) -> np.ndarray:\n"
            "    return ray.get(ref)\n",
            '[tool.shmlint]\nhelper = "mypkg.util:detach"\n',
            "detach(",
            id="configured",
        ),
    ],
)
def test_the_fix_picks_the_helper_by_payload(
    workdir: Path, capsys: pytest.CaptureFixture[str], source: str, config: str, call: str
) -> None:
    if config:
        (workdir / "pyproject.toml").write_text(config)
    path = workdir / "a.py"
    path.write_text(source)
    assert run(["--fix", "a.py"], capsys)[0] == 0
    text = path.read_text()
    wrapped = [line for line in text.splitlines() if "return " in line and "(" in line]
    assert wrapped and wrapped[-1].strip().startswith(f"return {call}"), text
    assert run(["a.py"], capsys)[0] == 0  # nothing left to fix


def _tree(workdir: Path, count: int) -> list[str]:
    """``count`` files with a fix each, and one without findings after the second."""
    names = []
    for index in range(count):
        name = f"m{index}.py"
        (workdir / name).write_text(RETAINING.replace("Output", f"Output{index}"))
        names.append(name)
    (workdir / "quiet.py").write_text("x = 1\n")
    return [*names[:2], "quiet.py", *names[2:]]


@pytest.mark.parametrize("mode", ["--diff", "--fix"])
def test_fixes_in_a_pool_are_the_fixes_in_one_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """Several files with fixes are fixed in a pool of processes: the diffs, messages and the
    files written are the one-process run's, in input order."""
    outputs = []
    for jobs in ("1", "2"):
        workdir = tmp_path / jobs
        workdir.mkdir()
        monkeypatch.chdir(workdir)
        names = _tree(workdir, 5)
        code, out, err = run([mode, "-j", jobs, *names], capsys)
        written = {name: (workdir / name).read_text() for name in names}
        outputs.append((code, out, err, written))
    assert outputs[0] == outputs[1]
    code, out, err, written = outputs[0]
    if mode == "--diff":
        assert [line.split()[1] for line in out.splitlines() if line.startswith("+++")] == [
            "m0.py",
            "m1.py",
            "m2.py",
            "m3.py",
            "m4.py",
        ]
    else:
        assert all(WRAPPED in written[f"m{i}.py"] for i in range(5))


def _where(item: Checked, diff: bool, unsafe: bool, config: Config) -> Fixed:
    """A stand-in for ``fixes.fix_one``: the input's path, and the process it ran in."""
    from shmlint.cli.fixes import Fixed

    return Fixed([], item.result.path, (str(os.getpid()),))


def test_fix_all_runs_the_files_with_fixes_in_other_processes(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shmlint.cli import fixes
    from shmlint.cli.command import build_parser
    from shmlint.cli.inputs import collect

    names = _tree(workdir, 4)
    args = build_parser().parse_args(["check", *names])
    checked: list[Checked] = collect(args, Config(root=workdir))
    monkeypatch.setattr(fixes, "fix_one", _where)
    done = list(fixes.fix_all(checked, True, False, Config(root=workdir), 2))
    assert [d.diff for d in done] == ["m0.py", "m1.py", "", "m2.py", "m3.py"]
    pids = {d.errors[0] for d in done if d.errors}
    assert len(pids) >= 1 and str(os.getpid()) not in pids
    assert done[2].remaining == [] and not done[2].errors  # no fixes: not sent

"""The README's main job: `shmlint examples/` shows the real findings below."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_examples_show_the_documented_findings() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "shmlint", "check", "--output-format", "json", "examples"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 1, proc.stderr
    got = {(Path(f["path"]).name, f["line"], f["code"]) for f in json.loads(proc.stdout)}
    assert got == {
        ("compiled_loop.py", 21, "SHM104"),
        ("trainer.py", 17, "SHM103"),
        ("trainer.py", 20, "SHM101"),
        ("vllm_executor.py", 22, "SHM101"),
        ("vllm_executor.py", 24, "SHM101"),
    }

"""Fetch real corpora (PyPI wheels) once and unpack only their ``.py`` files into ``.corpus/``.

    python benchmarks/corpus.py ray==2.60.0     # prints the directory it unpacked into

Nothing here is committed: ``.corpus/`` is git-ignored.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

CACHE = Path(__file__).resolve().parent.parent / ".corpus"


def corpus(requirement: str) -> Path:
    """The directory holding ``requirement``'s unpacked ``.py`` files (downloaded once)."""
    target = CACHE / requirement.replace("==", "-")
    marker = target / ".complete"
    if marker.exists():
        return target
    with tempfile.TemporaryDirectory() as download:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--only-binary",
                ":all:",
                "-d",
                download,
                requirement,
            ],
            check=True,
        )
        wheels = sorted(Path(download).glob("*.whl"))
        if not wheels:
            raise SystemExit(f"pip downloaded no wheel for {requirement}")
        target.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(wheels[0]) as wheel:
            for name in wheel.namelist():
                if name.endswith(".py"):
                    wheel.extract(name, target)
    marker.write_text(requirement, encoding="utf-8")
    return target


if __name__ == "__main__":
    for requirement in sys.argv[1:] or ["ray==2.60.0"]:
        print(corpus(requirement))

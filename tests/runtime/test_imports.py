"""The runtime stays light: importing it pulls in no libcst, flake8, ray or the libraries whose
values it walks (pandas, pyarrow, pydantic, msgspec)."""

from __future__ import annotations

import subprocess
import sys


def test_runtime_import_is_light() -> None:
    code = (
        "import sys, shmlint.runtime\n"
        "names = ('libcst', 'flake8', 'ray', 'pandas', 'pyarrow', 'pydantic', 'msgspec')\n"
        "heavy = [m for m in names if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == ""

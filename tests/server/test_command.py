"""``shmlint server`` on the command line: without the server extra it says what to install."""

from __future__ import annotations

import subprocess
import sys

BLOCKED = (
    "import sys\n"
    "sys.modules['pygls'] = None  # as if the server extra were not installed\n"
    "from shmlint.cli import main\n"
    "sys.exit(main(['server']))\n"
)


def test_without_pygls_the_server_names_the_extra() -> None:
    done = subprocess.run(
        [sys.executable, "-c", BLOCKED],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "needs the server extra (pygls is missing): pip install 'shmlint[server]'" in (
        done.stderr
    )
    assert "Traceback" not in done.stderr and done.stdout == ""

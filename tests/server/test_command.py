"""``shmlint server`` on the command line: without the server extra it says what to install."""

from __future__ import annotations

import sys

import pytest

from shmlint.cli import main


def test_without_pygls_the_server_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in [
        m for m in sys.modules if m == "shmlint.server" or m.startswith("shmlint.server.")
    ]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pygls", None)  # an import of it fails
    assert main(["server"]) == 2
    err = capsys.readouterr().err
    assert "needs the server extra (pygls is missing): pip install 'shmlint[server]'" in err

"""docs/editors.md's set-ups name the server and the options it takes. (The Neovim 0.7 one is
run by test_neovim.py; the others need editors CI has not, so their text is checked here:
they parse, start `shmlint server`, and pass only options the server accepts.)"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from shmlint.basics.config import Config
from shmlint.server.actions import FIX_ALL
from shmlint.server.settings import apply_options

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

DOC = Path(__file__).resolve().parents[2] / "docs" / "editors.md"


def _blocks(lang: str) -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


def _accepted(options: dict[str, Any]) -> None:
    _, errors = apply_options(Config(), options)
    assert errors == [] and options


def test_vscode() -> None:
    (block,) = _blocks("json")
    settings = json.loads(block)
    assert settings["glspc.server.command"] == "shmlint"
    assert settings["glspc.server.commandArguments"] == ["server"]
    assert settings["glspc.server.languageId"] == ["python"]
    assert settings["editor.codeActionsOnSave"] == {FIX_ALL: "explicit"}
    _accepted(settings["glspc.server.initializationOptions"])


def test_helix() -> None:
    (block,) = _blocks("toml")
    config = tomllib.loads(block)
    server = config["language-server"]["shmlint"]
    assert (server["command"], server["args"]) == ("shmlint", ["server"])
    _accepted(server["config"])
    (python,) = config["language"]
    assert python["name"] == "python" and "shmlint" in python["language-servers"]


def test_neovim_and_emacs() -> None:
    lua = _blocks("lua")
    assert len(lua) == 2  # vim.lsp.config (0.11+), vim.lsp.start_client (0.7, tested)
    for block in lua:
        assert 'cmd = { "shmlint", "server" }' in block
        options = re.search(r'init_options = \{ \["([\w-]+)"\] = "(\w+)" \}', block)
        assert options is not None
        _accepted({options.group(1): options.group(2)})
    assert 'vim.lsp.enable("shmlint")' in lua[0]
    (elisp,) = _blocks("elisp")
    assert '("shmlint" "server"' in elisp
    options = re.search(r':initializationOptions \(:([\w-]+) "(\w+)"\)', elisp)
    assert options is not None
    _accepted({options.group(1): options.group(2)})

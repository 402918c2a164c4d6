"""Run flake8 as if shmlint were not installed (the baseline for the plugin's overhead).

python benchmarks/flake8_plain.py [flake8 arguments]
"""

from __future__ import annotations

import sys
from collections.abc import Generator
from typing import Any

from flake8.main.cli import main
from flake8.plugins import finder

_original = finder._find_importlib_plugins


def _without_shmlint() -> Generator[Any, None, None]:
    for plugin in _original():
        if plugin.package != "shmlint":
            yield plugin


finder._find_importlib_plugins = _without_shmlint  # inherited by flake8's -j worker processes

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""What facts derived after an edit (shmlint/facts/moved.py, added.py) are held to: the facts a
merge of the whole edited tree gives, on every project fixture's tree."""

from __future__ import annotations

from pathlib import Path

from shmlint.basics.config import Config
from shmlint.facts.model import ProjectFacts
from shmlint.run.runner import check_project
from tests.fixture_markers import FIXTURES

PROJECT_TREES = sorted((FIXTURES / "project").iterdir())


def merged_facts(tree: Path, config: Config) -> ProjectFacts:
    """The facts of a project run over every ``.py`` file under ``tree``, without a cache."""
    files = [(path, str(path)) for path in sorted(tree.rglob("*.py"))]
    return check_project(files, config, jobs=1, cache=None)[0]

"""The fix harness: run ``--fix`` on a fixture in memory, as the CLI does.

python -m tests.fix_harness            # rewrite every fixtures/*.fixed.py (then review!)
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from shmlint.analysis.engine import check_bytes
from shmlint.basics.config import Config, find_pyproject, load_config
from shmlint.basics.types import Confidence, Finding
from shmlint.fixer import apply_fixes, fixable_findings
from tests.fixture_markers import FIXTURES, fixture_files


def fixture_config(path: Path) -> Config:
    """Fixtures are fixed at medium confidence (every finding), with the nearest config."""
    config = load_config(find_pyproject(path.parent)) if path.parent != FIXTURES else Config()
    options = dataclasses.replace(config.options, min_confidence=Confidence.MEDIUM)
    return dataclasses.replace(config, options=options)


def fix_bytes(data: bytes, name: str, config: Config) -> tuple[bytes, list[Finding]]:
    """The fixed source and the findings it was fixed for."""
    findings = fixable_findings(check_bytes(data, name, config).findings, unsafe=True)
    outcome = apply_fixes(data, findings, config)
    assert outcome.error is None, outcome.error
    return outcome.source, findings


def fixed_path(path: Path) -> Path:
    """``SHM101.py`` → ``SHM101.fixed.py``."""
    return path.with_name(path.stem + ".fixed.py")


def fix_fixtures() -> list[Path]:
    """Every fixture of a rule with fixes (it has a ``.fixed.py`` expectation), plus the
    in-place package."""
    from shmlint.analysis.rules import RULES

    inplace = sorted(p for p in (FIXTURES / "inplace").glob("*.py") if ".fixed" not in p.name)
    fixable = [p for p in fixture_files() if RULES[p.stem].fix_safety != "none"]
    return [*fixable, *inplace]


if __name__ == "__main__":
    for fixture in fix_fixtures():
        new, _ = fix_bytes(fixture.read_bytes(), str(fixture), fixture_config(fixture))
        fixed_path(fixture).write_bytes(new)
        print(fixed_path(fixture))
    sys.exit(0)

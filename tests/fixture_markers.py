"""Read the expectations fixtures carry in trailing comments.

``# error: SHM101`` — must be reported on this line (high confidence; ``SHM101[medium]`` for
medium); ``# ok: SHM101`` — a deliberate near-miss, must not be reported; ``# todo-error:`` — a
known miss (not reported today, should be); ``# todo-ok:`` — a known false positive (reported
today, should not be). The runner compares the exact set of (line, code, confidence).
"""

from __future__ import annotations

import re
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
_MARKER = re.compile(
    r"#\s*(?P<kind>error|ok|todo-error|todo-ok):\s*(?P<codes>SHM\d{3}(?:\[\w+\])?(?:\s*,\s*SHM\d{3}(?:\[\w+\])?)*)"
)
_CODE = re.compile(r"(SHM\d{3})(?:\[(\w+)\])?")
ROLE = re.compile(r"^#\s*fixture:\s*\S", re.MULTILINE)
EXPECTS_NOTHING = "# fixture: expects no findings"

Expectation = tuple[int, str, str]  # (line, code, confidence)


def markers(path: Path) -> dict[str, set[Expectation]]:
    """Marker kind → set of (line, code, confidence)."""
    found: dict[str, set[Expectation]] = {
        k: set() for k in ("error", "ok", "todo-error", "todo-ok")
    }
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        for match in _MARKER.finditer(line):
            for code, confidence in _CODE.findall(match.group("codes")):
                found[match.group("kind")].add((number, code, confidence or "high"))
    return found


def expected_reports(path: Path) -> set[Expectation]:
    """What the analysis must report today: errors and known false positives."""
    kinds = markers(path)
    return kinds["error"] | kinds["todo-ok"]


def fixture_files() -> list[Path]:
    """Every single-file fixture (``fixtures/SHM*.py``, not the ``.fixed.py`` outputs)."""
    return sorted(p for p in FIXTURES.glob("SHM*.py") if not p.name.endswith(".fixed.py"))


def fixture_sources() -> list[Path]:
    """Every Python file under ``fixtures/`` that is analysed (not the ``.fixed.py`` outputs)."""
    return sorted(p for p in FIXTURES.rglob("*.py") if not p.name.endswith(".fixed.py"))


def says_what_it_expects(path: Path) -> bool:
    """The file carries a marker or a ``# fixture:`` role line (an empty ``__init__.py`` is a
    package marker and needs neither)."""
    text = path.read_text(encoding="utf-8")
    if path.name == "__init__.py" and not text.strip():
        return True
    return any(markers(path).values()) or ROLE.search(text) is not None


def expects_nothing(paths: list[Path]) -> bool:
    """One of the files says its case must report nothing."""
    return any(EXPECTS_NOTHING in p.read_text(encoding="utf-8") for p in paths)

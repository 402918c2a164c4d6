"""Render every rule's docstring to ``docs/rules/<code>.md`` (a test fails when they are stale).

python scripts/render_rule_docs.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from shmlint.analysis.rules import RULES, confidence, render_markdown  # noqa: E402

DOCS = Path(__file__).resolve().parent.parent / "docs" / "rules"


def main() -> int:
    DOCS.mkdir(parents=True, exist_ok=True)
    for code in RULES:
        page = DOCS / f"{code}.md"
        page.write_text(render_markdown(code), encoding="utf-8")
        print(page.relative_to(DOCS.parent.parent))
    page = DOCS / "confidence.md"
    page.write_text(confidence.render_markdown(), encoding="utf-8")
    print(page.relative_to(DOCS.parent.parent))
    return 0


if __name__ == "__main__":
    sys.exit(main())

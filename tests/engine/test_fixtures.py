"""Every fixture reports exactly the (line, code, confidence) set its markers say."""

from __future__ import annotations

from pathlib import Path

import pytest

from shmlint.analysis.engine import check_path
from shmlint.basics.config import Config
from shmlint.basics.options import Options
from shmlint.basics.types import Confidence
from tests.fixture_markers import (
    FIXTURES,
    expected_reports,
    expects_nothing,
    fixture_files,
    fixture_sources,
    markers,
    says_what_it_expects,
)

MEDIUM = Config(options=Options(min_confidence=Confidence.MEDIUM))


def reported(path: Path, config: Config = MEDIUM) -> set[tuple[int, str, str]]:
    result = check_path(path, str(path), config)
    return {(f.line, f.code, f.confidence.value) for f in result.findings}


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: p.name)
def test_fixture_reports_exactly_its_markers(path: Path) -> None:
    got = reported(path)
    want = expected_reports(path)
    assert want or expects_nothing([path]), "an emptied fixture must not pass"
    missing = sorted(want - got)
    unexpected = sorted(got - want)
    assert not missing and not unexpected, f"missing {missing}, unexpected {unexpected}"


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: p.name)
def test_ok_markers_are_not_reported(path: Path) -> None:
    oks = {(line, code) for line, code, _ in markers(path)["ok"]}
    got = {(line, code) for line, code, _ in reported(path)}
    assert not oks & got


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: p.name)
def test_default_threshold_reports_only_high(path: Path) -> None:
    got = reported(path, Config())
    want = {e for e in expected_reports(path) if e[2] == "high"}
    assert got == want


def test_fixtures_exist_for_every_sink_rule() -> None:
    names = {p.stem for p in fixture_files()}
    assert {f"SHM10{i}" for i in range(1, 8)} <= names


@pytest.mark.parametrize(
    "path", fixture_sources(), ids=lambda p: p.relative_to(FIXTURES).as_posix()
)
def test_every_fixture_file_says_what_it_expects(path: Path) -> None:
    assert says_what_it_expects(path), "add a marker, or a `# fixture: <role>` line"

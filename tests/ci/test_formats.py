"""Output formats for CI: SARIF 2.1.0 (schema-validated), GitHub annotations, JSON fields."""

from __future__ import annotations

import json
import os
import re
import shutil
import urllib.parse
from pathlib import Path

import jsonschema
import pytest

from shmlint.cli import main
from tests.fixture_markers import fixture_files

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "sarif-schema-2.1.0.json").read_text()
)
RETAINING = (
    "import numpy as np\nimport ray\n\n\ndef fetch(ref) -> np.ndarray:\n    return ray.get(ref)\n"
)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "src").mkdir()
    for fixture in fixture_files():
        shutil.copyfile(fixture, tmp_path / "src" / fixture.name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _sarif(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict:  # type: ignore[type-arg]
    main(["check", "--output-format", "sarif", "--min-confidence", "medium", *args])
    return json.loads(capsys.readouterr().out)


def test_sarif_is_valid_and_complete(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _sarif(["src"], capsys)
    jsonschema.validate(log, SCHEMA)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules][:2] == ["SHM001", "SHM101"]
    for rule in rules:
        assert rule["name"] and rule["shortDescription"]["text"]
        assert rule["fullDescription"]["text"] and "## Why is this bad?" in rule["help"]["text"]
        assert rule["defaultConfiguration"]["level"] == "error"
    results = run["results"]
    assert len(results) > 40
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"].startswith("src/SHM")  # repo-relative
        assert location["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        assert result["partialFingerprints"]["shmlint/v1"]
        if result["ruleId"] == "SHM301":  # no automatic fix for an incomplete helper
            assert "fixes" not in result
        else:
            assert result["fixes"][0]["artifactChanges"][0]["replacements"]


def test_sarif_fix_is_the_fix(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "one.py").write_text(RETAINING)
    (result,) = _sarif(["one.py"], capsys)["runs"][0]["results"]
    text = RETAINING
    replacements = result["fixes"][0]["artifactChanges"][0]["replacements"]
    for change in sorted(replacements, key=lambda r: -r["deletedRegion"]["charOffset"]):
        start, length = change["deletedRegion"]["charOffset"], change["deletedRegion"]["charLength"]
        text = text[:start] + change["insertedContent"]["text"] + text[start + length :]
    # An ndarray payload: the deep helper (a model-runner output would keep vLLM's).
    assert "return detach_zero_copy(ray.get(ref))" in text
    assert "from shmlint.runtime import detach_zero_copy" in text


def test_sarif_fingerprints_survive_line_shifts(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = repo / "src" / "SHM101.py"
    before = {
        r["partialFingerprints"]["shmlint/v1"]
        for r in _sarif(["src/SHM101.py"], capsys)["runs"][0]["results"]
    }
    target.write_text("# a new header\n\n\n" + target.read_text())
    after = {
        r["partialFingerprints"]["shmlint/v1"]
        for r in _sarif(["src/SHM101.py"], capsys)["runs"][0]["results"]
    }
    assert before == after and len(before) > 10


def test_github_annotations(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "one.py").write_text(RETAINING)
    assert main(["check", "--output-format", "github", "one.py"]) == 1
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith(
        "::error file=one.py,line=6,col=5,endLine=6,endColumn=24,title=SHM101 returned-undetached::"
        "SHM101 value read from the object store at line 6 (the declared return type "
        "`np.ndarray` holds arrays) is returned undetached"
    )


def test_json_fields(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "one.py").write_text(RETAINING)
    main(["check", "--output-format", "json", "one.py"])
    (finding,) = json.loads(capsys.readouterr().out)
    assert set(finding) == {
        "path",
        "line",
        "column",
        "end_line",
        "end_column",
        "code",
        "name",
        "message",
        "confidence",
        "evidence",
        "source",
        "fixable",
        "unsafe_fix",
        "fingerprint",
    }
    assert set(finding["source"]) == {"kind", "line", "column"}
    assert finding["evidence"] == "the declared return type `np.ndarray` holds arrays"


def test_output_file(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "one.py").write_text(RETAINING)
    assert main(["check", "--output-file", "report.txt", "one.py"]) == 1
    assert capsys.readouterr().out == ""
    assert (repo / "report.txt").read_text().startswith("one.py:6:5: SHM101")
    assert main(["check", "--output-file", "missing/dir/report.txt", "one.py"]) == 2


def test_output_file_with_fix_and_diff(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "one.py").write_text(RETAINING)
    assert main(["check", "--no-cache", "--diff", "--output-file", "diff.txt", "one.py"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "(1 would be fixed, 0 remaining)" in captured.err
    assert (repo / "diff.txt").read_text().startswith("--- one.py\n+++ one.py\n")
    (repo / "two.py").write_text(RETAINING.replace("np.ndarray", "list[np.ndarray]"))
    args = ["check", "--no-cache", "--fix", "--unsafe-fixes", "--output-file", "fix.txt"]
    assert main([*args, "--select", "SHM1", "--ignore", "SHM101", "one.py"]) == 0
    assert capsys.readouterr().out == ""
    assert (repo / "fix.txt").read_text() == "Found 0 findings (0 fixed, 0 remaining).\n"
    (repo / "three.py").write_text("import ray\nimport numpy as np\n\ndef f(:\n")
    assert main([*args, "one.py", "three.py"]) == 1
    assert capsys.readouterr().out == ""
    report = (repo / "fix.txt").read_text()
    assert report.startswith("three.py:4:7: SHM001 ")
    assert report.endswith("Found 2 findings (1 fixed, 1 remaining).\n")
    assert main([*args, "--output-file", "missing/dir/fix.txt", "one.py"]) == 2


# An RFC 3986 URI reference: unreserved and reserved characters, and %XX escapes only.
URI_REFERENCE = re.compile(r"(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-F]{2})*")


def test_sarif_uris_are_escaped_and_only_relative_ones_have_a_base(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = ["h#1/x%41.py", "with space.py", "héllo.py", os.fsdecode(b"\xff.py")]
    for name in names:
        (repo / name).parent.mkdir(exist_ok=True)
        (repo / name).write_text(RETAINING)
    outside = repo.parent / f"{repo.name}-outside #1"
    outside.mkdir()
    (outside / "a.py").write_text(RETAINING)
    log = _sarif([*names, str(outside / "a.py")], capsys)
    jsonschema.validate(log, SCHEMA)
    run = log["runs"][0]
    assert run["columnKind"] == "unicodeCodePoints"
    base = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    seen = {}
    for result in run["results"]:
        places = [result["locations"][0], *result.get("relatedLocations", [])]
        places += result["fixes"][0]["artifactChanges"]
        for place in places:
            artifact = place.get("physicalLocation", place)["artifactLocation"]
            uri = artifact["uri"]
            assert URI_REFERENCE.fullmatch(uri), uri
            absolute = uri.startswith("file:")
            assert ("uriBaseId" in artifact) == (not absolute)
            whole = urllib.parse.urljoin(base, uri)
            seen[os.fsdecode(urllib.parse.unquote_to_bytes(urllib.parse.urlparse(whole).path))] = 1
    assert sorted(seen) == sorted([str(repo / n) for n in names] + [str(outside / "a.py")])


def test_sarif_columns_count_code_points(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = RETAINING.replace("return ray.get(ref)", "x = '\U0001f600'; return ray.get(ref)")
    (repo / "emoji.py").write_text(source)
    (result,) = _sarif(["emoji.py"], capsys)["runs"][0]["results"]
    line = source.splitlines()[5]
    region = result["locations"][0]["physicalLocation"]["region"]
    assert region["startColumn"] == line.index("return") + 1  # code points, 1-based

"""Module names from the package layout, and relative imports made absolute."""

from __future__ import annotations

from pathlib import Path

from shmlint.facts.layout import absolute_import, module_name


def _touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("", encoding="utf-8")
    return path


def test_regular_package_chain(tmp_path: Path) -> None:
    _touch(tmp_path / "pkg" / "__init__.py")
    _touch(tmp_path / "pkg" / "sub" / "__init__.py")
    mod = _touch(tmp_path / "pkg" / "sub" / "mod.py")
    assert module_name(str(mod), tmp_path) == ("pkg.sub.mod", False)
    assert module_name(str(tmp_path / "pkg" / "sub" / "__init__.py"), tmp_path) == (
        "pkg.sub",
        True,
    )


def test_src_layout_with_namespace_package(tmp_path: Path) -> None:
    _touch(tmp_path / "src" / "ns" / "pkg" / "__init__.py")
    mod = _touch(tmp_path / "src" / "ns" / "pkg" / "mod.py")
    plain = _touch(tmp_path / "src" / "ns" / "loose.py")
    assert module_name(str(mod), tmp_path)[0] == "ns.pkg.mod"
    assert module_name(str(plain), tmp_path)[0] == "ns.loose"


def test_a_script_directory_is_not_a_package(tmp_path: Path) -> None:
    script = _touch(tmp_path / "examples" / "run.py")
    assert module_name(str(script), tmp_path)[0] == "run"


def test_a_corpus_below_a_non_identifier_directory(tmp_path: Path) -> None:
    _touch(tmp_path / ".corpus" / "vllm-0.19.1" / "vllm" / "__init__.py")
    mod = _touch(tmp_path / ".corpus" / "vllm-0.19.1" / "vllm" / "utils.py")
    assert module_name(str(mod), tmp_path)[0] == "vllm.utils"


def test_relative_imports() -> None:
    assert absolute_import(".x.Y", "pkg.sub.mod", False) == "pkg.sub.x.Y"
    assert absolute_import("..x.Y", "pkg.sub.mod", False) == "pkg.x.Y"
    assert absolute_import(".x", "pkg.sub", True) == "pkg.sub.x"
    assert absolute_import(".", "pkg.sub", True) == "pkg.sub"
    assert absolute_import("ray.get", "pkg.mod", False) == "ray.get"


def test_a_directory_without_init_inside_a_package_is_a_namespace_package(tmp_path: Path) -> None:
    """PEP 420: ``pkg/gen/m.py`` with only ``pkg/__init__.py`` is imported as ``pkg.gen.m``
    (Ray's ``ray/serve/generated/``, SkyRL's ``skyrl_gym/envs/sql/``)."""
    _touch(tmp_path / "pkg" / "__init__.py")
    mod = _touch(tmp_path / "pkg" / "gen" / "m.py")
    deep = _touch(tmp_path / "pkg" / "gen" / "deeper" / "m.py")
    assert module_name(str(mod), tmp_path) == ("pkg.gen.m", False)
    assert module_name(str(deep), tmp_path) == ("pkg.gen.deeper.m", False)
    assert module_name(str(mod)) == ("pkg.gen.m", False)  # (no root: the same)


def test_a_regular_package_below_a_namespace_portion(tmp_path: Path) -> None:
    _touch(tmp_path / "pkg" / "__init__.py")
    _touch(tmp_path / "pkg" / "gen" / "sub" / "__init__.py")
    mod = _touch(tmp_path / "pkg" / "gen" / "sub" / "m.py")
    assert module_name(str(mod), tmp_path)[0] == "pkg.gen.sub.m"


def test_a_script_directory_holding_no_package_stays_one(tmp_path: Path) -> None:
    """No regular package above (up to the project root): scripts, each directory its own."""
    _touch(tmp_path / "examples" / "a" / "utils.py")
    script = _touch(tmp_path / "examples" / "a" / "run.py")
    assert module_name(str(script), tmp_path)[0] == "run"
    # A package above the project root does not make the project's scripts its modules.
    _touch(tmp_path / "__init__.py")
    assert module_name(str(script), tmp_path / "examples")[0] == "run"


def test_a_directory_named_no_identifier_ends_the_namespace(tmp_path: Path) -> None:
    _touch(tmp_path / "pkg" / "__init__.py")
    mod = _touch(tmp_path / "pkg" / "not-a-name" / "m.py")
    assert module_name(str(mod), tmp_path)[0] == "m"


def test_a_project_named_through_a_symbolic_link(tmp_path: Path) -> None:
    """The root is a real path (as found from its pyproject.toml); the files named through a
    link to it keep their namespace packages (and `src/` layout)."""
    real = tmp_path / "real"
    _touch(real / "pkg" / "__init__.py")
    mod = _touch(real / "pkg" / "gen" / "m.py")
    _touch(real / "src" / "ns" / "pkg" / "__init__.py")
    src_mod = _touch(real / "src" / "ns" / "pkg" / "mod.py")
    link = tmp_path / "link"
    link.symlink_to(real)
    linked = str(link / mod.relative_to(real))
    assert module_name(linked, real) == ("pkg.gen.m", False)
    assert module_name(str(link / src_mod.relative_to(real)), real)[0] == "ns.pkg.mod"
    assert module_name(linked, link) == ("pkg.gen.m", False)

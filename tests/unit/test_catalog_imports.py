"""The catalog rule of DESIGN.md: a case module imports the framework (``amqpspec.*``) and its own
package's shared helper modules (names starting with "_"), never another case module.

What two sections share belongs in a helper module, so each section file reads on its own (the
way h2spec's do). Every module of the catalog is parsed with ``ast`` (nothing is imported, so a
case module that does not load still gets checked) and every import in it, at any depth, is
resolved to a module name; importing a case module of any catalog package is a violation. A
helper module may not import a case module either: a case module could reach another through it.
The catalog packages are ``amqpspec.case.CASE_PACKAGES`` and ``CLIENT_CASE_PACKAGES``, the lists
``discover`` walks for each role.
"""
from __future__ import annotations

import ast
import importlib.util
import textwrap
from pathlib import Path

import pytest

from amqpspec.case import CASE_PACKAGES, CLIENT_CASE_PACKAGES

# both roles' catalogs: the client cases (amqpspec plays the broker) follow the same rule
ALL_PACKAGES = [p for table in (CASE_PACKAGES, CLIENT_CASE_PACKAGES) for ps in table.values() for p in ps]

def package_dir(package: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def case_modules(directory: Path) -> set[str]:
    """The case modules of a catalog package: its modules whose names do not start with "_"."""
    return {p.stem for p in directory.glob("*.py") if not p.stem.startswith("_")}


def imported_names(tree: ast.AST, package: str) -> list[tuple[int, str]]:
    """(line, absolute module name) for every import; ``from P import n`` also yields ``P.n``,
    since ``n`` may be a module."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def violations(package: str, directory: Path, catalog: dict[str, set[str]]) -> list[str]:
    """Imports of case modules (of any package in ``catalog``) by the modules of ``package``."""
    bad = []
    for path in sorted(directory.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, name in imported_names(tree, package):
            parent, _, leaf = name.rpartition(".")
            if leaf in catalog.get(parent, ()) and name != f"{package}.{path.stem}":
                bad.append(f"{package}.{path.stem} (line {line}) imports case module {name}")
    return bad


def catalog_packages() -> dict[str, set[str]]:
    found = {}
    for package in ALL_PACKAGES:
        directory = package_dir(package)
        if directory is not None:
            found[package] = case_modules(directory)
    return found


def params() -> list:
    return [pytest.param(package, id=package) for package in ALL_PACKAGES]


@pytest.mark.parametrize("package", params())
def test_case_modules_import_no_other_case_module(package: str) -> None:
    directory = package_dir(package)
    if directory is None:
        pytest.skip(f"{package} is not installed")
    bad = violations(package, directory, catalog_packages())
    assert not bad, "move what they share into a helper module (_name.py):\n" + "\n".join(bad)


def test_every_catalog_package_has_case_modules() -> None:
    """The check above is not vacuous: every catalog package is found and holds cases."""
    for package in ALL_PACKAGES:
        directory = package_dir(package)
        assert directory is not None, package
        assert case_modules(directory), package


def _write(directory: Path, files: dict[str, str]) -> None:
    directory.mkdir()
    for name, text in files.items():
        (directory / name).write_text(textwrap.dedent(text), encoding="utf-8")


def test_checker_finds_each_form_of_import(tmp_path: Path) -> None:
    """A relative import, ``from . import``, an absolute import, one inside a function, and one
    from a helper module are caught; helper modules and the framework are not."""
    directory = tmp_path / "cat"
    _write(directory, {
        "__init__.py": "",
        "_shared.py": "from amqpspec.case import case\n",
        "_leaky.py": "from .s2_other import thing\n",
        "s1_first.py": """
            from amqpspec.case import Context
            from ._shared import case
            from .s2_other import helper
            from . import s2_other
            import pkg.cat.s2_other

            def later():
                from pkg.cat.s2_other import value
            """,
        "s2_other.py": "from ._shared import case\nfrom . import _shared\n",
    })
    catalog = {"pkg.cat": case_modules(directory)}
    bad = violations("pkg.cat", directory, catalog)
    assert [b.split(" imports")[0] for b in bad] == [
        "pkg.cat._leaky (line 1)",
        "pkg.cat.s1_first (line 4)",
        "pkg.cat.s1_first (line 5)",
        "pkg.cat.s1_first (line 6)",
        "pkg.cat.s1_first (line 9)",
    ]


def test_checker_finds_imports_across_catalog_packages(tmp_path: Path) -> None:
    """A scenario importing a conformance case module is a violation too; its helpers are not."""
    cases, scenarios = tmp_path / "cases", tmp_path / "scen"
    _write(cases, {"__init__.py": "", "_model.py": "", "s1_first.py": ""})
    _write(scenarios, {"__init__.py": "", "flow.py": "from pkg.cases._model import x\nfrom pkg.cases.s1_first import y\n"})
    catalog = {"pkg.cases": case_modules(cases), "pkg.scen": case_modules(scenarios)}
    assert violations("pkg.scen", scenarios, catalog) == ["pkg.scen.flow (line 2) imports case module pkg.cases.s1_first"]

"""The declared dependencies are the imported ones: every third-party module the project's
packages import comes from a distribution ``[project].dependencies`` names (the tests'
from those or the ``test`` extra), and every declared one is imported somewhere, or says
why not. Something that works only because another package happens to pull it in breaks the
day that package stops; a dependency nobody imports is installed for nothing."""

from __future__ import annotations

import re
import sys
import tomllib
from importlib.metadata import packages_distributions

from tests.imports import ROOT, imports, modules

PACKAGES = ("connectors", "pipelines", "assets", "sandbox")
#: declared, never imported: why each is there all the same
NOT_IMPORTED = {
    "dagster-dg-cli": "`dg dev`, which `shopsync dev` runs",
    "dagster-webserver": "the Dagster UI `dg dev` serves",
    "psycopg": "the PostgreSQL driver SQLAlchemy loads from a state_url",
    "sniffio": "httpcore's check of the async library, a failed import per request without it",
    "mypy": "the type check (a command)",
    "ruff": "the lint (a command)",
    "pytest-timeout": "a pytest plugin (the `timeout` setting)",
    "pytest-xdist": "a pytest plugin (`-n` in addopts)",
}


def canonical(name: str) -> str:
    """A distribution's name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def declared(requirements: list[str]) -> set[str]:
    """The distributions ``requirements`` (PEP 508 strings) name."""
    return {canonical(re.split(r"[\s\[<>=!~;@(]", r, maxsplit=1)[0]) for r in requirements}


PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
RUNTIME = declared(PROJECT["dependencies"])


def extra(name: str) -> set[str]:
    """The distributions an extra names, with this project's extras it pulls in
    (``shopsync[deploy]``) in place of the project itself."""
    requirements = PROJECT["optional-dependencies"][name]
    pulled = {e.strip() for r in requirements if canonical(r).startswith("shopsync[")
              for e in r.partition("[")[2].partition("]")[0].split(",")}
    return (declared(requirements) - {"shopsync"}).union(*(extra(e) for e in pulled))


TEST = extra("test")
#: the ``deploy`` extra: what the packages import only where a deployment's feature is used
DEPLOY = extra("deploy")


def third_party(*folders: str) -> dict[str, set[str]]:
    """Distribution -> the modules under ``folders`` importing it (None when no installed
    distribution provides the module)."""
    ours = {*PACKAGES, "tests"}
    distributions = packages_distributions()
    found: dict[str, set[str]] = {}
    for path in modules(*folders):
        for imported in imports(path):
            top = imported.partition(".")[0]
            if top in ours or top in sys.stdlib_module_names or top == "__future__":
                continue
            for dist in distributions.get(top, [f"<no distribution provides {top}>"]):
                found.setdefault(canonical(dist), set()).add(path.relative_to(ROOT).as_posix())
    return found


def test_every_third_party_import_of_the_packages_is_a_declared_dependency() -> None:
    undeclared = {dist: sorted(where)[:3] for dist, where in third_party(*PACKAGES).items()
                  if dist not in RUNTIME | DEPLOY}
    assert undeclared == {}, "add to [project].dependencies"


def test_every_third_party_import_of_the_tests_is_declared_for_them() -> None:
    undeclared = {dist: sorted(where)[:3] for dist, where in third_party("tests").items()
                  if dist not in RUNTIME | TEST}
    assert undeclared == {}, "add to [project.optional-dependencies].test"


def test_every_declared_dependency_is_imported_or_says_why_not() -> None:
    imported = set(third_party(*PACKAGES)) | set(third_party("tests"))
    unused = sorted((RUNTIME | TEST) - imported - set(NOT_IMPORTED))
    assert unused == [], "remove them, or say in NOT_IMPORTED why they are needed"


def test_what_says_why_it_is_not_imported_is_declared_and_not_imported() -> None:
    imported = set(third_party(*PACKAGES)) | set(third_party("tests"))
    assert set(NOT_IMPORTED) - (RUNTIME | TEST) == set()
    assert set(NOT_IMPORTED) & imported == set()

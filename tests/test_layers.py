"""The layers hold: the connectors and the engine are plain Python that knows neither Dagster,
the demo nor the sandbox, so they can be read, tested and reused without them. Every import
counts, those inside functions too (a lazy import is still a dependency)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: the plain-Python layers: what they may not import
LAYERS = ("connectors", "pipelines/engine")
FORBIDDEN = {
    "sandbox": "the emulators are for tests and the demo; a real sync needs none of them",
    "dagster": "the orchestration sits on top (assets/, pipelines/definitions.py)",
    "assets": "the Dagster assets sit on top of the engine",
    "pipelines.demo": "the demo runs the engine, not the other way round",
    "pipelines.demo_specs": "how the demo fakes a platform is the demo's business",
}
#: (module, import) known to cross a layer, each with why; the test fails when one goes
#: away too, so the list stays true
KNOWN = {
    ("pipelines/engine/config.py", "dagster._utils.schedules"):
        "cron expressions are checked with Dagster's own validator, so that a file that"
        " passes never stops the code location from loading",
}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> Iterator[str]:
    """Every module ``path`` imports, at any depth of its code, relative ones made absolute."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                yield f"{base}.{node.module}" if node.module else base
            else:
                yield node.module or ""


def crossings() -> set[tuple[str, str]]:
    """(module file, imported module) for every import of a forbidden module in the layers."""
    found = set()
    for layer in LAYERS:
        for path in sorted((ROOT / layer).rglob("*.py")):
            for imported in imports(path):
                if any(imported == f or imported.startswith(f"{f}.") for f in FORBIDDEN):
                    found.add((path.relative_to(ROOT).as_posix(), imported))
    return found


def test_the_connectors_and_the_engine_import_no_sandbox_dagster_nor_demo() -> None:
    unexpected = sorted(crossings() - set(KNOWN))
    assert unexpected == [], "\n".join(
        f"{module} imports {imported}: "
        + next(why for name, why in FORBIDDEN.items()
               if imported == name or imported.startswith(f"{name}."))
        for module, imported in unexpected)


def test_the_known_crossings_are_still_there() -> None:
    assert set(KNOWN) - crossings() == set(), "gone: remove them from KNOWN"


@pytest.mark.parametrize("source, expected", [
    ("import sandbox", {"sandbox"}),
    ("import sandbox.shops.sql as s", {"sandbox.shops.sql"}),
    ("from sandbox.shops import sql", {"sandbox.shops"}),
    ("def f():\n    from sandbox.shops.sql.config import connection\n",
     {"sandbox.shops.sql.config"}),
    ("from .sql import defined_streams", {"pipelines.engine.platforms.sql"}),
    ("from .. import config", {"pipelines.engine"}),
])
def test_imports_are_found_in_functions_and_relative_ones_are_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, expected: set[str]
) -> None:
    module = tmp_path / "pipelines" / "engine" / "platforms" / "demo_wiring.py"
    module.parent.mkdir(parents=True)
    module.write_text(source, encoding="utf-8")
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)

    assert set(imports(module)) == expected

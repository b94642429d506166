"""The layers hold: the connectors and the engine are plain Python that knows neither Dagster,
the demo nor the sandbox, so they can be read, tested and reused without them. Every import
counts, those inside functions too (a lazy import is still a dependency)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.imports import ROOT, imports, modules

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
    ("pipelines/engine/config/cron.py", "dagster._utils.schedules"):
        "cron expressions are checked with Dagster's own validator, so that a file that"
        " passes never stops the code location from loading",
}


def crossings() -> set[tuple[str, str]]:
    """(module file, imported module) for every import of a forbidden module in the layers."""
    found = set()
    for path in modules(*LAYERS):
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


#: what the Marketing API sandbox may take from the client: transport plumbing only. It
#: reads the API from the spec on its own (``sandbox/marketing/spec/``), so that a client and a
#: sandbox that read it differently fail ``tests/sandbox/test_agrees_with_client.py`` instead of
#: agreeing on a shared mistake
SANDBOX_FROM_CONNECTORS = {
    ("sandbox/process.py", "connectors.http.tls"):
        "how to trust a local certificate, not a reading of the API",
}


def sandbox_imports_of_connectors() -> set[tuple[str, str]]:
    """(module file, imported module) for every import of ``connectors`` in the sandbox, the
    fake shops aside (they stand for the source platforms, not for the Marketing API)."""
    return {
        (path.relative_to(ROOT).as_posix(), imported)
        for path in modules("sandbox")
        if not path.relative_to(ROOT).as_posix().startswith("sandbox/shops/")
        for imported in imports(path)
        if imported == "connectors" or imported.startswith("connectors.")
    }


def test_the_sandbox_reads_the_api_on_its_own_not_through_the_client() -> None:
    found = sandbox_imports_of_connectors()
    unexpected = sorted(found - set(SANDBOX_FROM_CONNECTORS))
    assert unexpected == [], "\n".join(
        f"{module} imports {imported}: the sandbox describes the API from the spec"
        " (sandbox/marketing/spec/), never from connectors.marketing"
        for module, imported in unexpected)
    assert set(SANDBOX_FROM_CONNECTORS) - found == set(), (
        "gone: remove them from SANDBOX_FROM_CONNECTORS")


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
    tmp_path: Path, source: str, expected: set[str]
) -> None:
    module = tmp_path / "pipelines" / "engine" / "platforms" / "demo_wiring.py"
    module.parent.mkdir(parents=True)
    module.write_text(source, encoding="utf-8")

    assert set(imports(module, root=tmp_path)) == expected

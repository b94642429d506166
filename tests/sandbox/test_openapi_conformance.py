"""The sandbox does what its OpenAPI document says: bounded, deterministic schemathesis runs of
every check, in-process, find no server error, no answer its schema does not describe, no
status it does not document — nothing at all, but where the document cannot state a rule the
sandbox checks (``CANNOT_SAY``).

The runs are split by phase so that the two test workers share them. With
``SHOPSYNC_HYPOTHESIS=explore`` (as for the property tests) they draw fresh examples, more of
them, and run the coverage phase on every operation: minutes, not seconds.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import pytest
import schemathesis
from schemathesis.config import SchemathesisConfig
from schemathesis.engine import from_schema
from schemathesis.engine.events import ScenarioFinished

from sandbox.marketing.app import OPENAPI_PATH, create_app
from sandbox.marketing.settings import DEFAULT_KEY, DEFAULT_KPI_KEY, SandboxSettings

EXPLORE = os.environ.get("SHOPSYNC_HYPOTHESIS") == "explore"
pytestmark = [pytest.mark.timeout(3600)] if EXPLORE else []
#: examples per operation in the fuzzing and stateful phases: each operation gets a valid
#: request and an invalid one
EXAMPLES = 20 if EXPLORE else 1
#: the coverage phase (every parameter's boundary and wrong values, the methods a path does
#: not take, requests without a key) on one operation of each shape; a listing alone takes
#: hundreds of its requests, so the listing language is left to the other phases here
COVERED = [
    "PUT /v1/products/{parent_id}/images",
    "POST /v1/orders/bulk-delete",
    "GET /v1/lists/{id_list}",
    "DELETE /v1/events/{id_event}",
    "GET /v1/orders/reference/{reference}",
    "PUT /v1/data-sources/{id_data_source}",
    "DELETE /v1/custom-data-records/{id_definition}",
    "GET /v1/custom-stats/kpis/{id_custom_kpi}",
    "GET /_sandbox/stats",
]
#: rules a schema cannot state, where a 400 answers requests the document admits (by the
#: operation they concern); ``positive_data_acceptance`` takes a 400 from these, nothing else
CANNOT_SAY: dict[tuple[str, str], str] = {
    ("GET", "/v1/contacts"): "exactly one of three query parameters",
    ("POST", "/v1/custom-data-definitions"):
        "unique_keys and relationships name declared fields; options and defaults fit types",
    ("PATCH", "/v1/custom-data-definitions/{id_definition}/extend"):
        "new fields are new; options and defaults fit their types",
    ("PUT", "/v1/custom-data-definitions/overrides"): "the definitions and fields exist",
    ("POST", "/v1/custom-data-records/{id_definition}"): "the definition is active",
    ("PUT", "/v1/custom-data-records/{id_definition}"): "the definition is active",
    ("PATCH", "/v1/custom-data-records/{id_definition}/{id}"):
        "the definition is active and the values fit its fields",
    ("DELETE", "/v1/custom-data-records/{id_definition}"): "the definition is active",
    ("POST", "/v1/custom-data-records/{id_definition}/bulk-delete"):
        "the definition is active; ids are written as integers (5, not 5.0)",
    ("PATCH", "/v1/events"): "id_event is written as an integer (5, not 5.0)",
    ("POST", "/v1/events/trigger/{code_name}"): "the payload fits the event type's fields",
    ("GET", "/v1/custom-stats/kpis/fields"): "the source schema exists",
    ("POST", "/v1/custom-stats/kpis"): "the source schema and its fields exist",
    ("POST", "/v1/custom-stats/kpis/preview"): "the source schema and its fields exist",
    ("PATCH", "/v1/custom-stats/kpis/{id_custom_kpi}"): "the source schema and its fields exist",
}
#: paths that are also an instance of a template (a customer whose id is "bulk-delete", a KPI
#: whose id is "sources"): their 405 rightly allows that template's methods too
SHARED_PATHS = [
    "/v1/customers/bulk-delete",
    "/v1/custom-stats/kpis/sources",
    "/v1/custom-stats/kpis/fields",
    "/v1/custom-stats/kpis/preview",
]
PHASES = ("examples", "coverage", "fuzzing", "stateful")


def _config(phases: Collection[str]) -> SchemathesisConfig:
    taking_400 = ["2xx", "3xx", "400", "401", "403", "404", "409", "429", "5xx"]
    operations: list[dict[str, Any]] = [
        {"include-method": method, "include-path": path,
         "checks": {"positive_data_acceptance": {"expected-statuses": taking_400}}}
        for method, path in CANNOT_SAY
    ]
    operations.append({"include-path": SHARED_PATHS,
                       "checks": {"allow_header_conformance": {"enabled": False}}})
    if not EXPLORE:
        operations.append({"exclude-name": COVERED, "phases": {"coverage": {"enabled": False}}})
    return SchemathesisConfig.from_dict({
        **({} if EXPLORE else {"seed": 12}),
        "generation": {"deterministic": not EXPLORE, "max-examples": EXAMPLES,
                       "database": "none", "no-shrink": not EXPLORE},
        "phases": {phase: {"enabled": phase in phases} for phase in PHASES},
        "continue-on-failure": True,
        "checks": {"enabled": True},
        "auth": {"openapi": {"apiKey": {"api_key": DEFAULT_KEY},
                             "kpiKey": {"api_key": DEFAULT_KPI_KEY}}},
        "operations": operations,
    })


@dataclass
class Run:
    """What a run did: requests sent, operations tested, failures by kind (one example of
    each, as the code that reproduces it)."""

    requests: int = 0
    operations: set[str] = field(default_factory=set)
    failures: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return (f"schemathesis: {self.requests} requests, {len(self.operations)} operations,"
                f" failures {dict(self.failures) or 'none'}")


def run(*phases: str) -> Run:
    """A schemathesis run of ``phases`` on a fresh sandbox, with every check."""
    app = create_app(SandboxSettings(visibility_delay=0))
    schema = schemathesis.openapi.from_asgi(OPENAPI_PATH, app, config=_config(phases))
    done = Run()
    for event in from_schema(schema).execute():
        if not isinstance(event, ScenarioFinished) or not event.is_test_scenario:
            continue
        done.requests += len(event.recorder.interactions)
        if event.recorder.cases and event.label:
            done.operations.add(event.label)
        for check in (c for checks in event.recorder.checks.values() for c in checks):
            if check.failure_info is not None:
                failure = check.failure_info.failure
                kind = f"{failure.code} {failure.title}"
                done.failures[kind] += 1
                done.examples.setdefault(kind, check.failure_info.code_sample)
    print(done)
    return done


def test_examples_boundary_values_and_sequences_find_nothing():
    done = run("examples", "coverage", "stateful")

    assert done.failures == {}, done.examples
    assert set(COVERED) <= done.operations


def test_random_valid_and_invalid_requests_to_every_operation_find_nothing():
    done = run("fuzzing")

    assert done.failures == {}, done.examples
    assert len(done.operations) == 109  # every operation, /_sandbox ones included (no --manual-clock)

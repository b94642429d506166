"""The sandbox's OpenAPI document: what every route takes and answers, from the code's own
pydantic models, and the errors it sends from one table.

A route declares what is its own with ``documented(...)``: its success answer, its body,
its query parameters (``listing.py``'s language: ``listing_query``) and the errors only it
sends (404, 409). ``describe`` adds what follows from how the app is built, from ``ERRORS``:
a key on every route (401), a body guard (413, 415), a 400 wherever something sent can be
invalid, injected faults when ``--fault-rate`` is on; and it drops FastAPI's 422, which the
sandbox never sends (an invalid request is a 400 in the API's error shape).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any, Literal

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel, Field
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from sandbox.marketing.answers import ErrorBody
from sandbox.marketing.limits import MAX_BODY_BYTES
from sandbox.marketing.settings import GENERAL_KEY_PATTERN, KPI_KEY_PATTERN
from sandbox.marketing.spec.resources import SYNC_RESOURCES

REF = "#/components/schemas/{model}"
KeyScheme = Literal["apiKey", "kpiKey"]
KEY_SCHEMES: dict[str, dict[str, str]] = {
    "apiKey": {"type": "apiKey", "in": "header", "name": "spm-api-key", "description": (
        f"The shop's key, matching {GENERAL_KEY_PATTERN.pattern}")},
    "kpiKey": {"type": "apiKey", "in": "header", "name": "spm-api-key", "description": (
        f"The shop's key for the custom KPI endpoints, matching {KPI_KEY_PATTERN.pattern}")},
}
#: the error statuses the sandbox sends, and why
ERRORS: dict[int, str] = {
    400: "The request is invalid; every problem found is listed: a body that is not JSON or"
         " is past the sandbox's bounds (README: choices the spec leaves open), a parameter"
         " or a field out of its range, a rule of the route",
    401: "The spm-api-key header is missing, malformed or no shop's key",
    404: "What the path names does not exist in this shop",
    409: "The code_name is already used by another event of this shop",
    413: f"The body is larger than {MAX_BODY_BYTES:,} bytes",
    415: "The body is not sent as Content-Type: application/json (or a +json type)",
    429: "Injected (--fault-rate): slow down and retry after Retry-After seconds; nothing"
         " changed",
    500: "Injected (--fault-rate): retry; nothing changed",
    502: "Injected (--fault-rate): retry; nothing changed",
    503: "Injected (--fault-rate): retry; nothing changed",
}
FAULTS = (429, 500, 502, 503)

def _space_class() -> str:
    """What ``str.strip`` takes away, as a pattern's class: Python's whitespace, which
    JSON Schema's ``\\s`` is not (it lacks ``\\x1c``-``\\x1f`` and ``\\x85``, has ``\\ufeff``)."""
    spaces = [i for i in range(0x3001) if chr(i).isspace()]
    runs: list[list[int]] = []
    for i in spaces:
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return "".join(rf"\u{a:04x}" + (rf"-\u{b:04x}" if b > a else "") for a, b in runs)


#: a character ``str.strip`` takes away (the sandbox strips what it is sent), and any other
SPACE = f"[{_space_class()}]"
NOT_SPACE = f"[^{_space_class()}]"

#: the models the document refers to, by name, and the mode their schema is drawn in
_MODELS: dict[str, tuple[type[BaseModel], JsonSchemaMode]] = {}
#: schemas written here (the listing language's), by name
_SCHEMAS: dict[str, dict[str, Any]] = {}


def ref(model: type[BaseModel], mode: JsonSchemaMode = "serialization") -> dict[str, str]:
    """A reference to ``model``'s schema among the document's components (what the sandbox
    sends: ``serialization``; what it takes: ``validation``)."""
    known = _MODELS.setdefault(model.__name__, (model, mode))
    if known != (model, mode):
        raise ValueError(f"two models (or modes) for the schema {model.__name__}")
    return {"$ref": REF.format(model=model.__name__)}


def named(name: str, schema: dict[str, Any]) -> dict[str, str]:
    """A reference to ``schema``, put among the document's components as ``name``."""
    if _SCHEMAS.setdefault(name, schema) != schema:
        raise ValueError(f"two schemas named {name}")
    return {"$ref": REF.format(model=name)}


def documented(
    ok: type[BaseModel],
    *,
    many: bool = False,
    body: type[BaseModel] | dict[str, Any] | None = None,
    query: Iterable[dict[str, Any]] = (),
    sends: Collection[int] = (),
    key: KeyScheme = "apiKey",
    example: Any = None,
) -> dict[str, Any]:
    """The arguments of a route's decorator that document it (``responses``,
    ``openapi_extra``): its 200 answer ``ok`` (``many``: a bare array of them), its JSON
    ``body`` (a model, or a schema), its ``query`` parameters and the errors only it
    ``sends``; what every route of its kind sends is added by ``describe``."""
    answer: dict[str, Any] = ref(ok)
    told = (ok.__doc__ or ok.__name__).strip().splitlines()[0]
    if many:
        answer = {"type": "array", "items": answer}
        told = f"A bare array (no envelope) of {ok.__name__}: {told}"
    responses: dict[int | str, dict[str, Any]] = {
        200: {"description": told, "content": {"application/json": {"schema": answer}}},
    }
    for status in sends:
        responses[status] = error(status)
    extra: dict[str, Any] = {"security": [{key: []}]}
    if body is not None:
        schema = ref(body, "validation") if isinstance(body, type) else body
        media: dict[str, Any] = {"schema": schema}
        if example is not None:
            media["example"] = example
        extra["requestBody"] = {"required": True, "content": {"application/json": media}}
    parameters = list(query)
    if parameters:
        extra["parameters"] = parameters
    return {"responses": responses, "openapi_extra": extra}


def error(status: int) -> dict[str, Any]:
    """The documented answer of an error status: the API's error shape."""
    answer: dict[str, Any] = {
        "description": ERRORS[status],
        "content": {"application/json": {"schema": ref(ErrorBody)}},
    }
    if status == 429:
        answer["headers"] = {"Retry-After": {
            "description": "seconds to wait (--retry-after)", "required": True,
            "schema": {"type": "integer", "minimum": 0}}}
    return answer


def omittable() -> Any:
    """The default of a body field that may be left out but not be null: none in the
    schema (a null there would be refused)."""
    return Field(default=None, json_schema_extra=_no_default)


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def parameter(name: str, schema: dict[str, Any], description: str, *,
              required: bool = False) -> dict[str, Any]:
    """A query parameter read as ``qs`` decodes it (``http.query``)."""
    return {"name": name, "in": "query", "required": required, "description": description,
            "schema": schema}


def json_parameter(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    """A query parameter whose value is JSON text."""
    return {"name": name, "in": "query", "description": description,
            "content": {"application/json": {"schema": schema}}}


def _common_errors(path: str, operation: dict[str, Any], faults: bool) -> list[int]:
    """The errors an operation sends because of how the app is built (``ERRORS``)."""
    sends = [401]  # every route reads the shop from its key (`http.shop`) before anything
    takes_body = "requestBody" in operation
    typed = [p for p in operation.get("parameters", [])
             if p["in"] == "query" or p.get("schema", {}).get("type") != "string"]
    if takes_body or typed:
        sends.append(400)
    if takes_body:
        sends += [413, 415]  # `guards.BodyGuard`, before the route runs
    if faults and path.startswith("/v1/"):
        sends += list(FAULTS)  # `faults.FaultInjection`, on /v1 only
    return sends


def _components(models: dict[str, tuple[type[BaseModel], JsonSchemaMode]]) -> dict[str, Any]:
    """The schemas of ``models`` and of every model they hold, each under its own name."""
    refs, top = models_json_schema([(m, mode) for m, mode in models.values()],
                                   ref_template=REF)
    for (model, _), reference in refs.items():
        if reference != {"$ref": REF.format(model=model.__name__)}:
            raise ValueError(f"{model.__name__} is drawn as {reference}: rename one of the"
                             " models that share its name")
    return top.get("$defs", {})


def describe(app: FastAPI) -> dict[str, Any]:
    if app.openapi_schema is not None:
        return app.openapi_schema
    schema = get_openapi(
        title=app.title, version=app.version, description=app.description, routes=app.routes
    )
    faults = app.state.store.settings.fault_rate > 0
    for path, item in schema["paths"].items():
        for operation in item.values():
            responses = operation["responses"]
            responses.pop("422", None)  # FastAPI's; the sandbox answers 400 (app._invalid)
            for status in _common_errors(path, operation, faults):
                responses.setdefault(str(status), error(status))
            operation["responses"] = dict(sorted(responses.items()))
    items: dict[str, tuple[type[BaseModel], JsonSchemaMode]] = {
        r.model.__name__: (r.model, "validation") for r in SYNC_RESOURCES.values()}
    components = schema.setdefault("components", {})
    drawn = _components({**items, **_MODELS})
    if set(drawn) & set(_SCHEMAS):
        raise ValueError(f"schemas named as models: {sorted(set(drawn) & set(_SCHEMAS))}")
    components["schemas"] = {**drawn, **_SCHEMAS}
    components["securitySchemes"] = KEY_SCHEMES
    schema["security"] = [{"apiKey": []}]
    app.openapi_schema = schema
    return schema

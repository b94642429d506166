"""Custom KPIs (``/v1/custom-stats/kpis``): definitions of aggregated statistics.

These endpoints take their own key pattern (``kpi_shop``) and, like the real service's KPI
controller, answer bare objects: the created KPI object, a plain array of KPI objects (not
the List envelope). A created KPI stays in ``status`` "backfilling": the spec shows no other
state. Choices where the spec says "not shown":

* ``source_type`` is ``system`` (orders, customers, products, carts) or ``custom`` (a custom
  data definition, by name); measure types are count, count_distinct, sum, avg, min, max;
  filter operators are the listing operators; ``lookback_max_months`` is 1 to 120 (default 12).
* Field references (measures, dimensions, time_field, filters) must be fields of the source
  schema, or ``<schema>.<field>`` of a schema named in ``relations_chain``; ``count`` also
  takes ``*``.
* The response ``filters`` object is ``{"combinator": "AND", "conditions": [...]}``; measure
  ``chart_types`` are always ``["line", "bar"]``; ``source_table_name`` is the system schema's
  name or ``custom_data_<id>``.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from fastapi import APIRouter, Depends, Request

from sandbox.marketing.answers import Done
from sandbox.marketing.errors import ApiError, not_found, validated
from sandbox.marketing.http import json_object, kpi_shop, listed, query
from sandbox.marketing.kpi_models import (
    Confirmation,
    Kpi,
    KpiField,
    KpiIn,
    KpiPatch,
    KpiSource,
    Preview,
)
from sandbox.marketing.listing_parse import ListQuery
from sandbox.marketing.openapi import documented, parameter
from sandbox.marketing.routes.custom_data import (
    definition_named,
    definitions,
    record_view,
    records_of,
)
from sandbox.marketing.spec.resources import SYNC_RESOURCES
from sandbox.marketing.store import Doc, Shop, now_iso
from sandbox.marketing.views import reader, selectable_fields

router = APIRouter(tags=["custom KPIs"])

BASE = "/v1/custom-stats/kpis"
KPIS = "custom_kpis"
SYSTEM_SOURCES = {"orders": "Orders", "customers": "Customers", "products": "Products",
                  "carts": "Carts"}
CHART_TYPES = ("line", "bar")
PREVIEW_ROWS = 50
_ANNOTATION_TYPES = (("bool", "bool"), ("list", "list"), ("float", "decimal"), ("int", "number"))

_FIELDS_QUERY = [
    parameter("sourceType", {"type": "string", "enum": ["system", "custom"]},
              "The kind of the source schema.", required=True),
    parameter("sourceSchema", {"type": "string", "minLength": 1},
              "A system schema or a custom data definition's name.", required=True),
    parameter("relationsChain", {"type": "array", "items": {"type": "string"}},
              "Schemas whose fields come after the source's: repeated, comma-separated or a"
              " JSON array."),
]


# --- sources and their fields ----------------------------------------------------------------


def _system_type(resource_name: str, name: str) -> str:
    """A field's custom-data type name, from its name or the item model's annotation."""
    if name.endswith("_at") or name in ("date", "id", "data_source_id", "contact_id"):
        return "datetime" if name == "date" or name.endswith("_at") else "number"
    if name.endswith("date"):
        return "date"
    model_field = SYNC_RESOURCES[resource_name].model.model_fields.get(name)
    annotation = str(model_field.annotation) if model_field else ""
    if not model_field and ("is_" in name or name.endswith(("_active", "_deleted"))):
        annotation = "bool"
    return next((kind for marker, kind in _ANNOTATION_TYPES if marker in annotation), "text")


def source_fields(shop: Shop, source_type: str, schema: str) -> list[dict[str, Any]] | None:
    """Fields of one source schema as ``{name, type, label}``, or None if it does not exist."""
    if source_type == "system":
        if schema not in SYSTEM_SOURCES:
            return None
        names = selectable_fields(SYNC_RESOURCES[schema])
        return [{"name": n, "type": _system_type(schema, n), "label": n} for n in names]
    definition = definition_named(shop, schema)
    if definition is None:
        return None
    return [{"name": "id", "type": "number", "label": "id"},
            *({"name": f["name"], "type": f["type"], "label": f["label"]}
              for f in definition["fields"])]


def _any_source(shop: Shop, schema: str) -> list[dict[str, Any]] | None:
    return source_fields(shop, "system", schema) or source_fields(shop, "custom", schema)


def _known_fields(shop: Shop, body: KpiIn) -> tuple[set[str], list[str]]:
    """Every field a KPI on ``body``'s source may refer to, and what is wrong with the source."""
    own = source_fields(shop, body.source_type, body.source_schema_name)
    if own is None:
        problem = (f"source_schema_name: no {body.source_type} source named"
                   f" '{body.source_schema_name}' (see GET {BASE}/sources)")
        return set(), [problem]
    names, problems = {f["name"] for f in own}, []
    for i, chain in enumerate(body.relations_chain):
        for schema in chain:
            related = _any_source(shop, schema)
            if related is None:
                problems.append(f"relations_chain[{i}]: no source named '{schema}'")
            else:
                names |= {f"{schema}.{f['name']}" for f in related}
    return names, problems


def _check_against_source(shop: Shop, body: KpiIn) -> None:
    names, problems = _known_fields(shop, body)
    if not problems:
        refs = [(f"measures[{i}].field", m.field, m.type == "count")
                for i, m in enumerate(body.measures)]
        refs += [(f"dimensions[{i}].field", d.field, False) for i, d in enumerate(body.dimensions)]
        refs += [(f"filters[{i}].field", f.field, False) for i, f in enumerate(body.filters)]
        if body.time_field is not None:
            refs.append(("time_field", body.time_field, False))
        problems += [
            f"{where}: '{name}' is not a field of {body.source_schema_name}"
            for where, name, star_ok in refs
            if name not in names and not (star_ok and name == "*")
        ]
    if problems:
        raise ApiError(400, problems)


# --- KPI objects ---------------------------------------------------------------------------


def _table(shop: Shop, body: KpiIn) -> str:
    if body.source_type == "system":
        return body.source_schema_name
    definition = definition_named(shop, body.source_schema_name)
    return f"custom_data_{definition['id'] if definition else body.source_schema_name}"


def _build(shop: Shop, body: KpiIn, previous: Doc | None) -> Doc:
    """The stored KPI: the response object plus the request it came from (for PATCH)."""
    dims = [d.field for d in sorted(body.dimensions, key=lambda d: d.position)]
    now = now_iso()
    return {
        "id_custom_kpi": previous["id_custom_kpi"] if previous else uuid.uuid4().hex,
        "id_shop": shop.shop_id,
        "name": body.name,
        "description": body.description,
        "measures": [
            {"id_measure": m.id_measure, "type": m.type, "field": m.field, "label": m.label,
             "chart_types": list(CHART_TYPES), "position": m.position}
            for m in body.measures
        ],
        "source_type": body.source_type,
        "source_schema_name": body.source_schema_name,
        "source_table_name": _table(shop, body),
        "relations_chain": body.relations_chain,
        "dimension_field": dims[0] if dims else None,
        "secondary_dimension_field": dims[1] if len(dims) > 1 else None,
        "time_field": body.time_field,
        "filters": {"combinator": "AND", "conditions": [f.model_dump() for f in body.filters]},
        "status": "backfilling",
        "last_event_run_at": previous["last_event_run_at"] if previous else None,
        "last_error": None,
        "lookback_max_months": body.lookback_max_months,
        "created_at": previous["created_at"] if previous else now,
        "updated_at": now,
        "_request": body.model_dump(mode="json"),
    }


def _public(doc: Doc) -> Doc:
    return {k: v for k, v in doc.items() if not k.startswith("_")}


def _find(shop: Shop, id_custom_kpi: str) -> Doc:
    found = shop.collection(KPIS).get(id_custom_kpi)
    if found is None:
        raise not_found(f"Custom KPI {id_custom_kpi}")
    return found


async def _kpi_body(request: Request, shop: Shop) -> KpiIn:
    body = validated(KpiIn, await json_object(request))
    _check_against_source(shop, body)
    return body


@router.get(f"{BASE}/sources", summary="CustomKpiController_sources",
            **documented(KpiSource, many=True, key="kpiKey"))
async def list_sources(the_shop: Shop = Depends(kpi_shop)) -> Any:
    """System schemas, then the shop's custom data definitions (by name)."""
    system = [{"source_type": "system", "source_schema_name": name, "label": label}
              for name, label in SYSTEM_SOURCES.items()]
    custom = [{"source_type": "custom", "source_schema_name": d["name"], "label": d["name"],
               "id_custom_data_definition": d["id"], "active": d["active"]}
              for d in definitions(the_shop).values()]
    return [*system, *custom]


def _chain(raw: Any) -> list[str]:
    """``relationsChain``: repeated, comma-separated, or a JSON array (possibly nested)."""
    if raw is None:
        return []
    if isinstance(raw, str) and raw.strip().startswith("["):
        try:
            raw = json.loads(raw)
        except ValueError:
            raise ApiError(400, "relationsChain: malformed JSON array") from None
    items = raw if isinstance(raw, list) else [raw]
    flat: list[str] = []
    for item in items:
        if isinstance(item, list):
            flat += _chain(item)
        elif isinstance(item, str):
            flat += [p.strip() for p in item.split(",") if p.strip()]
        else:
            raise ApiError(400, "relationsChain: expected schema names")
    return flat


@router.get(f"{BASE}/fields", summary="CustomKpiController_fields",
            **documented(KpiField, many=True, query=_FIELDS_QUERY, key="kpiKey"))
async def list_fields(request: Request, the_shop: Shop = Depends(kpi_shop)) -> Any:
    """Fields of ``sourceSchema``, then ``<schema>.<field>`` of each schema of the chain."""
    params = query(request)
    source_type, schema = params.get("sourceType"), params.get("sourceSchema")
    problems = []
    if source_type not in ("system", "custom"):
        problems.append(f"sourceType: must be 'system' or 'custom', got {source_type!r}")
    if not isinstance(schema, str) or not schema:
        problems.append("sourceSchema: query parameter is required")
    if problems:
        raise ApiError(400, problems)
    fields = source_fields(the_shop, str(source_type), str(schema))
    if fields is None:
        raise ApiError(400, f"sourceSchema: no {source_type} source named '{schema}'")
    for related in _chain(params.get("relationsChain")):
        more = _any_source(the_shop, related)
        if more is None:
            raise ApiError(400, f"relationsChain: no source named '{related}'")
        fields += [{**f, "name": f"{related}.{f['name']}"} for f in more]
    return fields


def _source_rows(shop: Shop, body: KpiIn) -> list[dict[str, Any]]:
    if body.source_type == "system":
        resource = SYNC_RESOURCES[body.source_schema_name]
        read = reader(shop, resource)
        return [read(d) for d in shop.collection(resource.name).values()]
    definition = definition_named(shop, body.source_schema_name)
    assert definition is not None  # checked against the source already
    return [record_view(definition, d) for d in records_of(shop, definition["id"]).values()]


def _aggregate(kind: str, field: str, rows: list[dict[str, Any]]) -> Any:
    if kind == "count" and field == "*":
        return len(rows)
    values = [r.get(field) for r in rows if r.get(field) is not None]
    if kind == "count":
        return len(values)
    if kind == "count_distinct":
        return len({json.dumps(v, sort_keys=True, default=str) for v in values})
    numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    if kind == "sum":
        return sum(numbers)
    if not numbers:
        return None
    if kind == "avg":
        return sum(numbers) / len(numbers)
    return min(numbers) if kind == "min" else max(numbers)


@router.post(f"{BASE}/preview", summary="CustomKpiController_preview",
             **documented(Preview, body=KpiIn, key="kpiKey"))
async def preview(request: Request, the_shop: Shop = Depends(kpi_shop)) -> Any:
    """The KPI computed now over the shop's stored data, to check a definition before
    creating it: one row per combination of the first two dimensions (or one row), none when
    nothing matches. No time bucketing; fields reached through relations read as null."""
    body = await _kpi_body(request, the_shop)
    rows = _source_rows(the_shop, body)
    q = ListQuery(limit=max(len(rows), 1), filters=[f.as_filter() for f in body.filters])
    matching, _ = await listed(request, rows, q, default_order=[])
    dims = [d.field for d in sorted(body.dimensions, key=lambda d: d.position)][:2]
    groups: dict[str, tuple[list[Any], list[dict[str, Any]]]] = {}
    for row in matching:
        key_values = [row.get(d) for d in dims]
        key = json.dumps(key_values, sort_keys=True, default=str)
        groups.setdefault(key, (key_values, []))[1].append(row)
    result = []
    for key in sorted(groups)[:PREVIEW_ROWS]:
        key_values, members = groups[key]
        out = dict(zip(dims, key_values, strict=True))
        out.update({m.id_measure: _aggregate(m.type, m.field, members) for m in body.measures})
        result.append(out)
    return {"statusCode": 200, "data": {"rows": result}}


@router.post(BASE, summary="CustomKpiController_create",
             **documented(Kpi, body=KpiIn, key="kpiKey"))
async def create_kpi(request: Request, the_shop: Shop = Depends(kpi_shop)) -> Any:
    """Answers the created KPI object itself (not an envelope), in status backfilling."""
    doc = _build(the_shop, await _kpi_body(request, the_shop), None)
    the_shop.collection(KPIS).put(doc["id_custom_kpi"], doc)
    return _public(doc)


@router.get(BASE, summary="CustomKpiController_list",
            **documented(Kpi, many=True, key="kpiKey"))
async def list_kpis(the_shop: Shop = Depends(kpi_shop)) -> Any:
    """A plain JSON array of KPI objects, oldest first."""
    return [_public(d) for d in the_shop.collection(KPIS).values()]


@router.get(BASE + "/{id_custom_kpi}", summary="CustomKpiController_get",
            **documented(Kpi, sends=[404], key="kpiKey"))
async def get_kpi(id_custom_kpi: str, the_shop: Shop = Depends(kpi_shop)) -> Any:
    return _public(_find(the_shop, id_custom_kpi))


@router.patch(BASE + "/{id_custom_kpi}", summary="CustomKpiController_update",
              **documented(Kpi, body=KpiPatch, sends=[404], key="kpiKey"))
async def update_kpi(
    id_custom_kpi: str, request: Request, the_shop: Shop = Depends(kpi_shop)
) -> Any:
    """Any request field may change; the result is validated as a whole, as on create, and
    the KPI goes back to backfilling (its history is recomputed)."""
    patch = await json_object(request)
    current = _find(the_shop, id_custom_kpi)
    body = validated(KpiIn, {**current["_request"], **patch})
    _check_against_source(the_shop, body)
    doc = _build(the_shop, body, current)
    the_shop.collection(KPIS).put(id_custom_kpi, doc)
    return _public(doc)


@router.delete(BASE + "/{id_custom_kpi}", summary="CustomKpiController_delete",
               **documented(Done, body=Confirmation, key="kpiKey"))
async def delete_kpi(
    id_custom_kpi: str, request: Request, the_shop: Shop = Depends(kpi_shop)
) -> Any:
    """Needs ``{"confirmation": true}`` (deleting drops the KPI's history); idempotent."""
    raw = await request.body()
    try:
        body = json.loads(raw) if raw else None
    except ValueError:
        body = None
    if not (isinstance(body, dict) and body.get("confirmation") is True):
        raise ApiError(400, 'confirmation: send {"confirmation": true} to delete a KPI')
    the_shop.collection(KPIS).delete(id_custom_kpi)
    return {"statusCode": 200, "success": True}

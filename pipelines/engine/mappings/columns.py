"""The mapping of the configuration-driven platforms (``sql`` and ``files``).

Their connectors already put each value under the target field the source's
configuration names (``columns``, ``constants``, ``templates``, lines), so one stream feeds
the resource of its name and this mapping only makes the values what the item model wants:

- text ids from numbers (``17``, not ``17.0``); integers, amounts and flags from text or
  numbers (``"1"``, ``"yes"``, ``0``); a single value where a list is wanted becomes a list
  of one (``group_ids: 3``), text like ``1,2`` or ``[1, 2]`` a list; empty text (a CSV
  cell) is a null except in a text field;
- timestamps as ISO 8601 UTC with ``Z`` (the connector has already read naive ones in the
  source's time zone); a date-only value in a timestamp field is midnight UTC;
- what cannot be converted is passed on as it is, so that validation names the field and
  quarantines the item instead of a guess reaching the API;
- defaults: ``lang`` and ``currency`` of the source, ``updated_at`` from the record's change
  time, an order's ``cart_updated_at`` from its ``updated_at``;
- a record the connector could not read (``_errors``: an unparseable line, a row without
  its key) gets, as its id, an object naming where it came from and why: validation fails on
  the id, the ledger keys it by that origin, and its payload shows the reasons (also under
  ``_errors``, never sent since the item is invalid).
"""

from __future__ import annotations

import types
from collections.abc import Iterator, Mapping
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from functools import cache
from typing import Annotated, Any, ClassVar, Literal, Union, get_args, get_origin

import orjson
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from connectors.marketing.resources import SYNC_RESOURCES
from connectors.sources.base import RawRecord
from pipelines.engine.mappings.base import Item, MappingContext, utc

#: streams are named after the resources they feed, reference data first
STREAM_ORDER = ("statuses", "carriers", "groups", "categories", "manufacturers", "customers",
                "addresses", "products", "variations", "images", "vouchers", "carts", "orders")
_TRUE = frozenset({"1", "true", "t", "yes", "y", "on"})
_FALSE = frozenset({"0", "false", "f", "no", "n", "off"})
Kind = tuple[str, Any]  # (kind, element kind or nested model)


def _validators(metadata: list[Any]) -> set[str]:
    names = set()
    for meta in metadata:
        if isinstance(meta, FieldInfo):
            names |= _validators(list(meta.metadata))
        func = getattr(meta, "func", None)
        if func is not None:
            names.add(getattr(func, "__name__", ""))
    return names


def _kind(annotation: Any, metadata: list[Any]) -> Kind:
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        inner = [a for a in get_args(annotation) if a is not type(None)]
        return _kind(inner[0], metadata) if len(inner) == 1 else ("any", None)
    if origin is Annotated:
        base, *extra = get_args(annotation)
        return _kind(base, [*metadata, *extra])
    if origin is list:
        (element,) = get_args(annotation) or (Any,)
        return ("list", _kind(element, []))
    if origin is Literal:
        return ("str", None)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return ("object", annotation)
    if annotation is bool:
        return ("bool", None)
    if annotation is int:
        return ("int", None)
    if annotation is float:
        return ("float", None)
    if annotation is str:
        validators = _validators(metadata)
        if "_iso_timestamp" in validators:
            return ("timestamp", None)
        if "_iso_date" in validators:
            return ("date", None)
        return ("str", None)
    return ("any", None)


@cache
def fields_of(model: type[BaseModel]) -> dict[str, Kind]:
    """Each field of an item model with the kind of value it wants."""
    return {name: _kind(info.annotation, list(info.metadata))
            for name, info in model.model_fields.items()}


def _number(value: Any) -> Decimal | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float | Decimal):
        return Decimal(str(value)) if isinstance(value, float) else Decimal(value)
    if isinstance(value, str):
        try:
            return Decimal(value.strip().replace(" ", ""))
        except InvalidOperation:
            return None
    return None


def _integral(number: Decimal | None) -> int | None:
    if number is None or not number.is_finite() or number != number.to_integral_value():
        return None
    return int(number)


def _scalar(kind: str, value: Any) -> Any:
    if value is None or (value == "" and kind != "str"):  # an empty CSV cell is a null
        return None
    if kind == "str":
        if isinstance(value, bool):
            return value
        if isinstance(value, float | Decimal):
            whole = _integral(_number(value))
            return str(whole) if whole is not None else str(value)
        return str(value) if isinstance(value, int | str) else value
    if kind == "int":
        whole = _integral(_number(value))
        return whole if whole is not None else value
    if kind == "float":
        number = _number(value)
        return float(number) if number is not None and number.is_finite() else value
    if kind == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, int | Decimal) and value in (0, 1):
            return bool(value)
        text = str(value).strip().lower() if isinstance(value, str) else None
        return True if text in _TRUE else False if text in _FALSE else value
    if kind == "timestamp":
        if isinstance(value, str):
            try:
                return utc(value.strip())
            except ValueError:
                return value
        return value
    if kind == "date":
        if isinstance(value, str):
            try:
                return datetime.fromisoformat(value.strip()).date().isoformat()
            except ValueError:
                return value
        return value.isoformat() if isinstance(value, date) else value
    return value


def _as_list(value: Any) -> Any:
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                return orjson.loads(text)
            except orjson.JSONDecodeError:
                return value
        return [part.strip() for part in text.replace("|", ",").split(",") if part.strip()]
    return value if isinstance(value, list | tuple) else [value]


def coerce(kind: Kind, value: Any) -> Any:
    """``value`` as a field of ``kind`` wants it, or as it was when it cannot be."""
    name, inner = kind
    if name == "object":
        return coerce_model(inner, value) if isinstance(value, Mapping) else value
    if name == "list":
        if value is None or value == "":
            return None
        items = _as_list(value)
        return [coerce(inner, v) for v in items] if isinstance(items, list) else items
    return _scalar(name, value)


def coerce_model(model: type[BaseModel], data: Mapping[str, Any]) -> Item:
    fields = fields_of(model)
    return {name: coerce(fields[name], value) for name, value in data.items()
            if name in fields}


def _json_safe(value: Any) -> Any:
    """What orjson can hash and the ledger can keep (a Decimal the model did not want)."""
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, date | datetime):
        return value.isoformat()
    return value


class ColumnsMapping:
    """Stream ``X`` -> resource ``X``; see the module docstring."""

    platform: ClassVar[str] = "columns"
    produces: ClassVar[Mapping[str, tuple[str, ...]]] = {s: (s,) for s in STREAM_ORDER}

    def map(self, stream: str, record: RawRecord, ctx: MappingContext) -> Iterator[tuple[str, Item]]:
        if stream not in SYNC_RESOURCES:
            return
        spec = SYNC_RESOURCES[stream]
        fields = fields_of(spec.model)
        item = _json_safe(coerce_model(spec.model, record))
        if "lang" in fields and item.get("lang") is None:
            item["lang"] = ctx.lang
        if "currency" in fields and item.get("currency") is None:
            item["currency"] = ctx.currency
        if "updated_at" in fields and item.get("updated_at") is None and record.get("_changed_at"):
            item["updated_at"] = utc(record["_changed_at"])
        if "cart_updated_at" in fields and item.get("cart_updated_at") is None:
            item["cart_updated_at"] = item.get("updated_at")
        if record.get("_errors"):
            errors = list(record["_errors"])
            item[spec.id_field] = {"malformed": record.get("_origin") or record.get("_key"),
                                   "errors": errors}
            item["_errors"] = errors  # the reasons, for an engine that takes them as such
        yield stream, item


class SqlMapping(ColumnsMapping):
    platform: ClassVar[str] = "sql"


class FilesMapping(ColumnsMapping):
    platform: ClassVar[str] = "files"


def _resolve(model: type[BaseModel], path: str) -> str | None:
    """None when ``path`` (dotted) names a field of ``model``, else why not."""
    parts = path.split(".")
    current: type[BaseModel] = model
    for index, part in enumerate(parts):
        fields = fields_of(current)
        if part not in fields:
            return f"{current.__name__} has no field {part!r}; its fields: {', '.join(fields)}"
        kind, inner = fields[part]
        if kind == "list" and inner[0] == "object":
            kind, inner = inner
        if index < len(parts) - 1:
            if kind != "object":
                return f"{part!r} is not an object: nothing can be under it"
            current = inner
    return None


def target_problems(stream: str, spec: Mapping[str, Any], where: str) -> list[str]:
    """Problems with the target fields a stream's configuration names (``where`` prefixes
    each line, like ``connection.streams.orders``)."""
    if stream not in SYNC_RESOURCES:
        return [(f"{where}: no resource {stream!r}; streams are named after the resource they"
                 f" feed: {', '.join(STREAM_ORDER)}")]
    model = SYNC_RESOURCES[stream].model
    problems = []
    for group in ("columns", "constants", "templates"):
        for target in spec.get(group) or {}:
            why = _resolve(model, str(target))
            if why:
                problems.append(f"{where}.{group}.{target}: {why}")
    lines = spec.get("lines") or {}
    if not lines:
        return problems
    field = str(lines.get("field") or "products")
    kind = fields_of(model).get(field)
    if kind is None or kind[0] != "list" or kind[1][0] != "object":
        lists = [n for n, k in fields_of(model).items() if k[0] == "list" and k[1][0] == "object"]
        return [*problems, f"{where}.lines.field: {stream} items have no list of lines"
                f" {field!r}" + (f"; use {', '.join(lists)}" if lists else "")]
    for group in ("columns", "constants"):
        for target in lines.get(group) or {}:
            why = _resolve(kind[1][1], str(target))
            if why:
                problems.append(f"{where}.lines.{group}.{target}: {why}")
    return problems

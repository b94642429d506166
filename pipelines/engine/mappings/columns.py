"""The mapping of the configuration-driven platforms (``sql`` and ``files``).

Their connectors already put each value under the target field the source's
configuration names (``columns``, ``constants``, ``templates``, lines), so one stream feeds
the resource of its name and this mapping only makes the values what the item model wants:

- text ids from numbers (``17``, not ``17.0``); integers, amounts and flags from text or
  numbers (``"1"``, ``"yes"``, ``0``), by pydantic's lax mode (values.py); a single value where a list is wanted becomes a list
  of one (``group_ids: 3``), text like ``1,2`` or ``[1, 2]`` a list; empty text (a CSV
  cell) is a null except in a text field;
- timestamps as ISO 8601 UTC with ``Z`` (the connector has already read naive ones in the
  source's time zone); a date-only value in a timestamp field is midnight UTC;
- what cannot be converted is passed on as it is, so that validation names the field and
  quarantines the item instead of a guess reaching the API;
- what converts but not exactly, or past what the API holds, is refused with its reason
  under ``_errors`` (``quantity_remaining: 1e10000000 is beyond …``), and the engine
  quarantines the item: an integer past 64 bits, a number that is not finite, a float
  where an id is wanted beyond 2^53 (no float holds such an id apart from its neighbours),
  digits other than ASCII ones (``²``, ``١٢``), a date past the calendar in UTC, text with
  bytes the source's encoding could not decode. Magnitudes are checked before any
  conversion, so ``1e10000000`` costs nothing;
- defaults: ``lang`` and ``currency`` of the source, ``updated_at`` from the record's change
  time, an order's ``cart_updated_at`` from its ``updated_at``;
- a record the connector could not read (``_errors``: an unparseable line, a row without
  its key) gets, as its id, an object naming where it came from and why: validation fails on
  the id, the ledger keys it by that origin, and its payload shows the reasons (also under
  ``_errors``, never sent since the item is invalid).
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable, Iterator, Mapping
from datetime import date, datetime
from decimal import Decimal
from functools import cache
from math import isfinite
from typing import Annotated, Any, ClassVar, Literal, Union, get_args, get_origin

import orjson
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from connectors.marketing.references import RESOURCE_ORDER
from connectors.marketing.resources import SYNC_RESOURCES
from connectors.sources.base import RawRecord
from pipelines.engine.mappings.base import Item, MappingContext, utc, utc_as_written
from pipelines.engine.mappings.values import MAX_INT, MIN_INT, Unfit, scalar

#: streams are named after the resources they feed, reference data first (from the table
#: of who refers to whom)
STREAM_ORDER = RESOURCE_ORDER
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


#: where a value sits in an item, built only when a problem names it: field names and list
#: positions from the top (``("products", 3, "quantity")`` is ``products[3].quantity``)
Where = tuple[str | int, ...]
#: a field's conversion: ``(value, problems, where, at) -> value``, JSON-safe, for the value
#: at ``at`` (a field name, a list position) in what sits at ``where``; a problem is
#: appended to ``problems`` as ``where.at: reason``. The value's own path is made only then
Convert = Callable[[Any, list[str], Where, str | int], Any]


def _shown(where: Where) -> str:
    text = ""
    for part in where:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _unfit(problems: list[str], where: Where, unfit: Unfit) -> Any:
    problems.append(f"{_shown(where)}: {unfit}" if where else str(unfit))
    return _json_safe(unfit.shown)


def _general(kind: str, value: Any, problems: list[str], where: Where, at: str | int) -> Any:
    """``scalar``'s conversion, JSON-safe, a value the API cannot be given noted."""
    try:
        return _json_safe(scalar(kind, value))
    except Unfit as unfit:
        return _unfit(problems, (*where, at), unfit)


def _text_field(value: Any, problems: list[str], where: Where, at: str | int) -> Any:
    if type(value) is str and value.isascii():
        return value
    if type(value) is int and MIN_INT <= value <= MAX_INT:
        return str(value)  # an id from an integer column: pydantic's text of it
    return None if value is None else _general("str", value, problems, where, at)


def _integer_field(value: Any, problems: list[str], where: Where, at: str | int) -> Any:
    if type(value) is int and MIN_INT <= value <= MAX_INT or value is None:
        return value
    return _general("int", value, problems, where, at)


def _float_field(value: Any, problems: list[str], where: Where, at: str | int) -> Any:
    if type(value) is float and math.isfinite(value) or value is None:
        return value
    return _general("float", value, problems, where, at)


def _flag_field(value: Any, problems: list[str], where: Where, at: str | int) -> Any:
    if type(value) is bool or value is None:
        return value
    if type(value) is int and (value == 0 or value == 1):
        return value == 1  # a flag from an integer column, as pydantic reads it
    return _general("bool", value, problems, where, at)


def _timestamp_field(value: Any, problems: list[str], where: Where, at: str | int) -> Any:
    if type(value) is str:
        try:
            in_utc = utc_as_written(value)
        except ValueError:  # no date, though written as one: as ``utc`` refuses it
            return value
        if in_utc is not None:
            return in_utc
    return None if value is None else _general("timestamp", value, problems, where, at)


#: the conversions that take what a shop mostly sends at once — ASCII text, integers in
#: range (and as text, or 0 and 1 as flags), finite floats, timestamps already in UTC,
#: nulls — with the same result as the general path, whose checks they all pass
#: (tests/engine/test_column_conversions.py compares the two)
_TAKEN_AT_ONCE: dict[str, Convert] = {
    "str": _text_field, "int": _integer_field, "float": _float_field, "bool": _flag_field,
    "timestamp": _timestamp_field,
}


def _scalar_convert(kind: str) -> Convert:
    """``scalar`` for one kind, JSON-safe: what it mostly meets taken at once."""
    if (taken := _TAKEN_AT_ONCE.get(kind)) is not None:
        return taken

    def convert(value: Any, problems: list[str], where: Where, at: str | int) -> Any:
        return None if value is None else _general(kind, value, problems, where, at)

    return convert


def _list_convert(element: Convert) -> Convert:
    def convert(value: Any, problems: list[str], where: Where, at: str | int) -> Any:
        if value is None or value == "":
            return None
        items = _as_list(value)
        if not isinstance(items, list):
            return _json_safe(items)
        inside = (*where, at)
        return [element(v, problems, inside, i) for i, v in enumerate(items)]

    return convert


def _object_convert(model: type[BaseModel]) -> Convert:
    def convert(value: Any, problems: list[str], where: Where, at: str | int) -> Any:
        if not isinstance(value, Mapping):
            return _json_safe(value)
        return convert_model(model, value, problems, (*where, at))

    return convert


def _any_convert(value: Any, problems: list[str], where: Where, at: str | int) -> Any:
    return _json_safe(value)


@cache
def converter(kind: Kind) -> Convert:
    """The conversion of a field of ``kind`` (built once per kind)."""
    name, inner = kind
    if name == "object":
        return _object_convert(inner)
    if name == "list":
        return _list_convert(converter(inner))
    if name == "any":
        return _any_convert
    return _scalar_convert(name)


#: a field's conversion, with the type of value it takes as it is when it fits (``_fits``;
#: None: none), so that the commonest values cost no call
Step = tuple[type | None, Convert]
#: the kinds whose values of one type are taken as they are, when they fit
_TAKEN_AS_THEY_ARE: dict[str, type] = {"str": str, "int": int, "float": float, "bool": bool}


@cache
def converters_of(model: type[BaseModel]) -> dict[str, Convert]:
    """Each field of an item model with its conversion."""
    return {name: converter(kind) for name, kind in fields_of(model).items()}


@cache
def steps_of(model: type[BaseModel]) -> dict[str, Step]:
    """Each field of an item model with its conversion, and the type it takes at once."""
    return {name: (_TAKEN_AS_THEY_ARE.get(kind[0]), converters_of(model)[name])
            for name, kind in fields_of(model).items()}


def convert_model(model: type[BaseModel], data: Mapping[str, Any], problems: list[str],
                  where: Where = ()) -> Item:
    """The fields of ``model`` in ``data``, each as the model wants it, or as it was when it
    cannot be converted; a value the API cannot be given (see the module docstring) adds
    ``where: reason`` to ``problems`` and is kept as shown text. JSON-safe throughout.

    What the fields' conversions take at once (``_TAKEN_AT_ONCE``) — a null, ASCII text,
    an integer in range, a finite float, a flag, and an integer where text or a flag is
    wanted — is taken here, without the call: the loop runs for every field of every
    item."""
    steps = steps_of(model)
    item: Item = {}
    for name, value in data.items():
        step = steps.get(name)
        if step is None:
            continue
        taken, convert = step
        kind = type(value)
        if value is None:
            item[name] = None
        elif kind is taken and (kind is str and value.isascii()
                                or kind is int and MIN_INT <= value <= MAX_INT
                                or kind is float and isfinite(value) or kind is bool):
            item[name] = value
        elif kind is int and taken is str and MIN_INT <= value <= MAX_INT:
            item[name] = str(value)  # an id from an integer column: pydantic's text of it
        elif kind is int and taken is bool and (value == 0 or value == 1):
            item[name] = value == 1  # a flag from an integer column, as pydantic reads it
        else:
            item[name] = convert(value, problems, where, name)
    return item


class ColumnsMapping:
    """Stream ``X`` -> resource ``X``; see the module docstring."""

    platform: ClassVar[str] = "columns"
    produces: ClassVar[Mapping[str, tuple[str, ...]]] = {s: (s,) for s in STREAM_ORDER}

    def map(self, stream: str, record: RawRecord, ctx: MappingContext) -> Iterator[tuple[str, Item]]:
        if stream not in SYNC_RESOURCES:
            return
        spec = SYNC_RESOURCES[stream]
        fields = fields_of(spec.model)
        problems: list[str] = []
        item = convert_model(spec.model, record, problems)
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
        elif problems:
            item["_errors"] = problems  # the values the API cannot be given, by field
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

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
from collections.abc import Iterator, Mapping
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from functools import cache
from typing import Annotated, Any, ClassVar, Literal, Union, get_args, get_origin

import orjson
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from connectors.marketing.references import RESOURCE_ORDER
from connectors.marketing.resources import SYNC_RESOURCES
from connectors.sources.base import RawRecord
from connectors.sources.exact import describe_undecodable, escape_undecodable, undecodable
from pipelines.engine.mappings.base import Item, MappingContext, utc

#: streams are named after the resources they feed, reference data first (from the table
#: of who refers to whom)
STREAM_ORDER = RESOURCE_ORDER
_TRUE = frozenset({"1", "true", "t", "yes", "y", "on"})
_FALSE = frozenset({"0", "false", "f", "no", "n", "off"})
Kind = tuple[str, Any]  # (kind, element kind or nested model)
#: the integers the API takes (signed 64-bit), and the longest id made from a number
MIN_INT, MAX_INT = -(2**63), 2**63 - 1
MAX_ID_DIGITS = 191
#: integers a float holds exactly, each apart from its neighbours
EXACT_FLOAT = 2**53


class Unfit(ValueError):
    """A value the API cannot be given as the source holds it: the reason, and what to
    show of the value in the quarantined item."""

    def __init__(self, reason: str, shown: Any) -> None:
        super().__init__(reason)
        self.shown = shown


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else str(value)
    return repr(text) if len(text) <= 40 else repr(text[:30]) + f"… ({len(text):,} characters)"


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
        text = value.strip().replace(" ", "")
        if not text.isascii():  # Decimal("١٢") is 12: another shop's 12 is not this one
            if any(c.isdigit() and not c.isascii() for c in text):
                raise Unfit(f"{_short(value)} is not a number in ASCII digits", value)
            return None
        try:
            return Decimal(text)
        except InvalidOperation:
            return None
    return None


def _integral(number: Decimal | None, digits: int = MAX_ID_DIGITS) -> int | None:
    """The whole number ``number`` is (None when it is not one); more than ``digits``
    digits is refused before ``int()``, which would take ages on ``1e10000000``."""
    if number is None or not number.is_finite() or number != number.to_integral_value():
        return None
    if number and number.adjusted() >= digits:
        raise Unfit(f"{_short(number)} has more than {digits} digits", str(number))
    return int(number)


def _inexact_float(value: Any) -> bool:
    return isinstance(value, float) and abs(value) > EXACT_FLOAT


def _out_of_range(value: Any) -> Unfit:
    return Unfit(f"{_short(value)} is beyond the range of the API's integers (signed 64-bit)",
                 str(value))


def _in_range(whole: int, value: Any) -> int:
    if not MIN_INT <= whole <= MAX_INT:
        raise _out_of_range(value)
    return whole


def _scalar(kind: str, value: Any) -> Any:
    if value is None or (value == "" and kind != "str"):  # an empty CSV cell is a null
        return None
    if isinstance(value, str) and (found := undecodable(value)) is not None:
        raise Unfit(describe_undecodable(found, "text"), escape_undecodable(value)[:200])
    if _inexact_float(value) and kind in ("str", "int"):
        raise Unfit(f"{value!r} is a floating-point number beyond 2^53, which holds no"
                    " id or count exactly: keep it as an integer or text at the source",
                    repr(value))
    if kind == "str":
        if isinstance(value, bool):
            return value
        if isinstance(value, float | Decimal):
            whole = _integral(_number(value))
            return str(whole) if whole is not None else str(value)
        return str(value) if isinstance(value, int | str) else value
    if kind == "int":
        if isinstance(value, int) and not isinstance(value, bool):
            return _in_range(value, value)
        number = _number(value)
        if number is not None and number.is_infinite():
            raise Unfit(f"{_short(value)} is not a finite number", str(value))
        if number is not None and number.is_finite() and number and number.adjusted() >= 19:
            raise _out_of_range(value)  # 10^19 and beyond: never converted (1e10000000)
        whole = _integral(number)
        return _in_range(whole, value) if whole is not None else value
    if kind == "float":
        number = _number(value)
        if number is not None:
            as_float = float(number) if number.is_finite() else None
            if as_float is None or not math.isfinite(as_float):
                raise Unfit(f"{_short(value)} is not a finite number", str(value))
            return as_float
        return value
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
            except OverflowError:
                raise Unfit(f"{_short(value)} is past the range of dates (years 1 to 9999)"
                            " once in UTC", value) from None
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


def coerce(kind: Kind, value: Any, problems: list[str] | None = None, where: str = "") -> Any:
    """``value`` as a field of ``kind`` wants it, or as it was when it cannot be; a value
    the API cannot be given (see the module docstring) adds ``where: reason`` to
    ``problems`` and is kept as shown text."""
    name, inner = kind
    if name == "object":
        return coerce_model(inner, value, problems, where) if isinstance(value, Mapping) \
            else value
    if name == "list":
        if value is None or value == "":
            return None
        items = _as_list(value)
        return [coerce(inner, v, problems, f"{where}[{i}]") for i, v in enumerate(items)] \
            if isinstance(items, list) else items
    try:
        return _scalar(name, value)
    except Unfit as unfit:
        if problems is not None:
            problems.append(f"{where}: {unfit}" if where else str(unfit))
        return unfit.shown


def coerce_model(model: type[BaseModel], data: Mapping[str, Any],
                 problems: list[str] | None = None, where: str = "") -> Item:
    fields = fields_of(model)
    return {name: coerce(fields[name], value, problems, f"{where}.{name}" if where else name)
            for name, value in data.items() if name in fields}


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
        problems: list[str] = []
        item = _json_safe(coerce_model(spec.model, record, problems))
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

"""Custom data definitions and the typed values of their records, without HTTP routes.

A definition declares typed fields; every record value is checked against its field's type
here, so the definition routes (defaults) and the record routes (items) agree on what a
valid value is. Value rules (the spec shows only the type names; these are our choices):

* ``bool``: a JSON boolean. ``text``: a string of at most 255 characters; ``longtext``: a
  string of at most 65535. ``number``: an integer (``3.0`` counts as 3). ``decimal``: any
  JSON number. Numbers and booleans are never taken from strings: typing is strict, as on
  event triggers.
* ``list``: a JSON array of scalars. When the field declares ``options`` the value is one
  option (a single-choice list) or an array of options (multi-choice); it is stored as sent.
* ``date``: ``YYYY-MM-DD``. ``datetime``: an ISO 8601 date and time (offset optional).
* ``json``: a JSON object or array. ``geolocation``: ``{"lat": n, "lng": n}`` or ``"lat,lng"``
  with latitude in [-90, 90] and longitude in [-180, 180].
* ``null`` clears an optional field; a required field cannot be null.
* A field that is the ``sourceField`` of a relationship also takes a resolver object
  ``{"by": "id_contact" | "email" | "id_customer", "value": ...}``, resolved when the write
  is applied.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from datetime import date, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, model_validator

from sandbox.marketing.errors import json_type
from sandbox.marketing.limits import MAX_INT

FieldType = Literal[
    "bool", "text", "longtext", "number", "decimal", "list", "date", "datetime", "json",
    "geolocation",
]
RESOLVER_KEYS = ("id_contact", "email", "id_customer")
TEXT_MAX = 255
LONGTEXT_MAX = 65535
#: field names become columns: a letter or underscore, then letters, digits, underscores
_NAME = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"
_RESERVED = frozenset({"id"})

Name = Annotated[str, Field(pattern=_NAME)]
Scalar = str | int | float | bool


class FieldDef(BaseModel):
    """One typed field of a definition; ``default`` must be a valid value of ``type``."""

    model_config = ConfigDict(extra="forbid")

    name: Name
    label: str | None = None
    type: FieldType
    required: StrictBool = False
    description: str | None = None
    default: Any = None
    options: list[Scalar] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> FieldDef:
        if self.name in _RESERVED:
            raise ValueError(f"'{self.name}' is reserved: every record has its own id")
        if self.options and self.type != "list":
            raise ValueError(f"options: only list fields take options, this one is {self.type}")
        if self.options is not None and len(set(map(repr, self.options))) != len(self.options):
            raise ValueError("options: each option may appear only once")
        if self.default is not None:
            problem = type_error(self.model_dump(), self.default)
            if problem:
                raise ValueError(f"default: {problem}")
        if self.label is None:
            self.label = self.name
        return self


class Relationship(BaseModel):
    """A link from one of the definition's fields to a field of another schema."""

    model_config = ConfigDict(extra="forbid")

    sourceField: str = Field(min_length=1)
    targetSchemaType: Literal["system", "custom"]
    targetSchema: str = Field(min_length=1)
    targetField: str = Field(min_length=1)


def _duplicates(names: list[str]) -> list[str]:
    return sorted(n for n, times in Counter(names).items() if times > 1)


class DefinitionIn(BaseModel):
    """Body of ``POST /v1/custom-data-definitions``."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=191)
    description: str | None = None
    unique_keys: list[str] = Field(default_factory=list)
    fields: list[FieldDef] = Field(min_length=1)
    relationships: list[Relationship] = Field(default_factory=list)

    @model_validator(mode="after")
    def _references(self) -> DefinitionIn:
        names = [f.name for f in self.fields]
        problems = [f"fields: the name '{n}' is declared twice" for n in _duplicates(names)]
        problems += [
            f"unique_keys: '{k}' is not a declared field"
            f" (fields: {', '.join(dict.fromkeys(names))})"
            for k in self.unique_keys if k not in names
        ]
        problems += [f"unique_keys: '{k}' is listed twice" for k in _duplicates(self.unique_keys)]
        problems += [
            f"relationships[{i}].sourceField: '{r.sourceField}' is not a declared field"
            for i, r in enumerate(self.relationships) if r.sourceField not in names
        ]
        if problems:
            raise ValueError("; ".join(problems))
        return self


class ExtendIn(BaseModel):
    """Body of ``PATCH /v1/custom-data-definitions/{id}/extend``: fields to add."""

    model_config = ConfigDict(extra="forbid")

    fields: list[FieldDef] = Field(min_length=1)


# --- values --------------------------------------------------------------------------------


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _geolocation(value: Any) -> str | None:
    if isinstance(value, str):
        parts = value.split(",")
        try:
            lat, lng = (float(p) for p in parts) if len(parts) == 2 else (math.nan, math.nan)
        except ValueError:
            lat = lng = math.nan
    elif isinstance(value, dict) and set(value) == {"lat", "lng"}:
        lat, lng = value["lat"], value["lng"]
        if not (_is_number(lat) and _is_number(lng)):
            return 'expected {"lat": number, "lng": number}'
    else:
        return 'expected {"lat": number, "lng": number} or "lat,lng"'
    if math.isnan(lat) or math.isnan(lng):
        return 'expected "lat,lng" with two numbers'
    if not (-90 <= lat <= 90 and -180 <= lng <= 180):
        return "latitude must be within [-90, 90] and longitude within [-180, 180]"
    return None


def _list(value: Any, options: list[Any] | None) -> str | None:
    chosen = value if isinstance(value, list) else [value]
    if any(isinstance(v, list | dict) for v in chosen):
        return "list elements must be scalars (strings, numbers, booleans)"
    if options:
        # booleans apart: in Python True == 1, but the option 1 is not the option true
        allowed = {(isinstance(o, bool), o) for o in options}
        wrong = [v for v in chosen if (isinstance(v, bool), v) not in allowed]
        return f"{wrong[0]!r} is not one of the options {options!r}" if wrong else None
    if not isinstance(value, list):
        return f"expected an array, got {json_type(value)}"
    return None


def _datetime(value: str) -> bool:
    if not re.match(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}", value):
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def _date(value: str) -> bool:
    try:
        return bool(re.fullmatch(r"\d{4}-\d{2}-\d{2}", value)) and bool(date.fromisoformat(value))
    except ValueError:
        return False


def type_error(field: dict[str, Any], value: Any) -> str | None:
    """Why ``value`` (not null) is not a valid value of ``field``, or None when it is."""
    kind = field["type"]
    got = json_type(value)
    if kind == "bool":
        return None if isinstance(value, bool) else f"expected a boolean, got {got}"
    if kind in ("text", "longtext"):
        limit = TEXT_MAX if kind == "text" else LONGTEXT_MAX
        if not isinstance(value, str):
            return f"expected a string, got {got}"
        return None if len(value) <= limit else f"{kind} holds at most {limit} characters"
    if kind == "number":
        if _is_number(value) and float(value).is_integer():
            return None
        return f"expected an integer, got {repr(value) if _is_number(value) else got}"
    if kind == "decimal":
        return None if _is_number(value) else f"expected a number, got {got}"
    if kind == "list":
        return _list(value, field.get("options"))
    if kind == "date":
        ok = isinstance(value, str) and _date(value)
        return None if ok else f"expected a date as YYYY-MM-DD, got {value!r}"
    if kind == "datetime":
        ok = isinstance(value, str) and _datetime(value)
        return None if ok else f"expected an ISO 8601 datetime, got {value!r}"
    if kind == "json":
        return None if isinstance(value, dict | list) else f"expected an object or array, got {got}"
    return _geolocation(value)


def resolver_error(value: dict[str, Any]) -> str | None:
    """Why a relation resolver ``{by, value}`` is malformed, or None."""
    if set(value) != {"by", "value"}:
        return 'a relation resolver is {"by": ..., "value": ...} and nothing else'
    if value["by"] not in RESOLVER_KEYS:
        return f"by: must be one of {', '.join(RESOLVER_KEYS)}, got {value['by']!r}"
    if not isinstance(value["value"], str | int) or isinstance(value["value"], bool):
        return "value: must be a string or an integer"
    return None


def check_record(
    definition: dict[str, Any], raw: Any, *, partial: bool, allowed_extra: tuple[str, ...] = ()
) -> tuple[dict[str, Any], list[str]]:
    """The values of one record item, or every reason it is invalid.

    ``partial`` (updates) does not ask for required fields that are absent; a full item
    (inserts) gets the fields' defaults first. ``allowed_extra`` names keys that are not
    fields but may be present (``id`` on updates); they are left out of the values.
    """
    if not isinstance(raw, dict):
        return {}, [f"item: must be a JSON object, got {json_type(raw)}"]
    fields = {f["name"]: f for f in definition["fields"]}
    relations = {r["sourceField"] for r in definition.get("relationships", [])}
    errors: list[str] = []
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key in allowed_extra:
            continue
        if key == "id":
            errors.append("id: is assigned by the service; update a record by id with PUT")
            continue
        field = fields.get(key)
        if field is None:
            errors.append(
                f"{key}: is not a field of custom data definition '{definition['name']}'"
                f" (fields: {', '.join(fields)})"
            )
            continue
        if value is None:
            if field["required"]:
                errors.append(f"{key}: is required and cannot be null")
            values[key] = None
            continue
        if isinstance(value, dict) and "by" in value and key in relations:
            problem = resolver_error(value)
        else:
            problem = type_error(field, value)
        if problem:
            errors.append(f"{key}: {problem}")
        else:
            values[key] = value
    if not partial:
        for name, field in fields.items():
            if name not in raw and field.get("default") is not None:
                values[name] = field["default"]
            elif name not in raw and field["required"]:
                errors.append(f"{name}: is required")
        for key in definition.get("unique_keys", []):
            if values.get(key) is None and f"{key}: is required" not in errors:
                errors.append(f"{key}: is required (it is a unique key of this definition)")
    return values, errors


def record_id(raw: Any) -> int | None:
    """A record id from JSON or a query string: a positive 64-bit integer, or None."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, str) and raw.isascii() and raw.isdigit() and len(raw) <= 20:
        raw = int(raw)
    if isinstance(raw, int) and 1 <= raw <= MAX_INT:
        return raw
    return None


def resolve_relations(
    definition: dict[str, Any],
    values: dict[str, Any],
    contacts: dict[str, dict[str, Any]],
    customers: Iterable[dict[str, Any]],
) -> dict[str, Any]:
    """``values`` with each resolver ``{by, value}`` replaced by the related contact's (or
    customer's, when the relationship targets customers) ``targetField``; null when nobody
    matches. ``contacts`` are keyed by lowercased email, as the store keeps them."""
    relations = {r["sourceField"]: r for r in definition.get("relationships", [])}
    resolved = dict(values)
    for name, value in values.items():
        if not (isinstance(value, dict) and "by" in value and name in relations):
            continue
        by, wanted = value["by"], str(value["value"])
        if by == "email":
            target = contacts.get(wanted.lower())
        else:
            key = "id_shop_contact" if by == "id_contact" else "id_customer_shop"
            target = next((c for c in contacts.values() if str(c.get(key)) == wanted), None)
        relation = relations[name]
        if target is not None and relation["targetSchema"] == "customers":
            customer_id = target.get("id_customer_shop")
            target = next((c for c in customers if c.get("customer_id") == customer_id), None)
        resolved[name] = target.get(relation["targetField"]) if target else None
    return resolved


# --- request bodies of the override priorities ---------------------------------------------

MAX_OVERRIDES_PER_FIELD = 3
"""Overrides per (target_schema, system_field) pair (spec, Limits)."""


class OverrideIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id_custom_data_definition: Annotated[int, Field(strict=True, ge=1)]
    custom_field_name: str = Field(min_length=1)
    priority: Annotated[int, Field(strict=True, ge=1)]


class OverridesIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    overrides: list[OverrideIn]

"""The rules of custom events, without HTTP: event type bodies and trigger payloads.

Kept apart from the routes so the rules can be read, and tested, as one piece.

**Event types.** ``properties`` has up to four slots, ``metaData``, ``customData``,
``contact.customData`` and ``visitor.customData``, each a list of field declarations
``{name, type, required, description}``. The target slots may be sent flat
(``"contact.customData": [...]``) or nested (``"contact": {"customData": [...]}``); both are
stored in one normalised form: all four slots, flat dotted keys, every declaration with all
four keys (``required`` defaults to false, ``description`` to null). ``code_name`` is one
ASCII alphanumeric word or two joined by one ``.`` or ``_`` (``Resource.Action``,
``Resource_Action``); it is matched case-sensitively.

**Trigger payloads.** Top-level keys: ``metaData``, ``customData`` (objects), ``contact``
(``id``, ``email``, ``phone``, ``customData``) and ``visitor`` (``id``, ``customData``). Every
violation is collected, in this order: structure, then slots in the order above, within a
slot declared fields in declaration order and then undeclared keys in payload order.
Messages about declared fields (the first two forms are the spec's, the third is ours, as
the spec does not show it):

* ``Missing required property: <slot>.<name>`` — a field declared ``required: true`` is
  absent. Required means required in every slot: an event whose ``contact.customData``
  has a required field cannot be fired without a ``contact`` carrying it.
* ``Invalid type for property: <slot>.<name>. Expected <type>, got <type>`` — the "got"
  type is named in the schema's vocabulary: ``bool``, ``text``, ``number``, ``json``
  (object or array) or ``null``. ``text``/``longtext`` take strings; ``number``/``decimal``
  take any JSON number but not a boolean; ``date`` takes a string parseable as an ISO 8601
  date or datetime (any other string is "got text"); ``json`` takes an object or an array;
  null matches no type.
* ``Undeclared property: <slot>.<name>`` — a key the slot does not declare.

Structural messages (also ours): ``Unknown property: <key> (...)`` for keys outside the
shapes above, ``At least one of contact or visitor is required``, ``contact must carry at
least one of id, email, phone``, ``visitor must carry id``, ``<where> must be an object,
got <json type>`` and ``<where> must be <what>, got <json type>`` for identifiers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    WithJsonSchema,
    field_validator,
)

from sandbox.marketing.errors import describe_validation_error, json_type

__all__ = [
    "CODE_NAME_RULE",
    "SLOTS",
    "EventIn",
    "EventPatch",
    "Target",
    "check_code_name",
    "check_trigger",
    "parse_event",
    "target_of",
]

SLOTS = ("metaData", "customData", "contact.customData", "visitor.customData")
FieldType = Literal["bool", "text", "longtext", "number", "decimal", "date", "json"]

CODE_NAME_RULE = (
    "must be one alphanumeric word (OrderShipped) or two alphanumeric words joined"
    " by one '.' or '_' (Resource.Action or Resource_Action); spaces and special characters"
    " are not allowed"
)
#: the rule above as a pattern, for the OpenAPI document (``check_code_name`` applies it)
CODE_NAME_PATTERN = "^[A-Za-z0-9]+([._][A-Za-z0-9]+)?$"
_CODE_NAME = WithJsonSchema({"type": "string", "pattern": CODE_NAME_PATTERN})
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_TOP_LEVEL = ("metaData", "customData", "contact", "visitor")
_TARGET_KEYS = {"contact": ("id", "email", "phone", "customData"), "visitor": ("id", "customData")}


def check_code_name(value: str) -> str:
    """``value`` if it is a valid code_name; ValueError stating the rule otherwise."""
    separators = [c for c in value if c in "._"]
    words = value.replace("_", ".").split(".")
    if len(separators) > 1 or not all(words) or not all(set(w) <= _ALNUM for w in words):
        raise ValueError(f"{CODE_NAME_RULE}, got {value!r}")
    return value


class FieldDecl(BaseModel):
    """One field of a slot: the key expected in the payload and its type."""

    model_config = ConfigDict(extra="forbid")

    name: Annotated[StrictStr, Field(min_length=1)]
    type: FieldType
    required: StrictBool = False
    description: StrictStr | None = None


class EventProperties(BaseModel):
    """The payload schema; slots are read by their wire names (``contact.customData``)."""

    model_config = ConfigDict(extra="forbid")

    meta_data: list[FieldDecl] = Field(default_factory=list, alias="metaData")
    custom_data: list[FieldDecl] = Field(default_factory=list, alias="customData")
    contact_custom_data: list[FieldDecl] = Field(
        default_factory=list, alias="contact.customData"
    )
    visitor_custom_data: list[FieldDecl] = Field(
        default_factory=list, alias="visitor.customData"
    )

    @field_validator("*")
    @classmethod
    def _unique_names(cls, fields: list[FieldDecl]) -> list[FieldDecl]:
        names = [f.name for f in fields]
        twice = sorted(n for n, times in Counter(names).items() if times > 1)
        if twice:
            raise ValueError(f"field names must be unique in a slot; repeated: {twice}")
        return fields

    def normalised(self) -> dict[str, list[dict[str, Any]]]:
        return self.model_dump(by_alias=True)


def _not_null(value: Any) -> Any:
    if value is None:
        raise ValueError("cannot be null; leave the key out to keep the current value")
    return value


class EventIn(BaseModel):
    """createEvent body. ``properties`` may be left out: an event without a schema."""

    model_config = ConfigDict(extra="forbid")

    name: Annotated[StrictStr, Field(min_length=1)]
    code_name: Annotated[StrictStr, _CODE_NAME]
    properties: EventProperties = Field(default_factory=EventProperties)

    _code_name = field_validator("code_name")(check_code_name)


def _no_null(schema: dict[str, Any]) -> None:
    """The OpenAPI document shows a key that may be left out but not be null (``_not_null``)."""
    schema.pop("default", None)
    if "anyOf" in schema:
        kept = [branch for branch in schema.pop("anyOf") if branch != {"type": "null"}]
        schema.update(kept[0] if len(kept) == 1 else {"anyOf": kept})


class EventPatch(BaseModel):
    """updateEvent body: the given keys replace the current ones (``properties`` whole)."""

    model_config = ConfigDict(extra="forbid")

    id_event: StrictInt
    name: Annotated[StrictStr, Field(min_length=1)] | None = Field(None, json_schema_extra=_no_null)
    code_name: Annotated[StrictStr, _CODE_NAME] | None = Field(None, json_schema_extra=_no_null)
    properties: EventProperties | None = Field(None, json_schema_extra=_no_null)

    _present = field_validator("name", "code_name", "properties", mode="before")(_not_null)

    @field_validator("code_name")
    @classmethod
    def _code_name(cls, value: str | None) -> str | None:
        return None if value is None else check_code_name(value)


M = TypeVar("M", EventIn, EventPatch)


def _flatten_slots(properties: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Nested target slots (``contact: {customData}``) as flat dotted keys."""
    flat = {k: v for k, v in properties.items() if k not in ("contact", "visitor")}
    problems: list[str] = []
    for owner in ("contact", "visitor"):
        if owner not in properties:
            continue
        nested = properties[owner]
        if not isinstance(nested, Mapping):
            problems.append(
                f'properties.{owner}: must be an object like {{"customData": [...]}},'
                f" got {json_type(nested)}"
            )
            continue
        for key, value in nested.items():
            dotted = f"{owner}.{key}"
            if dotted in flat:
                problems.append(f"properties.{dotted}: given both flat and nested; give one form")
            else:
                flat[dotted] = value
    return flat, problems


def parse_event(model: type[M], raw: Mapping[str, Any]) -> tuple[M | None, list[str]]:
    """Validate a createEvent/updateEvent body; the model, or every problem found."""
    body = dict(raw)
    problems: list[str] = []
    if isinstance(body.get("properties"), Mapping):
        body["properties"], problems = _flatten_slots(body["properties"])
    try:
        parsed = model.model_validate(body)
    except ValidationError as exc:
        problems += describe_validation_error(exc)
        parsed = None
    return (None, problems) if problems else (parsed, [])


# --- trigger payloads ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Target:
    """Whom a firing is about, as the payload identifies it."""

    type: Literal["contact", "visitor"]
    id: int | str | None = None
    email: str | None = None
    phone: str | None = None

    def as_doc(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"type": self.type}
        doc.update({k: v for k in ("id", "email", "phone") if (v := getattr(self, k)) is not None})
        return doc


def target_of(payload: Mapping[str, Any]) -> Target:
    """The target of a valid payload: the contact when there is one, else the visitor."""
    contact = payload.get("contact")
    if isinstance(contact, Mapping):
        return Target("contact", contact.get("id"), contact.get("email"), contact.get("phone"))
    return Target("visitor", payload["visitor"]["id"])


def _schema_type(value: Any) -> str:
    """A payload value's type in the schema's vocabulary."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "text"
    return "json"


def _is_iso_date(value: str) -> bool:
    try:
        datetime.fromisoformat(value)  # takes dates too (Python 3.11+)
    except ValueError:
        return False
    return True


def _matches(declared: str, value: Any) -> bool:
    got = _schema_type(value)
    if declared in ("text", "longtext"):
        return got == "text"
    if declared in ("number", "decimal"):
        return got == "number"
    if declared == "date":
        return got == "text" and _is_iso_date(value)
    return got == declared


def _check_slot(
    slot: str, declared: list[Mapping[str, Any]], data: Mapping[str, Any]
) -> list[str]:
    problems: list[str] = []
    names = set()
    for decl in declared:
        name = decl["name"]
        names.add(name)
        if name not in data:
            if decl.get("required"):
                problems.append(f"Missing required property: {slot}.{name}")
        elif not _matches(decl["type"], data[name]):
            problems.append(
                f"Invalid type for property: {slot}.{name}. Expected {decl['type']},"
                f" got {_schema_type(data[name])}"
            )
    problems += [f"Undeclared property: {slot}.{key}" for key in data if key not in names]
    return problems


def _identifier(owner: Mapping[str, Any], where: str, key: str, problems: list[str]) -> bool:
    """Whether ``owner[key]`` is a usable identifier; reports a wrong one."""
    if key not in owner:
        return False
    value = owner[key]
    numeric_ok = key == "id"
    if isinstance(value, str) and value.strip():
        return True
    if numeric_ok and isinstance(value, int) and not isinstance(value, bool):
        return True
    what = "an integer or a non-empty string" if numeric_ok else "a non-empty string"
    shown = "empty string" if value == "" else json_type(value)
    problems.append(f"{where}.{key} must be {what}, got {shown}")
    return True


def _structure(payload: Mapping[str, Any]) -> tuple[dict[str, Mapping[str, Any] | None], list[str]]:
    """Check the shape around the slots; return each slot's data (None when unusable)."""
    problems = [
        f"Unknown property: {key} (the payload accepts {', '.join(_TOP_LEVEL)})"
        for key in payload
        if key not in _TOP_LEVEL
    ]
    if "contact" not in payload and "visitor" not in payload:
        problems.append("At least one of contact or visitor is required")
    raw: dict[str, Any] = {slot: payload.get(slot, {}) for slot in ("metaData", "customData")}
    for owner, keys in _TARGET_KEYS.items():
        target = payload.get(owner, {})
        if not isinstance(target, Mapping):
            problems.append(f"{owner} must be an object, got {json_type(target)}")
            continue
        raw[f"{owner}.customData"] = target.get("customData", {})
        if owner not in payload:
            continue
        problems += [
            f"Unknown property: {owner}.{key} ({owner} accepts {', '.join(keys)})"
            for key in target
            if key not in keys
        ]
        identifiers = [key for key in keys if key != "customData"]
        # a list, not a generator: every identifier is checked, so all its problems are told
        if not any([_identifier(target, owner, key, problems) for key in identifiers]):  # noqa: C419
            problems.append(f"{owner} must carry {_one_of(identifiers)}")
    slots: dict[str, Mapping[str, Any] | None] = {}
    for slot in SLOTS:
        data = raw.get(slot)
        if slot in raw and not isinstance(data, Mapping):
            problems.append(f"{slot} must be an object, got {json_type(data)}")
        slots[slot] = data if isinstance(data, Mapping) else None
    return slots, problems


def _one_of(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"at least one of {', '.join(names)}"


def check_trigger(
    properties: Mapping[str, list[Mapping[str, Any]]], payload: Mapping[str, Any]
) -> list[str]:
    """Every violation of ``payload`` against an event's normalised ``properties``."""
    slots, problems = _structure(payload)
    for slot in SLOTS:
        data = slots[slot]
        if data is not None:
            problems += _check_slot(slot, list(properties.get(slot) or []), data)
    return problems

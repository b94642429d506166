"""Reading the webservice's values, which differ by version and setup: numbers as strings
(1.7) or numbers (8), booleans ``"0"``/``"1"``, zero dates, shop-local times without an
offset, multilingual fields as ``[{"id", "value"}]`` or a plain string, and an empty list
as a bare ``[]``. Shared by the connector and the mapping."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo

from connectors.sources.base import SourceError

LOCAL_FORMAT = "%Y-%m-%d %H:%M:%S"
#: the lowest bound a date filter can use: zero dates sort before every real one
ZERO_DATE = "0000-00-00 00:00:00"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@lru_cache(maxsize=64)
def zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)


def is_zero_date(text: Any) -> bool:
    return not text or str(text).startswith("0000-00-00")


def local_to_utc(text: Any, tz: str) -> datetime | None:
    """A shop-local ``YYYY-MM-DD[ HH:MM:SS]`` as an aware UTC time; None for a zero or empty
    date. In the hour repeated when clocks go back, the earlier instant is taken (fold=0):
    the text cannot tell, and this keeps the mapping from local to UTC monotonic."""
    if is_zero_date(text):
        return None
    value = str(text).strip()
    try:
        naive = datetime.strptime(value, LOCAL_FORMAT) if len(value) > 10 \
            else datetime.strptime(value, "%Y-%m-%d")
    except ValueError:
        raise SourceError(f"PrestaShop sent a date PrestaShop never writes: {value!r}") from None
    return naive.replace(tzinfo=zone(tz), fold=0).astimezone(UTC)


def utc_to_local(moment: datetime, tz: str) -> str:
    """The shop's wall-clock text of an instant, whole seconds (rounded down)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(zone(tz)).strftime(LOCAL_FORMAT)


def utc_text(text: Any, tz: str) -> str | None:
    """A shop-local time as ISO 8601 UTC with ``Z``; None for zero or empty dates."""
    moment = local_to_utc(text, tz)
    return None if moment is None else moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def as_int(value: Any, default: int = 0) -> int:
    """An integer from a number or its text (``"12"``, ``12``, ``"12.000000"``), exact —
    never through a float, which would merge ids past 2^53; ``default`` for what is not one
    (or is too long to be one: ``1e10000000`` is not converted)."""
    if value in (None, "", False):
        return default
    if isinstance(value, int):
        return int(value)  # True is 1
    text = str(value).strip()
    if not text.isascii():
        return default
    try:
        number = Decimal(text)
    except InvalidOperation:
        return default
    if not number.is_finite() or (number and number.adjusted() > 40):
        return default
    return int(number)


def as_float(value: Any) -> float:
    try:
        return float(value) if value not in (None, "") else 0.0
    except (TypeError, ValueError):
        return 0.0


def as_bool(value: Any) -> bool:
    return str(value).strip().lower() in ("1", "true")


def listed(body: Any, resource: str) -> list[dict[str, Any]]:
    """The records of a list answer: ``{"orders": [...]}``, or a bare ``[]`` for an empty
    list (PrestaShop 1.7, issues 10172 and 22760)."""
    if isinstance(body, list):
        if body:
            raise SourceError(f"GET {resource} answered a bare list of {len(body)} items;"
                              " expected an object keyed by the resource")
        return []
    if isinstance(body, dict):
        records = body.get(resource, [])
        if isinstance(records, list):
            return [r for r in records if isinstance(r, dict)]
    raise SourceError(f"GET {resource} answered something that is not a list of {resource}")


def translations(value: Any, languages: dict[str, str]) -> dict[str, str]:
    """A multilingual field as ``{iso code: text}`` over ``languages`` (language id -> iso
    code, the languages read). PrestaShop sends ``[{"id": "1", "value": "…"}, …]``, or a
    plain string when one language only is active or asked for."""
    if isinstance(value, list):
        out = {}
        for entry in value:
            if isinstance(entry, dict) and str(entry.get("id")) in languages:
                out[languages[str(entry["id"])]] = "" if entry.get("value") is None \
                    else str(entry["value"])
        return out
    text = "" if value is None else str(value)
    return {iso: text for iso in languages.values()}


def association(record: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """``associations.<name>``: PrestaShop leaves an empty association out altogether."""
    linked = (record.get("associations") or {}).get(name) or []
    return [e for e in linked if isinstance(e, dict)] if isinstance(linked, list) else []

"""The one mapping interface every platform implements, and the per-source overrides.

A platform mapping turns one raw record of a stream into zero or more target items (an
order record gives one order; a product gives the product, its variations and images).
The source's configuration may then override fields per target resource: constants
(``set``), values taken from another path of the raw record (``rename``) and a Python
callable ``fn(item, record) -> item`` for the rest.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar, Protocol

from connectors.marketing.resources import SYNC_RESOURCES
from connectors.sources.base import RawRecord
from pipelines.engine.config import ResourceMapping

Item = dict[str, Any]


@dataclass(frozen=True)
class MappingContext:
    """What a mapping needs besides the record: the shop's defaults and the data source."""

    shop_url: str
    lang: str
    currency: str
    id_data_source: int | None


@dataclass(frozen=True)
class MappedItem:
    resource: str
    key: str
    item: Item
    source_record_id: str
    #: when the source record last changed (its stream position's time)
    changed_at: datetime | None = None


class PlatformMapping(Protocol):
    platform: ClassVar[str]
    #: stream -> the target resources its records become, reference data first
    produces: ClassVar[Mapping[str, tuple[str, ...]]]

    def map(self, stream: str, record: RawRecord, ctx: MappingContext) -> Iterator[tuple[str, Item]]:
        """The (resource, item) pairs of one raw record."""


def item_key(resource: str, item: Item) -> str:
    """An item's identity within its resource (and data source), as the ledger keys it."""
    spec = SYNC_RESOURCES[resource]
    return "|".join(str(item.get(field)) for field in spec.key_fields)


#: ISO 8601 text already in UTC (``Z`` or ``+00:00``, with or without a fraction, a year
#: from 1000): once ``datetime.fromisoformat`` takes it, what ``utc`` writes of it is its
#: first 19 characters and ``Z`` (most timestamps a connector passes on: not converted)
_UTC_TEXT = re.compile(r"[1-9][0-9]{3}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"
                       r"(\.[0-9]{1,9})?(Z|\+00:00)")


def utc(text: str | None) -> str | None:
    """A platform timestamp as ISO 8601 UTC with ``Z``; naive ones are taken as UTC."""
    if not text:
        return None
    if (in_utc := utc_as_written(text)) is not None:
        return in_utc
    # not fromisoformat(text) alone: it refuses a date with Z ("2024-05-01Z"), this accepts it
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))  # noqa: FURB162
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def utc_as_written(text: str) -> str | None:
    """``utc``'s answer for text already in UTC, without converting it (None: other text;
    ``ValueError``, as from ``utc``, when its date or time does not exist): the commonest
    timestamps, at once."""
    if _UTC_TEXT.fullmatch(text) is None:
        return None
    datetime.fromisoformat(text.replace("Z", "+00:00"))  # noqa: FURB162 - see utc
    return text[:19] + "Z"


def money(value: Any) -> float:
    """Money as the API's number: platforms send strings like ``"29.35"``."""
    if value in (None, ""):
        return 0.0
    return round(float(value), 2)


def _path(record: Mapping[str, Any], path: str) -> Any:
    value: Any = record
    for part in path.split("."):
        if isinstance(value, Mapping):
            value = value.get(part)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def load_callable(dotted: str) -> Callable[[Item, RawRecord], Item]:
    module, _, name = dotted.partition(":")
    target: Any = importlib.import_module(module)
    for part in name.split("."):
        target = getattr(target, part)
    if not callable(target):
        raise TypeError(f"{dotted} is not callable")
    return target


class Overrides:
    """A source's mapping overrides, resolved once (callables imported at start)."""

    def __init__(self, config: Mapping[str, ResourceMapping]) -> None:
        self._config = dict(config)
        self._callables = {
            resource: load_callable(rule.callable)
            for resource, rule in self._config.items()
            if rule.callable
        }

    def apply(self, resource: str, item: Item, record: RawRecord) -> Item:
        rule = self._config.get(resource)
        if rule is None:
            return item
        item = {**item, **rule.set}
        for target, path in rule.rename.items():
            item[target] = _path(record, path)
        fn = self._callables.get(resource)
        return fn(item, record) if fn else item


def map_record(
    mapping: PlatformMapping,
    overrides: Overrides,
    stream: str,
    record: RawRecord,
    ctx: MappingContext,
    source_record_id: str,
    changed_at: datetime | None = None,
) -> Iterator[MappedItem]:
    """Every target item of one raw record, overridden and attributed to the data source."""
    for resource, item in mapping.map(stream, record, ctx):
        if ctx.id_data_source is not None:
            item["id_data_source"] = ctx.id_data_source
        item = overrides.apply(resource, item, record)  # may route items to another source
        yield MappedItem(resource, item_key(resource, item), item, source_record_id, changed_at)

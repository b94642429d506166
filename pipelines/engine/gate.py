"""What holds a mapped item back before it is sent: what the connector or the mapping said
of it, the bounds (limits.py), JSON, the item model, then the resource's quality suite.
A held item is quarantined with its reasons; the rest of its chunk flows on."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import Any

import orjson
from pydantic import BaseModel

from connectors.marketing.items import validate_item
from connectors.marketing.resources import SYNC_RESOURCES
from pipelines.engine.diff import content_hash
from pipelines.engine.limits import item_bounds, ledger_safe
from pipelines.engine.mappings.base import Item, MappedItem
from pipelines.engine.quality import Held, HeldTally, Pool, check_chunk, check_items
from pipelines.engine.quality import held as holds
from pipelines.engine.quality.frame import (
    ChunkLines,
    Row,
    has_lines,
    row_lines,
    row_values,
    suite_row,
)
from pipelines.engine.reasons import why
from pipelines.engine.state import ItemStatus, Outcome, StateStore
from pipelines.engine.stream_report import StreamReport

#: what the quality suite is given of an item whose suite row it has (it reads the rows)
_UNREAD: Mapping[str, Any] = MappingProxyType({})
#: ledger states whose content the API already has
SETTLED = frozenset({ItemStatus.ACCEPTED, ItemStatus.VISIBLE})
#: held back until the source changes the item: invalid, or refused too often
HELD = frozenset({ItemStatus.QUARANTINED, ItemStatus.PARKED})

#: items, their lines' product ids (``ChunkLines``) and their languages (None: read from
#: the items) -> the ids the quality suite may take as known, by resource (None: no lines)
Known = Callable[[list[MappedItem], ChunkLines, list[str | None] | None],
                 dict[str, set[str]] | None]


def hash_of(mapped: MappedItem, unwritable: dict[str, str]) -> str:
    """The item's content hash; for an item JSON cannot hold (an integer past 64 bits,
    nesting past orjson's limit), the hash of what the ledger keeps of it, and the
    reason in ``unwritable``."""
    try:
        return content_hash(mapped.item)
    except (TypeError, ValueError, OverflowError, RecursionError) as exc:
        unwritable[mapped.key] = f"the item cannot be written as JSON: {why(exc)}"
        return content_hash(ledger_safe(mapped.item))


@dataclass(frozen=True)
class PrecheckedItem(MappedItem):
    """A mapped item with what the gate finds of it alone — its content hash, why it is
    held back before the diff (None: it may go on), and what the quality suite reads of it
    — found where it was mapped: a read process does this work beside the run
    (``precheck``)."""

    content_hash: str = ""
    hold: Held | None = None
    #: ``quality.frame.suite_row`` of an item not held back (None: not taken)
    suite_row: Row | None = None


class EncodedItem(PrecheckedItem):
    """A prechecked item not held back, as its JSON (``body``): a read process encodes each
    such item once, and it is sent and recorded as that text (``payload_of``). Its fields
    are decoded only where something reads them (``item``): an item the quality suite holds
    back, a dry run's samples. Travelling so, an item costs the run a bytes object instead
    of a dict and everything in it."""

    body: bytes

    def __init__(self, resource: str, key: str, body: bytes, source_record_id: str,
                 changed_at: datetime | None, content_hash: str, suite_row: Row | None
                 ) -> None:
        # frozen: set at once, as the fields' values (0.3 against 0.9 µs an item, one each)
        self.__dict__.update(resource=resource, key=key, body=body,
                             source_record_id=source_record_id, changed_at=changed_at,
                             content_hash=content_hash, hold=None, suite_row=suite_row)

    @property
    def item(self) -> Item:
        """The item's fields, decoded from ``body`` when first read."""
        decoded: Item | None = self.__dict__.get("_decoded")
        if decoded is None:
            decoded = orjson.loads(self.body)
            object.__setattr__(self, "_decoded", decoded)
        return decoded


def payload_of(mapped: MappedItem) -> Item | orjson.Fragment:
    """What to send and record of ``mapped``: its JSON as it came (``EncodedItem``), else
    the item."""
    return orjson.Fragment(mapped.body) if isinstance(mapped, EncodedItem) else mapped.item


def encoded(mapped: MappedItem, hold: Held | None) -> bytes | None:
    """The JSON of an item not held back, as ``payload_of`` sends it (None: held back, or
    JSON cannot hold it, so it travels as it is)."""
    if hold is not None:
        return None
    try:
        return orjson.dumps(mapped.item)
    except (TypeError, ValueError, OverflowError, RecursionError):
        return None


def precheck(mapped: MappedItem) -> tuple[str, Held | None, Row | None] | None:
    """The hash, hold and suite row of ``mapped`` (a ``PrecheckedItem``'s), as ``hash_of``,
    ``problems`` and ``suite_row`` find them; None when they cannot be found here (the run
    then finds them, and says why)."""
    spec = SYNC_RESOURCES.get(mapped.resource)
    if spec is None:
        return None
    unwritable: dict[str, str] = {}
    try:
        content = hash_of(mapped, unwritable)
        hold = problems(spec.model, mapped, unwritable.get(mapped.key))
        return content, hold, None if hold else suite_row(mapped.resource, mapped.item)
    except Exception:  # noqa: BLE001 - whatever it is, the run meets it where it reports it
        return None


def hashes_of(latest: dict[str, MappedItem], unwritable: dict[str, str]) -> dict[str, str]:
    """The content hashes of ``latest`` by key: found already, or now (``hash_of``)."""
    return {key: m.content_hash if isinstance(m, PrecheckedItem) else hash_of(m, unwritable)
            for key, m in latest.items()}


def unchanged_left_out(resource: str, latest: dict[str, MappedItem], hashes: dict[str, str],
                       known: dict[str, tuple[str, ItemStatus]], report: StreamReport
                       ) -> list[MappedItem]:
    """The items worth checking and sending: all but those the ledger holds (``known``) with
    the same content as settled (counted unchanged) or held back (until the source changes
    them)."""
    changed = []
    for key, mapped in latest.items():
        content_hash, status = known.get(key, ("", None))
        if status is not None and content_hash == hashes[key] and (
            status in SETTLED or status in HELD
        ):
            report.add(resource, "unchanged" if status in SETTLED else status.value)
            continue
        changed.append(mapped)
    return changed


def problems(model: type[BaseModel], mapped: MappedItem, unwritable: str | None) -> Held | None:
    """Why the item is held back, and by which stage's rules (None: it may be sent). A
    connector that could not read a record, or a mapping that failed, says why; then
    the bounds (limits.py), then the item model. Found already for a ``PrecheckedItem``."""
    if isinstance(mapped, PrecheckedItem):
        return mapped.hold
    if reasons := [str(r) for r in mapped.item.get("_errors") or ()]:
        return holds.carried_errors(reasons, model.model_fields)
    if bounds := item_bounds(mapped.item):
        return holds.bounds_broken(bounds)
    if unwritable is not None:
        return holds.unwritable(unwritable)
    try:
        reasons = validate_item(model, mapped.item)
    except Exception as exc:  # noqa: BLE001 - a validator that breaks holds one item back
        reasons = [f"item: cannot be validated: {why(exc)}"]
    return holds.model_refused(reasons) if reasons else None


def check_quality(
    resource: str,
    items: list[MappedItem],
    hashes: dict[str, str],
    outcomes: list[Outcome],
    report: StreamReport,
    tally: HeldTally,
    known_products: Known,
    pool: Pool | None = None,
) -> list[MappedItem]:
    """Run the resource's quality suite; quarantine the items breaking a blocking rule
    (with the rules' names as reasons) and return the others. An item the suite cannot
    run on is held back too, and counted in ``tally``. ``pool``: the stream's, where its
    warnings judged row by row gather (``quality.Pool``)."""
    if not items:
        return items
    rows = _rows_taken(items)
    keys = [m.key for m in items]
    # each field read once, for the look-up and the suite: an item is read in a pass per
    # field, and a pass over a chunk's items costs a cache miss each
    read: dict[str, list[Any]] = {}
    chunk: list[Mapping[str, Any]]
    if rows is None:
        chunk = [m.item for m in items]
        lines, langs = (ChunkLines.read(chunk), [item.get("lang") for item in chunk]
                        ) if has_lines(resource) else (None, None)
        if langs is not None:
            read["lang"] = langs
    else:
        # the suite reads the rows taken where the items were read, none of the items: one
        # that came as its JSON is not decoded for it
        chunk = [_UNREAD] * len(items)
        lines = row_lines(resource, rows)
        langs = row_values(resource, rows, "lang")
    known = known_products(items, lines, langs) if lines is not None else None
    failures: dict[str, list[str]] = {}
    try:
        quality = check_chunk(resource, keys, chunk, known=known, after_models=True,
                              pool=pool, lines=lines, rows=rows, read=read)
        report.quality.setdefault(resource, []).append(quality)
        failures = {key: quality.reasons(key) for key in quality.failures}
    except Exception:  # noqa: BLE001 - one odd item must not fail the chunk: find it
        for mapped in items:
            try:
                single = check_items(resource, [(mapped.key, mapped.item)], known=known,
                                     after_models=True)
            except Exception as exc:  # noqa: BLE001
                crashed = holds.suite_crashed(f"quality: the checks cannot run on this"
                                              f" item: {why(exc)}")
                tally.add(mapped.key, crashed)
                failures[mapped.key] = crashed.reasons
                continue
            report.quality.setdefault(resource, []).append(single)
            if mapped.key in single.failures:
                failures[mapped.key] = single.reasons(mapped.key)
    if not failures:
        return items
    kept = []
    for mapped in items:
        if mapped.key in failures:
            report.add(resource, "quarantined")
            outcomes.append(Outcome(mapped.key, hashes[mapped.key], ItemStatus.QUARANTINED,
                                    mapped.source_record_id, failures[mapped.key],
                                    mapped.item, mapped.changed_at))
        else:
            kept.append(mapped)
    return kept


def _rows_taken(items: list[MappedItem]) -> list[Row] | None:
    """The items' suite rows, when their read process took every one (None: the suite reads
    the items)."""
    first = items[0]
    if not isinstance(first, PrecheckedItem) or first.suite_row is None:
        return None  # mapped in the run: not one was prechecked
    taken = [m.suite_row for m in items
             if isinstance(m, PrecheckedItem) and m.suite_row is not None]
    return taken if len(taken) == len(items) else None


class KnownProducts:
    """The ids of the products items' lines refer to that the ledger holds as sent (for the
    "lines refer to known products" rule); each product key is looked up once per run."""

    def __init__(self, state: StateStore, source: str, lang: str) -> None:
        self.state = state
        self.source = source
        self.lang = lang
        self._known: set[str] = set()
        #: language -> the products looked up in it
        self._asked: dict[str, set[str]] = {}

    def __call__(self, items: list[MappedItem], lines: ChunkLines | None = None,
                 langs: list[str | None] | None = None) -> dict[str, set[str]] | None:
        """``lines`` and ``langs``: the items' lines and each one's language, when the
        caller has them. None for items without lines."""
        if lines is None:
            lines = ChunkLines.read(m.item for m in items)
        if langs is None:
            langs = [m.item.get("lang") for m in items]
        named: dict[str, set[str]] = {}  # lang -> the products lines in that language name
        for lang, ids in lines.by_lang(langs).items():
            named.setdefault(lang or self.lang, set()).update(ids)
        if not named:
            return None
        # each in its item's language, and in the source's; each pair once a run, and only
        # the new ones formatted as keys
        fresh: dict[str, set[str]] = {}
        for lang, wanted in [(self.lang, set().union(*named.values())),
                             *((lang, ids) for lang, ids in named.items() if lang != self.lang)]:
            if new := wanted - self._asked.get(lang, set()):
                fresh[lang] = new
        if fresh:
            found = self.state.states(self.source, "products", sorted(
                f"{product}|{lang}" for lang, new in fresh.items() for product in new))
            self._known.update(key.split("|", 1)[0] for key, (_, status) in found.items()
                               if status in SETTLED)
            for lang, new in fresh.items():
                self._asked.setdefault(lang, set()).update(new)
        return {"products": self._known}

"""The sandbox's state: shops, their document collections and the queue of pending writes.

Writes are accepted at once and applied after the visibility delay, as the real service
does: a write op goes into the shop's pending queue and is applied the next time anything
touches that shop after its time has come (on the sandbox's clock). Handlers and their
dependencies all run on the event loop's thread (``async``, see ``http.py``) and never await
while they change state, so no lock is needed: concurrent requests see each change whole.
"""

from __future__ import annotations

import hashlib
import random
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

from sandbox.marketing.limits import ARRIVALS_KEPT
from sandbox.marketing.persistence import InMemory, Persistence
from sandbox.marketing.settings import (
    GENERAL_KEY_PATTERN,
    KPI_KEY_PATTERN,
    SandboxSettings,
    ShopKeys,
)

Doc = dict[str, Any]
#: applies one pending write op to a shop; registered per op kind by the route modules
Applier = Callable[["Shop", Doc], None]
APPLIERS: dict[str, Applier] = {}


def applier(kind: str) -> Callable[[Applier], Applier]:
    def register(fn: Applier) -> Applier:
        APPLIERS[kind] = fn
        return fn

    return register


#: the whole second ``now_iso`` last wrote, and its text up to the milliseconds (one tuple:
#: sandboxes served in threads of one process swap it whole)
_second: tuple[int, str] = (-1, "")


def now_iso() -> str:
    """The current UTC time as the API writes it (ISO 8601, milliseconds, ``Z``), the same
    text as ``datetime.now(UTC).isoformat(timespec="milliseconds")`` with ``Z`` for
    ``+00:00``, its second written once: a third of the cost (it is paid for every item
    applied)."""
    global _second
    now = time.time()
    whole = int(now)
    second = _second
    if second[0] != whole:
        written = datetime.fromtimestamp(whole, UTC).isoformat()  # …T10:30:00+00:00
        second = _second = (whole, written[:19] + ".")
    return f"{second[1]}{int((now - whole) * 1000):03d}Z"


class Collection:
    """Documents of one kind in one shop, by key, in insertion order, with indexes by field
    built on first use and kept up to date by every write (a read-back of 100 ids, or the
    customers an order refers to, is then found without scanning the collection)."""

    def __init__(self, shop: Shop, name: str) -> None:
        self._shop = shop
        self.name = name
        self.docs: dict[str, Doc] = {}
        #: key -> when it was first put (insertion order, for what an index finds)
        self._placed: dict[str, int] = {}
        self._next_place = 0
        #: field -> str(value) -> keys of the documents holding it (an ordered set)
        self._indexes: dict[str, dict[str, dict[str, None]]] = {}

    def get(self, key: str) -> Doc | None:
        return self.docs.get(key)

    def put(self, key: str, doc: Doc) -> None:
        if self._indexes:
            old = self.docs.get(key)
            for field, index in self._indexes.items():
                self._unindex(index, field, key, old)
                index.setdefault(str(doc.get(field)), {})[key] = None
        self._place(key, doc)
        self._shop.persistence.put(self._shop.ident, self.name, key, doc)

    def delete(self, key: str) -> bool:
        old = self.docs.pop(key, None)
        if old is None:
            return False
        del self._placed[key]
        for field, index in self._indexes.items():
            self._unindex(index, field, key, old)
        self._shop.persistence.delete(self._shop.ident, self.name, key)
        return True

    def matching(self, field: str, values: Iterable[Any]) -> dict[str, Doc]:
        """Key -> document for the documents whose ``field`` equals one of ``values``,
        compared as text (as ids arrive in query strings), in insertion order."""
        index = self._indexes.get(field)
        if index is None:
            index = self._indexes[field] = {}
            for key, doc in self.docs.items():
                index.setdefault(str(doc.get(field)), {})[key] = None
        keys: dict[str, None] = {}
        for value in values:
            keys.update(index.get(str(value), {}))
        return {k: self.docs[k] for k in sorted(keys, key=self._placed.__getitem__)}

    def restore(self, key: str, doc: Doc) -> None:
        """Put back a document read from the persistence at start-up (not written again)."""
        self._place(key, doc)
        self._indexes.clear()

    def _place(self, key: str, doc: Doc) -> None:
        if key not in self._placed:
            self._placed[key] = self._next_place
            self._next_place += 1
        self.docs[key] = doc

    @staticmethod
    def _unindex(index: dict[str, dict[str, None]], field: str, key: str,
                 old: Doc | None) -> None:
        if old is None:
            return
        value = str(old.get(field))
        holders = index.get(value)
        if holders is not None:
            holders.pop(key, None)
            if not holders:
                del index[value]

    def values(self) -> Iterator[Doc]:
        return iter(list(self.docs.values()))

    def __len__(self) -> int:
        return len(self.docs)

    def __contains__(self, key: str) -> bool:
        return key in self.docs


class Shop:
    """One shop: what one key (or key pair) sees, and nothing of any other shop."""

    def __init__(self, ident: str, shop_id: int, persistence: Persistence) -> None:
        self.ident = ident
        self.shop_id = shop_id
        self.persistence = persistence
        self._collections: dict[str, Collection] = {}
        self.pending: deque[Doc] = deque()
        #: when its latest API requests arrived, epoch seconds (``GET /_sandbox/arrivals``):
        #: what a test of a key's shared request budget checks the spacing of; not kept
        #: across restarts
        self.arrivals: deque[float] = deque(maxlen=ARRIVALS_KEPT)

    def collection(self, name: str) -> Collection:
        found = self._collections.get(name)
        if found is None:
            found = self._collections[name] = Collection(self, name)
        return found

    def next_id(self, counter: str) -> int:
        """A new auto-incremented id for ``counter`` (ids are never reused, as in SQL)."""
        counters = self.collection("_counters")
        current = counters.get(counter) or {"value": 0}
        value = current["value"] + 1
        counters.put(counter, {"value": value})
        return value

    def enqueue(self, op: Doc, apply_at: float) -> None:
        """Queue a write op to be applied at ``apply_at`` (epoch seconds)."""
        op = {**op, "_seq": self.next_id("_pending"), "_apply_at": apply_at}
        self.pending.append(op)
        self.collection("_pending").put(str(op["_seq"]), op)

    def apply_due(self, now: float, limit: int | None = None) -> int:
        """Apply the pending ops whose time has come by ``now`` (epoch seconds), oldest
        first: all of them, or at most ``limit``. How many were applied."""
        applied = 0
        pending = self.collection("_pending")
        while (self.pending and self.pending[0]["_apply_at"] <= now
               and (limit is None or applied < limit)):
            op = self.pending.popleft()
            APPLIERS[op["kind"]](self, op)
            pending.delete(str(op["_seq"]))
            applied += 1
        return applied

    def restore(self, collection: str, key: str, doc: Doc) -> None:
        """Put back a document read from the persistence at start-up."""
        self.collection(collection).restore(key, doc)
        if collection == "_pending":
            self.pending.append(doc)


class SandboxClock:
    """The time pending writes are applied by: the wall clock, or a manual one that stands
    at its start-up time until a test advances it (``--manual-clock``), so a test sees a
    write before and after its visibility delay without waiting. Epoch seconds, like the
    times the data file keeps for pending writes."""

    def __init__(self, manual: bool) -> None:
        #: where the manual clock stands; None: the wall clock
        self.stopped_at: float | None = time.time() if manual else None

    def now(self) -> float:
        return time.time() if self.stopped_at is None else self.stopped_at

    def advance(self, seconds: float) -> float:
        """Move the clock ``seconds`` forward (and stop it there); the new time."""
        self.stopped_at = self.now() + seconds
        return self.stopped_at


def _ident(key: str) -> str:
    """What the data file calls a shop: a digest of its key, so the key is never stored."""
    return hashlib.sha256(key.encode()).hexdigest()[:24]


class Store:
    """All shops of one sandbox, found by key, plus the seeded randomness of its faults."""

    def __init__(self, settings: SandboxSettings, persistence: Persistence | None = None) -> None:
        self.settings = settings
        self.clock = SandboxClock(settings.manual_clock)
        self.persistence = persistence or InMemory()
        self._by_key: dict[str, Shop] = {}
        self._by_kpi_key: dict[str, Shop] = {}
        self._by_ident: dict[str, Shop] = {}
        #: separate streams so that drops do not shift which requests fault, and back
        self.fault_rng = random.Random(settings.seed)
        self.drop_rng = random.Random(None if settings.seed is None else settings.seed + 1)
        #: saved documents of shops whose key has not been used yet in this process
        self._saved: dict[str, list[tuple[str, str, Doc]]] = {}
        for ident, collection, key, doc in self.persistence.load():
            self._saved.setdefault(ident, []).append((collection, key, doc))
        for keys in settings.shops:
            self._add_shop(keys)

    def _restore(self, shop: Shop) -> None:
        for collection, key, doc in self._saved.pop(shop.ident, []):
            shop.restore(collection, key, doc)
        shop.pending = deque(sorted(shop.pending, key=lambda op: op["_seq"]))

    def _new_shop(self, key: str) -> Shop:
        ident = _ident(key)
        shop = Shop(ident, len(self._by_ident) + 1, self.persistence)
        self._by_ident[ident] = shop
        self._restore(shop)
        return shop

    def _add_shop(self, keys: ShopKeys) -> Shop:
        shop = self._new_shop(keys.key)
        self._by_key[keys.key] = shop
        if keys.kpi_key:
            self._by_kpi_key[keys.kpi_key] = shop
        return shop

    def shop_for(self, key: str, *, kpi: bool) -> Shop | None:
        """The shop a key opens, or None. With ``accept_any_key`` a new well-formed key opens
        a new, empty shop of its own (handy for isolated tests)."""
        table = self._by_kpi_key if kpi else self._by_key
        shop = table.get(key)
        if shop is None and self.settings.accept_any_key:
            pattern = KPI_KEY_PATTERN if kpi else GENERAL_KEY_PATTERN
            if pattern.match(key):
                shop = self._add_shop(ShopKeys(key=key)) if not kpi else self._kpi_only(key)
        return shop

    def _kpi_only(self, key: str) -> Shop:
        shop = self._new_shop(key)
        self._by_kpi_key[key] = shop
        return shop

    def shops(self) -> list[Shop]:
        return list(self._by_ident.values())

    def visible_at(self) -> float:
        """When a write accepted now becomes readable."""
        return self.clock.now() + self.settings.visibility_delay

    def drops(self) -> bool:
        """Whether to drop the next accepted write item (accept it, never apply it)."""
        rate = self.settings.drop_rate
        return rate > 0 and self.drop_rng.random() < rate

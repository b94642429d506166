"""Rows held back before the quality suite, counted as rules next to the suite's.

The engine holds an item back at the first stage that refuses it: the connector could not
decode its record or a value is past what the API holds (``limit``), the mapping raised
(``mapping``), the item is past a bound of ``limits.py`` (``limit``), the item model refuses
it (``model``) — and only then the great-expectations suite (``suite``). So that a run's
quality summary accounts for every row it held back, each stage's refusals become rules
with a stable name (``model: customer.email``, ``mapping: KeyError``, ``limits: text
length``) and travel in ``StreamReport.quality`` as one small ``QualityReport`` per chunk.

Cost: one dict increment per held row, no GX work.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from pipelines.engine.quality.check import SAMPLE, Kind, QualityReport

#: the words ``sync._map`` puts between a record's origin and the mapping's error
CANNOT_MAP = ": the record cannot be mapped: "
#: a record the connector could not read (a broken line, a row without its key)
UNREADABLE = "limits: unreadable record"
#: an item JSON cannot hold (hashing it failed)
UNWRITABLE = "limits: JSON"
#: a suite that raised on the one item it was given
SUITE_CRASHED = "quality: the checks cannot run"
#: characters of a rule's example reason (a reason may quote a whole value)
EXAMPLE = 200
_INDEX = re.compile(r"\[\d+\]")


@dataclass(frozen=True)
class Held:
    """Why one item is held back: the stage, and each rule it broke there with the first
    of its reasons that says so; ``reasons`` are all of them, as the ledger keeps them."""

    kind: Kind
    rules: dict[str, str]
    reasons: list[str]


def _field(reason: str) -> str | None:
    """The field a ``field: message`` reason names, list indexes dropped
    (``products[0].price`` -> ``products[].price``); None when it names none."""
    where, colon, _ = reason.partition(": ")
    if not colon or not where or " " in where:
        return None
    return _INDEX.sub("[]", where)[:80]


def _held(kind: Kind, named: Sequence[tuple[str, str]], reasons: list[str]) -> Held:
    rules: dict[str, str] = {}
    for rule, reason in named:
        rules.setdefault(rule, reason)
    return Held(kind, rules, reasons)


def model_refused(reasons: list[str]) -> Held:
    """Reasons of the item model (``customer.email: '…' is not …``): one rule per field."""
    return _held("model", [(f"model: {_field(r) or 'item'}", r) for r in reasons], reasons)


def bounds_broken(bounds: dict[str, str]) -> Held:
    """``limits.item_bounds``'s findings (bound -> reason): one rule per bound."""
    return _held("limit", [(f"limits: {b}", r) for b, r in bounds.items()], list(bounds.values()))


def unwritable(reason: str) -> Held:
    return Held("limit", {UNWRITABLE: reason}, [reason])


def suite_crashed(reason: str) -> Held:
    return Held("suite", {SUITE_CRASHED: reason}, [reason])


def carried_errors(reasons: list[str], fields: Collection[str]) -> Held:
    """An item's ``_errors``: the engine's own for a record the mapping could not map
    (``mapping: <error type>``), otherwise the connector's or the columns mapping's — per
    field for a value the API cannot be given (``limits: quantity_remaining``), or a record
    it could not read at all (``limits: unreadable record``). ``fields``: the model's."""
    mapped = [(f"mapping: {r.partition(CANNOT_MAP)[2].partition(':')[0] or 'error'}", r)
              for r in reasons if CANNOT_MAP in r]
    if mapped:
        return _held("mapping", mapped, reasons)
    named = []
    for reason in reasons:
        where = _field(reason)
        head = where.split(".")[0].split("[")[0] if where else None
        named.append((f"limits: {where}" if head in fields else UNREADABLE, reason))
    return _held("limit", named, reasons)


@dataclass
class _Tallied:
    kind: Kind
    example: str
    count: int = 0
    sample: list[str] = field(default_factory=list)


class HeldTally:
    """The items one chunk of one resource held back, and why, until ``report()``."""

    def __init__(self, resource: str) -> None:
        self.resource = resource
        self._keys: dict[str, list[str]] = {}
        self._rules: dict[str, _Tallied] = {}

    def add(self, key: str, held: Held) -> None:
        if key in self._keys:  # counted once, like the ledger's one entry per key
            return
        self._keys[key] = list(held.rules)
        for rule, reason in held.rules.items():
            tallied = self._rules.get(rule)
            if tallied is None:
                tallied = self._rules[rule] = _Tallied(held.kind, _short(reason))
            tallied.count += 1
            if len(tallied.sample) < SAMPLE:
                tallied.sample.append(key)

    def report(self) -> QualityReport | None:
        """The chunk's held rows as a report for ``summarize`` (None when none was held)."""
        if not self._keys:
            return None
        results: list[dict[str, Any]] = [
            {"name": name, "kind": t.kind, "blocking": True, "success": False,
             "unexpected_count": t.count, "sample": list(t.sample), "description": t.example}
            for name, t in self._rules.items()]
        return QualityReport(self.resource, len(self._keys), dict(self._keys), {}, results, 0.0,
                             by_suite=False)


def _short(reason: str) -> str:
    text = " ".join(reason.split())
    return text if len(text) <= EXAMPLE else text[:EXAMPLE] + "…"

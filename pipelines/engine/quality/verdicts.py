"""What a row-local rule said of each value it judged, so that GX judges a value once.

A rule such as "lang is an ISO 639-1 code" decides each row by that row's value alone, and
a sync meets the same few languages, currencies and customers' emails in chunk after chunk.
GX's cost is per rule and batch more than per row (``plan.py``): judging a chunk whose
values it has all judged before is that cost for nothing. So for those rules the engine
gives GX only the distinct values it has not judged yet, keeps GX's verdict on each
(up to ``CAPACITY`` values a rule), and finds the chunk's failing items from the
verdicts. Those rules are the row-local ones that GX decides from one column's value and
nothing else: a column map expectation with no row condition and no ``mostly``
(``suites.Rule.by_value``).

Values are keys as the frame holds them, of the types its column's kind gives (``KEYS``):
text; floats and None; text and None. A chunk holding anything else in the column (an
int or a float in an optional text column, a list) is judged whole, as before: 1, 1.0 and
True are one dict key but not one value to a regex, and a float alone makes a column GX
reads otherwise than the same float among texts.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

from pipelines.engine.quality.plan import Finding
from pipelines.engine.quality.suites import Kind

#: values a rule keeps verdicts on; past it, new values are judged each chunk they appear
#: in (a column of distinct values — ids, emails of a large shop — gains nothing from more)
CAPACITY = 1 << 16
#: the types of the values a column of each kind keeps verdicts on (``frame.column_values``)
KEYS: dict[Kind, frozenset[type]] = {
    "text": frozenset({str}),
    "num": frozenset({float, type(None)}),
    "optional": frozenset({str, type(None)}),
}


@dataclass
class Verdicts:
    """One rule's verdicts: value -> whether it passes."""

    capacity: int = CAPACITY
    passes: dict[Hashable, bool] = field(default_factory=dict)

    def judge(self, keys: Sequence[str], values: Sequence[object], kind: Kind,
              run: Callable[[list[object]], Finding]) -> Finding | None:
        """The finding for the items ``keys`` whose column, of ``kind``, holds ``values``,
        one per item. ``run`` judges a list of distinct values and names the failing ones by
        position (``Finding.keys`` holds ``str(index)``). None when the values cannot be
        keys: the caller judges the chunk whole."""
        try:
            distinct = set(values)
        except TypeError:  # an unhashable value
            return None
        if not {value.__class__ for value in distinct} <= KEYS.get(kind, frozenset()):
            return None
        verdicts = self.passes
        judged: dict[Hashable, bool] = {}
        if unseen := list(distinct.difference(verdicts)):
            found = run(unseen)
            if found.error is not None:  # GX could not judge them: nothing learned
                return Finding(False, [], found.error)
            failing = set(found.keys)
            judged = {value: str(index) not in failing for index, value in enumerate(unseen)}
            room = self.capacity - len(verdicts)
            verdicts.update(judged if room >= len(judged) else list(judged.items())[:max(room, 0)])
        bad = {value for value in distinct
               if not (verdicts[value] if value in verdicts else judged[value])}
        if not bad:
            return Finding(True, [])
        return Finding(False, list(dict.fromkeys(
            key for key, value in zip(keys, values, strict=True) if value in bad)))

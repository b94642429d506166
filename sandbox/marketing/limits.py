"""The sandbox's bounds on what one request may send or ask for, in one place (the README's
"choices the spec leaves open" lists them).

The spec states none of these limits. Each is far above what a sync sends — the engine's own
item bounds (``pipelines/engine/limits.py``: 32 levels, 100 000 values per item) fit inside
them, so that an item the engine sends is never refused whole for its shape
(``tests/sandbox/test_limits.py`` checks it) — and low enough that one request cannot exhaust the server's memory, recurse
past what the JSON encoder takes (orjson: 255 levels), or keep the event loop to itself.
A request past a bound is answered in the API's error shape: 413 for the size of a body,
415 for a body that is not JSON, 400 for everything else.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: bytes of one request body; a larger one is refused (413) before it is read
MAX_BODY_BYTES = 5 * 1024 * 1024
#: levels of arrays and objects in a JSON body (``[{"products": [{}]}]`` is 4 deep)
MAX_DEPTH = 64
#: members of any one array or object in a JSON body: the engine's values per item
#: (``MAX_VALUES``), so that an order of 10 001 lines it sends is not refused
MAX_MEMBERS = 100_000
#: ids in one bulk delete (every ``…/bulk-delete`` route); saves have the resource's batch size
MAX_DELETE_IDS = 1000
#: integers taken from a query string or a path (``offset``, ``id_data_source``, parent ids)
MAX_INT = 2**63 - 1
#: how far a listing may skip (``offset``, ``settings.offset``)
MAX_OFFSET = 10_000_000
#: seconds ``POST /_sandbox/clock`` may move the manual clock at once (ten years), and the
#: time it never passes (dates past the year 9999 cannot be written)
MAX_CLOCK_ADVANCE = 10 * 365 * 86400
CLOCK_END = 253_370_764_800.0  # 9999-01-01T00:00:00Z
#: seconds of work one listing may take (filtering, building rows, sorting), counted while
#: it runs: it gives way to other requests every few milliseconds meanwhile, so a long
#: listing slows the others down but never stops them; past this it is refused (400)
LISTING_WORK_SECONDS = 10.0
#: how long a listing works before it lets other requests run
LISTING_SLICE_SECONDS = 0.005
#: pending writes applied in one go before other requests get a turn
APPLY_SLICE = 500
#: API requests of one shop whose arrival time is kept (``GET /_sandbox/arrivals``), the
#: latest: as many as the fake shops keep (``sandbox/shops/hosting.py``)
ARRIVALS_KEPT = 10_000


def json_problems(value: Any) -> list[str]:
    """Why a decoded JSON body is past a bound (empty when it is within all of them),
    naming where. One iterative walk: no recursion, whatever the depth.

    A body within its bounds (every body but a hostile one) is told so by ``_within``, which
    names nothing and costs a sixth of the walk that names where."""
    if _within(value):
        return []
    problems: dict[str, str] = {}
    stack: list[tuple[str, Any, int]] = [("body", value, 1)]
    while stack:
        path, node, depth = stack.pop()
        if not isinstance(node, Mapping | list):
            continue
        if depth > MAX_DEPTH:
            problems.setdefault("depth", f"{path}: nested more than {MAX_DEPTH} levels deep")
            continue
        if len(node) > MAX_MEMBERS:
            problems.setdefault(
                "members", f"{path}: {len(node):,} members, more than the {MAX_MEMBERS:,} an"
                           " array or object may have")
            continue
        children = node.items() if isinstance(node, Mapping) else enumerate(node)
        stack.extend((_step(path, key), child, depth + 1) for key, child in children
                     if isinstance(child, Mapping | list))
    return list(problems.values())


#: what a decoded JSON body is made of besides scalars (orjson's arrays and objects)
_CONTAINERS = (dict, list)


def _within(value: Any) -> bool:
    """Whether a decoded JSON body (dicts, lists and scalars) is within every bound: no array
    or object past ``MAX_MEMBERS``, none deeper than ``MAX_DEPTH``. A walk level by level
    that keeps no paths: ``json_problems`` finds a problem iff this says False."""
    level = [value] if isinstance(value, _CONTAINERS) else []
    depth = 1
    while level:
        if depth > MAX_DEPTH:
            return False
        below: list[Any] = []
        for node in level:
            if len(node) > MAX_MEMBERS:
                return False
            for child in node.values() if isinstance(node, dict) else node:
                if isinstance(child, _CONTAINERS):
                    below.append(child)
        level = below
        depth += 1
    return True


def _step(path: str, key: Any) -> str:
    step = f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}"
    return step if len(step) <= 80 else step[:77] + "..."

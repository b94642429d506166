"""Who refers to whom among the API's sync resources: the one table the sync order (the
engine and the CLI) and the lineage (Dagster) are both read from.

An item refers to another resource through the fields the API defines for it
(``target-api.md``, *Item fields*): an order's ``status_id`` names an order status, its
lines' ``product_id`` a product. Reference data is sent first, so that what an item points
at is already at the destination when the item arrives. A resource referring to itself (a
category's ``parent_category_id``) is listed for completeness but orders nothing: items of
one resource are sent together.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from graphlib import CycleError, TopologicalSorter
from typing import TypeVar

T = TypeVar("T", bound=Hashable)


@dataclass(frozen=True)
class Reference:
    """One field of an item that names an item of another resource.

    ``field`` is the path in the item as the API spells it: ``customer.customer_id`` inside
    an object, ``products[].product_id`` in each element of a list. ``by`` is the field of
    the referenced item it matches, when that is not the referenced resource's id.
    """

    field: str
    resource: str
    by: str | None = None


#: resource -> the references its items carry; every sync resource has an entry, in an
#: order that already puts referenced resources first (it breaks ties in the orders below)
REFERENCES: dict[str, tuple[Reference, ...]] = {
    "statuses": (),
    "carriers": (),
    "groups": (),
    "categories": (Reference("parent_category_id", "categories"),),
    "manufacturers": (),
    "customers": (Reference("group_ids", "groups"),),
    "addresses": (Reference("customer_id", "customers"),),
    "products": (
        Reference("category_ids", "categories"),
        Reference("manufacturer_id", "manufacturers"),
    ),
    "variations": (Reference("product_id", "products"),),
    "images": (
        Reference("product_id", "products"),
        Reference("variation_id", "variations"),
    ),
    "vouchers": (Reference("customer_id", "customers"),),
    "carts": (
        Reference("customer_id", "customers"),
        Reference("products[].product_id", "products"),
        Reference("products[].product_variation_id", "variations"),
        Reference("products[].manufacturer_id", "manufacturers"),
    ),
    "orders": (
        Reference("status_id", "statuses"),
        Reference("customer.customer_id", "customers"),
        Reference("products[].product_id", "products"),
        Reference("products[].product_variation_id", "variations"),
        Reference("products[].manufacturer_id", "manufacturers"),
        Reference("cart_id", "carts"),
        Reference("carrier_id", "carriers"),
        Reference("address_delivery_id", "addresses"),
        Reference("address_invoice_id", "addresses"),
        Reference("voucher_used", "vouchers", by="code"),
    ),
}

#: fields named like references that point outside the sync resources: the data source an
#: item is attributed to, and the shop
ATTRIBUTION = ("id_data_source", "shop_id")


class ReferenceCycle(ValueError):
    """Things that refer to each other in a circle: no order sends reference data first."""


def upstream(resource: str) -> tuple[str, ...]:
    """The resources items of ``resource`` refer to, itself left out (directly: what must be
    at the destination before them)."""
    if resource not in REFERENCES:
        raise KeyError(f"no resource {resource!r} in the reference table; known:"
                       f" {', '.join(REFERENCES)}")
    return tuple(dict.fromkeys(r.resource for r in REFERENCES[resource]
                               if r.resource != resource))


#: resource -> the other resources its items refer to (Dagster's asset dependencies)
REFERS_TO: dict[str, tuple[str, ...]] = {
    resource: refs for resource in REFERENCES if (refs := upstream(resource))
}


def ordered(nodes: Iterable[T], depends_on: Callable[[T], Iterable[T]], what: str,
            rank: Callable[[T], int] | None = None) -> list[T]:
    """``nodes`` with each after what it depends on (among ``nodes``), otherwise by
    ``rank`` (default: the order given): the stable topological order. ``what`` says in the
    error what a circle among them means.

    Raises:
        ReferenceCycle: some of them depend on each other in a circle (named).
    """
    given = list(dict.fromkeys(nodes))
    position = {n: i for i, n in enumerate(given)}
    key = rank or position.__getitem__
    sorter = TopologicalSorter({n: {d for d in depends_on(n) if d != n and d in position}
                                for n in given})
    try:
        sorter.prepare()
    except CycleError as exc:
        raise ReferenceCycle(f"{what} in a circle: {' -> '.join(map(str, exc.args[1]))};"
                             " no order sends reference data first") from None
    ready: list[tuple[int, int, T]] = []
    done: list[T] = []
    while sorter.is_active():
        for n in sorter.get_ready():
            heapq.heappush(ready, (key(n), position[n], n))
        _, _, n = heapq.heappop(ready)
        sorter.done(n)
        done.append(n)
    return done


def reference_order(resources: Iterable[str]) -> list[str]:
    """``resources`` with the resources they refer to first, otherwise as given."""
    return ordered(resources, upstream, "resources refer to each other")


def stream_order(produces: Mapping[str, Iterable[str]]) -> dict[str, tuple[str, ...]]:
    """Streams (-> the resources each feeds) in the order to sync them, whatever order they
    are given in: a stream after the streams feeding what its resources refer to, each
    stream's resources in reference order; ties go by the table (``RESOURCE_ORDER``: a
    stream by the first of its resources there)."""
    fed = {stream: tuple(sorted(resources, key=_rank)) for stream, resources in produces.items()}
    feeders: dict[str, set[str]] = {}
    for stream, resources in fed.items():
        for resource in resources:
            feeders.setdefault(resource, set()).add(stream)

    def depends_on(stream: str) -> set[str]:
        return {feeder for resource in fed[stream] for ref in upstream(resource)
                for feeder in feeders.get(ref, ())}

    order = ordered(fed, depends_on, "streams feed resources that refer to each other",
                    rank=lambda stream: min(map(_rank, fed[stream]), default=len(RESOURCE_ORDER)))
    return {stream: fed[stream] for stream in order}


#: every sync resource, referenced ones first
RESOURCE_ORDER: tuple[str, ...] = tuple(reference_order(REFERENCES))


def _rank(resource: str) -> int:
    """Where ``resource`` stands in ``RESOURCE_ORDER`` (a topological order of the table)."""
    upstream(resource)  # an unknown one: the KeyError naming the known ones
    return RESOURCE_ORDER.index(resource)

"""What a platform driver of the engine's end-to-end suite (``test_sync_every_platform.py``)
offers: it starts its fake source (a shop, a database, a drop folder) behind a configured
source, maps the source's records outside the engine for comparison, and changes or deletes
records at the source as the shop's own users would. The cases are written once, in the
suite; a driver knows only its platform."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pipelines.engine.stream_report import StreamReport
from tests.engine.support import EngineSetup, MakeSetup

#: resource -> the sandbox route listing it
ROUTES = {"statuses": "/orders-statuses", "carriers": "/orders-carriers",
          "groups": "/customers-groups", "categories": "/products-categories",
          "manufacturers": "/products-manufacturers", "customers": "/customers",
          "products": "/products", "vouchers": "/vouchers", "orders": "/orders",
          "carts": "/carts"}
#: what every platform's orders carry alike, compared field by field
ORDER_FIELDS = ("amount", "amount_without_tax", "currency", "status_id", "reference",
                "shipping_costs", "is_confirmed", "created_at")
#: the reason every fake with a badly written customer email quarantines its order for
BAD_EMAIL = "customer.email: 'not-an-email' is not a well-formed email address"


@dataclass
class Changed:
    """What a driver changed at the source, as the next run must send it: the items it must
    push (resource -> count: anything else pushed is a fault), values the destination must
    then hold (resource -> key -> field -> value; no fields: the key must be there) and,
    when the driver knows it, how many orders the run reads."""

    pushed: dict[str, int]
    stored: dict[str, dict[str, dict[str, Any]]]
    orders_read: int | None = None


@dataclass
class Deleted:
    """A record deleted for good at the source: the resource it was sent as, and its id
    (the first of the resource's key fields)."""

    resource: str
    record_id: str


class Driver(ABC):
    """One platform's side of the suite. ``compared`` says which stream each compared
    resource comes from; ``not_applicable`` names the cases a kind of source cannot mean,
    with the reason (a drop folder has no secret)."""

    platform: ClassVar[str]
    source: ClassVar[str]
    compared: ClassVar[Mapping[str, str]]
    order_fields: ClassVar[tuple[str, ...]] = ORDER_FIELDS
    #: fields the API stores otherwise than the item says (not compared)
    ignore: ClassVar[tuple[str, ...]] = ()
    #: the connection's field naming the secret's environment variable, and the variable
    secret: ClassVar[tuple[str, str] | None] = None
    not_applicable: ClassVar[Mapping[str, str]] = {}

    @abstractmethod
    def start(self, make: MakeSetup, tmp_path: Path, **source: Any) -> EngineSetup:
        """A setup on a fresh fake source of its own (``source``: more of its config)."""

    @abstractmethod
    def stop(self, setup: Any) -> None:
        """Stop the setup's fake source."""

    @abstractmethod
    def expected(self, setup: Any, stream: str) -> dict[str, dict[str, dict[str, Any]]]:
        """What ``stream``'s records become, read straight from the source and mapped
        outside the engine: resource -> key -> item."""

    @abstractmethod
    def change(self, setup: Any) -> Changed:
        """Touch an order (a new change time alone), change another, add one, and change a
        customer where the source can: what the next run must send."""

    @abstractmethod
    def delete(self, setup: Any) -> list[Deleted]:
        """Delete records for good at the source, as its admin would."""


@dataclass
class FirstSync:
    """A driver's setup after one full sync, and the run's reports by stream."""

    driver: Driver
    setup: Any
    reports: dict[str, StreamReport]

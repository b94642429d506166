"""What the sandbox's read endpoints return for stored items, and which fields they accept.

Stored sync items keep the fields that were sent plus ``id`` (the service's own row id),
``shop_id`` and ``data_source_id``. Orders are read flattened, as the spec's order listing
shows them; contacts are derived from customers (see ``routes/sync.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sandbox.marketing.spec.resources import SyncResource
from sandbox.marketing.store import Doc, Shop

READ_META_FIELDS = ("id", "shop_id", "data_source_id", "source_label")

CONTACT_FIELDS: tuple[str, ...] = tuple(
    """id_shop_contact id_customer_shop id_shop_customer contact_data_email contact_data_sms
    contact_data_push contact_first_name contact_last_name contact_gender contact_birthday
    contact_lang contact_country contact_state contact_latitude contact_longitude
    optin_data_email optin_data_sms unsub_data_email unsub_data_sms unsub_data_push
    reject_data_email reject_data_sms reject_data_push last_views_data_email last_views_data_sms
    last_views_data_push last_views_data_embed last_views_data_popin last_clics_data_email
    last_clics_data_sms last_clics_data_push last_clics_data_embed last_clics_data_popin
    last_sales_data_email last_sales_data_sms last_sales_data_push last_sales_data_embed
    last_sales_data_popin last_sales_data_valid perfect_timing_data_email perfect_timing_data_sms
    perfect_timing_data_push can_receive_email can_receive_sms can_receive_push is_billable
    do_not_charge is_registered active created_on_shop_at created_at updated_at""".split()  # noqa: SIM905
)

ORDER_FIELDS: tuple[str, ...] = tuple(
    """id order_id shop_id lang reference carrier_id status_id address_delivery_id
    address_invoice_id date cart_id cart_updated_at amount amount_without_tax shipping_costs
    shipping_costs_without_tax shipping_number currency voucher_used voucher_value is_confirmed
    contact_id data_source_id created_at updated_at customer_id customer_email
    customer_first_name customer_last_name customer_gender customer_birth_date customer_country
    customer_lang customer_deleted customer_is_opt_in customer_is_newsletter_subscribed
    customer_is_active customer_created_at customer_updated_at carrier_name carrier_delay
    carrier_deleted carrier_active status_name status_lang status_active status_deleted""".split()  # noqa: SIM905
)

STATUS_FIELDS: tuple[str, ...] = (
    "id", "status_id", "shop_id", "name", "lang", "is_active", "is_deleted", "created_at",
    "updated_at", "data_source_id",
)


def selectable_fields(resource: SyncResource) -> tuple[str, ...]:
    if resource.name == "orders":
        return ORDER_FIELDS
    if resource.name == "statuses":
        return STATUS_FIELDS
    return (*READ_META_FIELDS, *resource.model.model_fields.keys() - {"id_data_source"})


def _public(doc: Doc) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if not k.startswith("_")}


class _Index:
    """Items of one collection by a field, preferring the same data source, found through
    the collection's index (reading many orders never scans the customers)."""

    def __init__(self, shop: Shop, collection: str, field: str) -> None:
        self._collection = shop.collection(collection)
        self._field = field

    def get(self, value: Any, data_source_id: Any) -> Doc:
        if value is None:
            return {}
        found = [d for d in self._collection.matching(self._field, [value]).values()
                 if d.get(self._field) == value]
        same = (d for d in found if d.get("data_source_id") == data_source_id)
        return next(same, found[0] if found else {})


class OrderReader:
    """Flattens stored orders into the spec's order fields (customer_*, carrier_*, status_*)."""

    def __init__(self, shop: Shop) -> None:
        self._contacts = shop.collection("contacts")
        self._customers = _Index(shop, "customers", "customer_id")
        self._carriers = _Index(shop, "carriers", "carrier_id")
        self._statuses = _Index(shop, "statuses", "status_id")

    def __call__(self, doc: Doc) -> dict[str, Any]:
        ds = doc.get("data_source_id")
        embedded = doc.get("customer") or {}
        customer = self._customers.get(embedded.get("customer_id"), ds)
        carrier = self._carriers.get(doc.get("carrier_id"), ds)
        status = self._statuses.get(doc.get("status_id"), ds)
        email = customer.get("email") or embedded.get("email")
        contact = self._contacts.get(email.lower()) if email else None
        view = {name: doc.get(name) for name in ORDER_FIELDS}
        view.update(
            date=doc.get("created_at"),
            contact_id=contact["id_shop_contact"] if contact else None,
            customer_id=embedded.get("customer_id"),
            customer_email=email,
            customer_first_name=customer.get("first_name"),
            customer_last_name=customer.get("last_name"),
            customer_gender=customer.get("gender"),
            customer_birth_date=customer.get("birth_date"),
            customer_country=customer.get("country"),
            customer_lang=customer.get("lang"),
            customer_deleted=not customer,
            customer_is_opt_in=customer.get("is_opt_in"),
            customer_is_newsletter_subscribed=customer.get("is_newsletter_subscribed"),
            customer_is_active=customer.get("is_active"),
            customer_created_at=customer.get("created_at") or embedded.get("created_at"),
            customer_updated_at=customer.get("updated_at"),
            carrier_name=carrier.get("name"),
            carrier_delay=carrier.get("delay"),
            carrier_deleted=None if doc.get("carrier_id") is None else not carrier,
            carrier_active=carrier.get("is_active"),
            status_name=status.get("name"),
            status_lang=status.get("lang"),
            status_active=None if not status else not status.get("is_deleted"),
            status_deleted=None if not status else status.get("is_deleted"),
        )
        return view


def status_view(doc: Doc) -> dict[str, Any]:
    view = {name: doc.get(name) for name in STATUS_FIELDS}
    view["is_active"] = not doc.get("is_deleted")
    return view


def reader(shop: Shop, resource: SyncResource) -> Callable[[Doc], dict[str, Any]]:
    """How stored items of ``resource`` read back (one reader per request)."""
    if resource.name == "orders":
        return OrderReader(shop)
    if resource.name == "statuses":
        return status_view
    return _public


def contact_view(doc: Doc) -> dict[str, Any]:
    return {name: doc.get(name) for name in CONTACT_FIELDS}

"""Pydantic models of the items the sync (bulk-write) routes accept.

Shapes come from ``target-api.md``. The client uses them to build payloads and the engine
to hold back what the API would refuse; the sandbox validates with its own models
(``sandbox/marketing/spec``), and a contract test holds the two readings together. Timestamps are kept as the strings that were sent (checked to parse as ISO
8601) so that what is read back equals what was written.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, ValidationError

#: matched whole (``fullmatch``): ``$`` after ``re.match`` lets a trailing newline through.
#: ``text@text.text``, spelt so that each text can be read one way only (possessive runs,
#: the domain's first dot after its first character): ``[^@\s]+\.[^@\s]+`` would try every
#: dot of a long domain in turn, quadratic in its length
_EMAIL = re.compile(r"[^@\s]++@[^@\s][^@\s.]*+\.[^@\s]+")
#: the integers the API holds: signed 64-bit
MIN_INT, MAX_INT = -(2**63), 2**63 - 1


def _iso_timestamp(value: str) -> str:
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"'{value}' is not an ISO 8601 timestamp") from None
    try:
        moment.astimezone(UTC)
    except OverflowError:
        raise ValueError(f"'{value}' is past the range of dates (years 1 to 9999) once in"
                         " UTC") from None
    return value


def _iso_date(value: str) -> str:
    try:
        date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"'{value}' is not an ISO 8601 date (YYYY-MM-DD)") from None
    return value


def _email(value: str) -> str:
    if not _EMAIL.fullmatch(value):
        raise ValueError(f"'{value}' is not a well-formed email address")
    return value


Timestamp = Annotated[str, AfterValidator(_iso_timestamp)]
IsoDate = Annotated[str, AfterValidator(_iso_date)]
Email = Annotated[str, AfterValidator(_email)]
Id = Annotated[str, Field(min_length=1, max_length=191)]
IntId = Annotated[int, Field(ge=0, le=MAX_INT)]
#: pydantic's patterns are Rust regexes: ``$`` is the end of the text, never before a newline
Lang = Annotated[str, Field(pattern=r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,4})?$")]
Currency = Annotated[str, Field(pattern=r"^[A-Z]{3}$")]
#: finite: ``Infinity`` and ``NaN`` are no amount (and JSON has neither)
Amount = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Quantity = Annotated[int, Field(ge=0, le=MAX_INT)]
Count = Annotated[int, Field(ge=MIN_INT, le=MAX_INT)]
Text = Annotated[str, Field(max_length=65535)]


class SyncItem(BaseModel):
    """Fields every sync item may carry: attribution to a data source, and the shop."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=False)

    id_data_source: int | None = None
    source_label: str | None = None
    shop_id: int | None = None


class Customer(SyncItem):
    customer_id: Id
    email: Email
    first_name: str
    last_name: str
    is_opt_in: StrictBool
    is_newsletter_subscribed: StrictBool
    lang: Lang
    is_active: StrictBool
    created_at: Timestamp
    updated_at: Timestamp
    phone_number: str | None = None
    birth_date: IsoDate | None = None
    group_ids: list[Id] | None = None


class CustomerAddress(SyncItem):
    address_id: IntId
    customer_id: Id | None = None
    first_name: str
    last_name: str
    address_line_1: str
    postal_code: str
    city: str
    country: str
    is_active: StrictBool
    primary_phone: str | None = None
    secondary_phone: str | None = None
    company: str | None = None
    address_line_2: str | None = None


class CustomersGroup(SyncItem):
    group_id: Id
    lang: Lang
    name: str
    created_at: Timestamp
    updated_at: Timestamp


class OrderCustomer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    customer_id: Id
    email: Email
    created_at: Timestamp


class OrderLine(BaseModel):
    model_config = ConfigDict(extra="ignore")

    product_id: IntId
    product_variation_id: IntId | None = None
    price: Amount
    price_without_tax: Amount
    manufacturer_id: Id | None = None
    quantity: Quantity


class Order(SyncItem):
    order_id: Id
    lang: Lang
    status_id: Id
    customer: OrderCustomer
    products: list[OrderLine]
    cart_id: Id
    cart_updated_at: Timestamp
    amount: Amount
    amount_without_tax: Amount
    shipping_costs: Amount
    shipping_costs_without_tax: Amount
    currency: Currency
    is_confirmed: StrictBool
    created_at: Timestamp
    updated_at: Timestamp
    reference: str | None = None
    carrier_id: Id | None = None
    address_delivery_id: IntId | None = None
    address_invoice_id: IntId | None = None
    shipping_number: str | None = None
    voucher_used: str | None = None
    voucher_value: Amount | None = None


class OrderStatus(SyncItem):
    status_id: Id
    lang: Lang
    name: str
    is_deleted: StrictBool
    created_at: Timestamp
    updated_at: Timestamp


class Carrier(SyncItem):
    carrier_id: Id
    name: str
    is_active: StrictBool
    created_at: Timestamp
    updated_at: Timestamp


class Product(SyncItem):
    product_id: IntId
    lang: Lang
    name: str
    description: Text
    link: str
    currency: Currency
    price: Amount
    quantity_remaining: Count
    is_active: StrictBool
    created_at: Timestamp
    updated_at: Timestamp
    reference: str | None = None
    ean13: str | None = None
    description_short: Text | None = None
    image_link: str | None = None
    category_ids: list[IntId] | None = None
    manufacturer_id: Id | None = None
    price_discount: Amount | None = None


class ProductVariation(SyncItem):
    variation_id: IntId
    product_id: IntId | None = None
    name: str
    lang: Lang
    link: str
    price: Amount
    quantity_remaining: Count
    is_default: StrictBool
    reference: str | None = None
    ean13: str | None = None
    image_link: str | None = None
    price_discount: Amount | None = None


class ProductImage(SyncItem):
    image_id: IntId
    product_id: IntId | None = None
    lang: Lang
    url: str
    is_default: StrictBool
    variation_id: IntId | None = None


class Category(SyncItem):
    category_id: IntId
    lang: Lang
    name: str
    description: Text
    link: str
    is_active: StrictBool
    created_at: Timestamp
    updated_at: Timestamp
    parent_category_id: IntId | None = None


class Manufacturer(SyncItem):
    manufacturer_id: Id
    name: str
    is_active: StrictBool
    created_at: Timestamp
    updated_at: Timestamp


class Voucher(SyncItem):
    voucher_id: Id
    lang: Lang
    code: str
    description: Text
    started_at: Timestamp
    type_voucher: Literal["free_shipping", "amount_reduction", "percentage_reduction"]
    minimum_amount: Amount
    currency: Currency
    reduction_tax: StrictBool
    is_used: StrictBool
    is_active: StrictBool
    created_at: Timestamp
    updated_at: Timestamp
    ended_at: Timestamp | None = None
    customer_id: Id | None = None
    value: Amount | None = None


class Cart(SyncItem):
    cart_id: Id
    customer_id: Id | None = None
    email: Email | None = None
    currency: Currency
    amount: Amount
    products: list[OrderLine]
    created_at: Timestamp
    updated_at: Timestamp
    is_converted: StrictBool


def describe_errors(exc: ValidationError) -> list[str]:
    """Readable lines from a validation error: ``products[0].price: <why>``.

    The engine quarantines with them in the words the API uses in ``rejected_items`` (the
    sandbox words its own the same: a contract test compares them).
    """
    lines = []
    for err in exc.errors(include_url=False):
        where = ""
        for part in err["loc"]:
            where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else str(part))
        message = str(err["msg"]).removeprefix("Value error, ")
        if err["type"] == "missing":
            message = "is required"
        lines.append(f"{where}: {message}" if where else message)
    return lines


def validate_item(model: type[BaseModel], raw: Any) -> list[str]:
    """The reasons ``raw`` is not a valid item of ``model`` (empty when it is)."""
    if not isinstance(raw, dict):
        return ["item: must be a JSON object"]
    try:
        model.model_validate(raw)
    except ValidationError as exc:
        return describe_errors(exc)
    return []

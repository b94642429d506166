"""The item models the sync (bulk-write) routes validate each item of a batch with.

Fields and types from ``target-api.md`` ("Item fields"); a required field is one the table
lists before "optional". Unknown fields are ignored, as the service does. The class names
are the schema names of the OpenAPI description.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, StrictBool

from sandbox.marketing.spec.fields import (
    Amount,
    Count,
    Currency,
    Email,
    Id,
    IntId,
    IsoDate,
    Lang,
    Quantity,
    Text,
    Timestamp,
)


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
    #: the parent: in the path, or on each item written across customers
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
    #: the parent: in the path, or on each item written across products
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
    #: the parent: in the path, or on each item written across products
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

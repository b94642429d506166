"""What a page of records needs from other resources before the mapping can use it, fetched
once per page with OR filters (``filter[id]=[3|8|21]``) rather than once per record:

- orders: the customer's email and creation date (``_customer``), which orders lack;
- carts: carts that have become orders are dropped (an order with that ``id_cart``
  exists: the stream is abandoned carts); the customer (``_customer``) and each row's
  current unit price, tax excluded (``_unit_price``: the product's price plus the
  combination's impact), as the webservice has no cart totals;
- products: their combinations (``_combinations``), each with its attribute values
  (``_options``: group and value names, multilingual as sent);
- addresses: the country's ISO code (``_country``).

Secrets the webservice shows are removed on the way: a customer's password hash and reset
token, and every ``secure_key``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from connectors.sources.base import RawRecord
from connectors.sources.prestashop.paging import by_id
from connectors.sources.prestashop.values import as_int, association, listed

Get = Callable[[str, dict[str, Any]], Awaitable[Any]]
SECRETS = ("passwd", "secure_key", "reset_password_token")


class Enricher:
    """Lookups for one read; keeps what it learned (customers, prices) for later pages."""

    def __init__(self, get: Get, *, lookup_size: int, page_size: int,
                 tables: Callable[[str], Awaitable[dict[str, dict[str, Any]]]]) -> None:
        self.get = get
        self.lookup_size = lookup_size
        self.page_size = page_size
        self.tables = tables
        self.customers: dict[int, dict[str, Any] | None] = {}

    async def lookup(self, resource: str, field: str, values: Iterable[int],
                     display: str) -> list[dict[str, Any]]:
        """Records of ``resource`` whose ``field`` is one of ``values``."""
        wanted = sorted({v for v in values if v})
        chunks = [wanted[i:i + self.lookup_size] for i in range(0, len(wanted), self.lookup_size)]
        answers = await asyncio.gather(*(
            self.get(resource, {"display": display,
                                f"filter[{field}]": f"[{'|'.join(map(str, chunk))}]"})
            for chunk in chunks))
        return [r for body in answers for r in listed(body, resource)]

    async def _customers(self, records: list[RawRecord]) -> None:
        missing = {as_int(r.get("id_customer")) for r in records} - self.customers.keys() - {0}
        found = {as_int(c.get("id")): c for c in
                 await self.lookup("customers", "id", missing, "[id,email,date_add]")}
        self.customers.update({cid: found.get(cid) for cid in missing})
        for record in records:
            record["_customer"] = self.customers.get(as_int(record.get("id_customer")))

    async def orders(self, records: list[RawRecord]) -> list[RawRecord]:
        for record in records:
            record.pop("secure_key", None)
        await self._customers(records)
        return records

    async def carts(self, records: list[RawRecord]) -> list[RawRecord]:
        ordered = {as_int(o.get("id_cart")) for o in await self.lookup(
            "orders", "id_cart", (as_int(r.get("id")) for r in records), "[id,id_cart]")}
        carts = [r for r in records if as_int(r.get("id")) not in ordered]
        rows = [row for cart in carts for row in association(cart, "cart_rows")]
        products, combinations, _ = await asyncio.gather(
            self.lookup("products", "id", (as_int(r.get("id_product")) for r in rows), "[id,price]"),
            self.lookup("combinations", "id", (as_int(r.get("id_product_attribute")) for r in rows),
                        "[id,price]"),
            self._customers(carts))
        price = {as_int(p.get("id")): float(p.get("price") or 0) for p in products}
        impact = {as_int(c.get("id")): float(c.get("price") or 0) for c in combinations}
        for cart in carts:
            cart.pop("secure_key", None)
            for row in association(cart, "cart_rows"):
                product, combo = as_int(row.get("id_product")), as_int(row.get("id_product_attribute"))
                row["_unit_price"] = None if product not in price or (combo and combo not in impact) \
                    else round(price[product] + impact.get(combo, 0.0), 6)
        return carts

    async def products(self, records: list[RawRecord]) -> list[RawRecord]:
        with_combinations = [as_int(r.get("id")) for r in records if association(r, "combinations")]
        found: dict[int, list[dict[str, Any]]] = {}
        if with_combinations:
            groups, values = await asyncio.gather(self.tables("product_options"),
                                                  self.tables("product_option_values"))
            for start in range(0, len(with_combinations), self.lookup_size):
                chunk = with_combinations[start:start + self.lookup_size]
                params = {"display": "full", "filter[id_product]": f"[{'|'.join(map(str, chunk))}]"}
                async for page in by_id(self._list("combinations"), "combinations", params,
                                        self.page_size):
                    for combo in page:
                        combo["_options"] = [_option(values, groups, v) for v in
                                             association(combo, "product_option_values")]
                        found.setdefault(as_int(combo.get("id_product")), []).append(combo)
        for record in records:
            record["_combinations"] = found.get(as_int(record.get("id")), [])
        return records

    async def addresses(self, records: list[RawRecord]) -> list[RawRecord]:
        countries = await self.tables("countries")
        for record in records:
            country = countries.get(str(as_int(record.get("id_country"))))
            record["_country"] = str(country.get("iso_code", "")) if country else ""
        return records

    async def customers_page(self, records: list[RawRecord]) -> list[RawRecord]:
        for record in records:
            for secret in SECRETS:
                record.pop(secret, None)
        return records

    def _list(self, resource: str) -> Callable[[str, dict[str, Any]], Awaitable[list[RawRecord]]]:
        async def fetch(path: str, params: dict[str, Any]) -> list[RawRecord]:
            return listed(await self.get(path, params), resource)
        return fetch


def _option(values: dict[str, dict[str, Any]], groups: dict[str, dict[str, Any]],
            link: dict[str, Any]) -> dict[str, Any]:
    value = values.get(str(as_int(link.get("id")))) or {}
    group = groups.get(str(as_int(value.get("id_attribute_group")))) or {}
    return {"id": as_int(link.get("id")), "group": group.get("public_name") or group.get("name"),
            "value": value.get("name")}

"""The GraphQL records the fake serves, built from a row and the seed when asked for.

Shapes follow the Admin GraphQL API: camelCase fields, GIDs for ids, ``DateTime`` as UTC
``…Z`` strings, ``Money``/``Decimal`` as strings, ``UnsignedInt64`` as strings of digits,
money totals as ``MoneyBag {shopMoney presentmentMoney}``. A connection (``lineItems``,
``variants``, ``codes``…) is held as a plain list; the executor pages it. The shop charges
taxes included (prices hold 20 % VAT), as European shops do.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sandbox.shops import basket
from sandbox.shops.basket import money
from sandbox.shops.people import slugify
from sandbox.shops.shopify import names
from sandbox.shops.shopify.data import BASE, PERSONAS, Row, gid

if TYPE_CHECKING:
    from sandbox.shops.shopify.store import Store

SITE = "https://shopsync-fake.example"
VAT = 0.2
LONG_ORDER_INDEX = 2  # order #1003 has more lines than a small nested page


def iso(epoch: int | None) -> str | None:
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def bag(store: Store, cents: int) -> dict[str, Any]:
    amount = {"__typename": "MoneyV2", "amount": money(cents), "currencyCode": store.currency}
    return {"__typename": "MoneyBag", "shopMoney": amount, "presentmentMoney": dict(amount)}


def _tax_in(cents: int) -> int:
    """The VAT held in a tax-included amount."""
    return cents - round(cents / (1 + VAT))


def address(rng: Any, first: str, last: str, address_id: int) -> dict[str, Any]:
    city, postcode, country = rng.choice(names.CITIES)
    return {
        "__typename": "MailingAddress",
        "id": f"gid://shopify/MailingAddress/{address_id}?model_name=CustomerAddress",
        "firstName": first, "lastName": last, "name": f"{first} {last}".strip(),
        "company": rng.choice((None, None, None, "ACME SARL")),
        "address1": f"{rng.randrange(1, 200)} rue {rng.choice(names.LAST_NAMES)}",
        "address2": rng.choice((None, None, "Bâtiment B")), "city": city, "province": None,
        "provinceCode": None, "zip": postcode, "country": country, "countryCodeV2": country,
        "phone": f"+33 6 {rng.randrange(10, 99)} {rng.randrange(10, 99)} {rng.randrange(10, 99)}",
    }


def _ref(typename: str, resource: str, record_id: int, **fields: Any) -> dict[str, Any]:
    return {"__typename": typename, "id": gid(resource, record_id),
            "legacyResourceId": str(record_id), **fields}


def _customer_ref(store: Store, customer_id: int) -> dict[str, Any] | None:
    """The customer an order or checkout points at: the full record (any field of a
    Customer can be asked through it), None for guests and deleted customers."""
    row = store.tables["customers"].rows.get(customer_id) if customer_id else None
    return None if row is None else store.customer_record(row)


def _picks(store: Store, rng: Any, count: int) -> list[tuple[Any, tuple[int, str, int, str], int]]:
    """``count`` lines of the shop's variants (every product has one)."""
    return [(p, v, q) for p, v, q in basket.pick(rng, store.sellable, count) if v is not None]


def _line(store: Store, line_id: int, product: Any, variant: tuple[int, str, int, str],
          quantity: int, discount: int) -> dict[str, Any]:
    vid, vtitle, price, sku = variant
    total = price * quantity - discount
    tax = _tax_in(total)
    return {
        "__typename": "LineItem", "id": f"gid://shopify/LineItem/{line_id}",
        "name": product.name if vtitle == "Default Title" else f"{product.name} - {vtitle}",
        "title": product.name, "variantTitle": None if vtitle == "Default Title" else vtitle,
        "sku": sku, "vendor": product.label, "quantity": quantity, "currentQuantity": quantity,
        "taxable": True, "requiresShipping": True, "isGiftCard": False,
        "originalUnitPriceSet": bag(store, price), "originalTotalSet": bag(store, price * quantity),
        "discountedTotalSet": bag(store, total), "totalDiscountSet": bag(store, discount),
        "taxLines": [{"__typename": "TaxLine", "title": "TVA", "rate": VAT,
                      "ratePercentage": VAT * 100, "priceSet": bag(store, tax)}],
        "variant": _ref("ProductVariant", "variants", vid, sku=sku, title=vtitle),
        "product": _ref("Product", "products", product.id, title=product.name),
    }


def order(store: Store, row: Row) -> dict[str, Any]:
    rng = PERSONAS.rng(store.seed, "orders", row.id)
    index = row.id - BASE["orders"] - 1
    customer = _customer_ref(store, row.customer)
    first, last, email = PERSONAS.buyer(store.seed, row.customer, rng, row.id % 100000)
    count = 14 if index == LONG_ORDER_INDEX else rng.choice(basket.LINE_COUNTS)
    picks = _picks(store, rng, count)
    subtotal = sum(v[2] * q for _, v, q in picks)
    code, discount = basket.draw_coupon(rng, subtotal, names.DISCOUNTS)
    offs = basket.spread(discount, (v[2] * q for _, v, q in picks))
    lines = [_line(store, BASE["lines"] + index * 20 + j, product, variant, quantity, off)
             for j, ((product, variant, quantity), off) in enumerate(zip(picks, offs, strict=True))]
    items_total = subtotal - discount
    ship = basket.shipping(items_total, bool(picks))
    total = items_total + ship
    tax = sum(_tax_in(round(float(li["discountedTotalSet"]["shopMoney"]["amount"]) * 100))
              for li in lines) + _tax_in(ship)
    cancelled = row.status == "VOIDED"
    refunded = total if row.status == "REFUNDED" else total // 3 if row.status == "PARTIALLY_REFUNDED" else 0
    fulfilled = row.status in ("PAID", "PARTIALLY_REFUNDED", "REFUNDED") and rng.random() < 0.8
    ship_to = address(rng, first, last, BASE["addresses"] + 500_000 + index)
    return {
        **_ref("Order", "orders", row.id), "name": row.name,
        "number": int(row.name.lstrip("#")), "email": email, "phone": None,
        "createdAt": iso(row.created), "updatedAt": iso(row.updated),
        "processedAt": iso(row.created), "closedAt": iso(row.updated) if fulfilled else None,
        "closed": fulfilled, "cancelledAt": iso(row.updated) if cancelled else None,
        "cancelReason": "CUSTOMER" if cancelled else None,
        "confirmed": row.status != "EXPIRED", "test": False,
        "currencyCode": store.currency, "presentmentCurrencyCode": store.currency,
        "displayFinancialStatus": row.status,
        "displayFulfillmentStatus": "FULFILLED" if fulfilled else "UNFULFILLED",
        "taxesIncluded": True, "discountCodes": [code[3][0]] if code else [],
        "tags": ["vip"] if total > 15000 else [],
        "note": rng.choice((None, None, None, "Livraison après 18h 🚚", "الرجاء الاتصال")),
        "sourceName": rng.choice(("web", "web", "pos", "shopify_draft_order")),
        "customerLocale": "fr",
        "subtotalPriceSet": bag(store, items_total), "totalPriceSet": bag(store, total),
        "totalTaxSet": bag(store, tax), "totalDiscountsSet": bag(store, discount),
        "totalShippingPriceSet": bag(store, ship), "totalRefundedSet": bag(store, refunded),
        "currentTotalPriceSet": bag(store, total - refunded),
        "customer": customer, "billingAddress": dict(ship_to), "shippingAddress": ship_to,
        "shippingLine": {"__typename": "ShippingLine", "title": "Colissimo",
                         "code": "colissimo-home", "source": "shopify",
                         "carrierIdentifier": None, "originalPriceSet": bag(store, ship),
                         "taxLines": [{"__typename": "TaxLine", "title": "TVA", "rate": VAT,
                                       "ratePercentage": VAT * 100,
                                       "priceSet": bag(store, _tax_in(ship))}]}
        if picks else None,
        "lineItems": lines,
    }


def customer(store: Store, row: Row) -> dict[str, Any]:
    rng = PERSONAS.rng(store.seed, "customers", row.id)
    first, last, email = PERSONAS.customer(store.seed, row.id)
    index = row.id - BASE["customers"]
    addresses = [address(rng, first, last, BASE["addresses"] + index * 3 + k)
                 for k in range(rng.choice((0, 1, 1, 1, 2)))]
    subscribed = rng.random() < 0.4
    orders, spent = store.customer_totals.get(row.id, (0, 0))
    return {
        **_ref("Customer", "customers", row.id), "firstName": first, "lastName": last,
        "displayName": f"{first} {last}", "email": email,
        "defaultEmailAddress": {"__typename": "CustomerEmailAddress", "emailAddress": email,
                                "marketingState": "SUBSCRIBED" if subscribed else "NOT_SUBSCRIBED"},
        "phone": addresses[0]["phone"] if addresses else None,
        "defaultPhoneNumber": {"__typename": "CustomerPhoneNumber",
                               "phoneNumber": addresses[0]["phone"]} if addresses else None,
        "state": row.status, "verifiedEmail": True, "taxExempt": False, "locale": "fr",
        "numberOfOrders": str(orders),
        "amountSpent": {"__typename": "MoneyV2", "amount": money(spent),
                        "currencyCode": store.currency},
        "createdAt": iso(row.created), "updatedAt": iso(row.updated),
        "tags": ["newsletter"] if subscribed else [], "note": None,
        "emailMarketingConsent": {
            "__typename": "CustomerEmailMarketingConsentState",
            "marketingState": "SUBSCRIBED" if subscribed else "NOT_SUBSCRIBED",
            "marketingOptInLevel": "CONFIRMED_OPT_IN" if subscribed else None,
            "consentUpdatedAt": iso(row.created) if subscribed else None},
        "defaultAddress": addresses[0] if addresses else None, "addresses": addresses,
    }


def variant(store: Store, row: Row) -> dict[str, Any]:
    rng = PERSONAS.rng(store.seed, "variants", row.id)
    options = [] if row.name == "Default Title" else row.name.split(" / ")
    sale = rng.random() < 0.1
    return {
        **_ref("ProductVariant", "variants", row.id), "title": row.name,
        "displayName": row.name, "sku": f"SKU-{row.id % 1_000_000:06d}",
        "barcode": rng.choice((None, f"{rng.randrange(10**12, 10**13)}")),
        "price": money(row.amount * 8 // 10 if sale else row.amount),
        "compareAtPrice": money(row.amount) if sale else None,
        "inventoryQuantity": rng.choice((0, 3, 25, 140)), "availableForSale": True,
        "position": 1 + store.variant_position.get(row.id, 0), "taxable": True,
        "createdAt": iso(row.created), "updatedAt": iso(row.updated),
        "selectedOptions": [{"__typename": "SelectedOption", "name": n, "value": v}
                            for n, v in zip(("Color", "Size"), options, strict=False)],
        "product": {"__typename": "Product", "id": gid("products", row.parent)},
    }


def product(store: Store, row: Row) -> dict[str, Any]:
    rng = PERSONAS.rng(store.seed, "products", row.id)
    handle = slugify(row.name, "item") or f"product-{row.id}"
    variants = [variant(store, store.tables["variants"].rows[v])
                for v in store.children.get(row.id, ())]
    collections = [store.collection_ref(h) for h in ("all", names.NOUNS.get(row.kind, ""))
                   if store.collection_ref(h)]
    media = [{"__typename": "MediaImage", "id": f"gid://shopify/MediaImage/{BASE['media'] + row.id % 10**8 * 3 + k}",
              "mediaContentType": "IMAGE", "alt": row.name,
              "image": {"__typename": "Image", "url": f"https://cdn.shopify.example/s/files/{handle}-{k}.jpg",
                        "altText": row.name, "width": 1024, "height": 1024}}
             for k in range(rng.choice((0, 1, 1, 2)))]
    active = row.status == "ACTIVE"
    return {
        **_ref("Product", "products", row.id), "title": row.name, "handle": handle,
        "status": row.status, "vendor": row.extra, "productType": row.kind,
        "tags": ["sale"] if rng.random() < 0.2 else [],
        "descriptionHtml": f"<p>{row.name}</p>", "description": row.name,
        "createdAt": iso(row.created), "updatedAt": iso(row.updated),
        "publishedAt": iso(row.created) if active else None,
        "onlineStoreUrl": f"{SITE}/products/{handle}" if active else None,
        "totalInventory": sum(v["inventoryQuantity"] for v in variants),
        "tracksInventory": True, "variants": variants, "collections": collections,
        "media": media,
    }


def collection(store: Store, row: Row) -> dict[str, Any]:
    return {**_ref("Collection", "collections", row.id), "title": row.name, "handle": row.kind,
            "description": f"{row.name} — curated", "descriptionHtml": f"<p>{row.name}</p>",
            "updatedAt": iso(row.updated), "sortOrder": "BEST_SELLING",
            "productsCount": {"__typename": "Count", "count": store.collection_sizes.get(row.kind, 0),
                              "precision": "EXACT"}}


def checkout(store: Store, row: Row) -> dict[str, Any]:
    rng = PERSONAS.rng(store.seed, "checkouts", row.id)
    picks = _picks(store, rng, rng.choice((1, 1, 2, 3)))
    lines = []
    for j, (prod, (vid, vtitle, price, sku), quantity) in enumerate(picks):
        lines.append({
            "__typename": "AbandonedCheckoutLineItem",
            "id": f"gid://shopify/AbandonedCheckoutLineItem/{row.id * 10 + j}",
            "title": prod.name, "variantTitle": None if vtitle == "Default Title" else vtitle,
            "sku": sku, "quantity": quantity,
            "variant": {"__typename": "ProductVariant", "id": gid("variants", vid)},
            "product": {"__typename": "Product", "id": gid("products", prod.id)},
            "originalUnitPriceSet": bag(store, price),
            "originalTotalPriceSet": bag(store, price * quantity),
            "discountedTotalPriceSet": bag(store, price * quantity)})
    total = sum(v[2] * q for _, v, q in picks)
    return {
        "__typename": "AbandonedCheckout", "id": gid("checkouts", row.id),
        "name": f"#{row.id % 10**7}",
        "abandonedCheckoutUrl": f"{SITE}/checkouts/{row.id:x}/recover?key={rng.getrandbits(64):016x}",
        "createdAt": iso(row.created), "updatedAt": iso(row.updated),
        "completedAt": iso(row.updated) if row.extra else None,
        "customer": _customer_ref(store, row.customer), "discountCodes": [], "note": "",
        "taxesIncluded": True, "subtotalPriceSet": bag(store, total),
        "totalLineItemsPriceSet": bag(store, total), "totalDiscountSet": bag(store, 0),
        "totalTaxSet": bag(store, _tax_in(total)), "totalPriceSet": bag(store, total),
        "lineItems": lines,
    }


def discount(store: Store, row: Row) -> dict[str, Any]:
    index = row.id - BASE["discounts"] - 1
    _, kind, value, codes, minimum = names.DISCOUNTS[index] if 0 <= index < len(names.DISCOUNTS) \
        else (row.name, row.kind, row.amount, (row.name.upper(),), 0)
    typename = {"shipping": "DiscountCodeFreeShipping", "bxgy": "DiscountCodeBxgy"}.get(
        kind, "DiscountCodeBasic")
    body: dict[str, Any] = {
        "__typename": typename, "title": row.name,
        "summary": f"{value / 100:g}% off" if kind == "percent" else row.name,
        "status": row.status, "startsAt": iso(row.created),
        "endsAt": iso(row.updated + 86400) if row.status == "EXPIRED" else None,
        "createdAt": iso(row.created), "updatedAt": iso(row.updated),
        "asyncUsageCount": row.id % 37, "usageLimit": None, "appliesOncePerCustomer": False,
        "codes": [{"__typename": "DiscountRedeemCode",
                   "id": f"gid://shopify/DiscountRedeemCode/{BASE['codes'] + index * 10 + k}",
                   "code": code, "asyncUsageCount": (row.id + k) % 7}
                  for k, code in enumerate(codes)],
        "minimumRequirement": {"__typename": "DiscountMinimumSubtotal",
                               "greaterThanOrEqualToSubtotal": {
                                   "__typename": "MoneyV2", "amount": money(minimum),
                                   "currencyCode": store.currency}} if minimum else None,
    }
    if kind in ("percent", "amount", "bxgy"):
        got: dict[str, Any] = (
            {"__typename": "DiscountPercentage", "percentage": value / 10000}
            if kind == "percent" else
            {"__typename": "DiscountAmount", "appliesOnEachItem": False,
             "amount": {"__typename": "MoneyV2", "amount": money(value),
                        "currencyCode": store.currency}}
            if kind == "amount" else {"__typename": "DiscountOnQuantity"})
        body["customerGets"] = {"__typename": "DiscountCustomerGets", "value": got}
    return {"__typename": "DiscountCodeNode", "id": gid("discounts", row.id),
            "codeDiscount": body}


def event(store: Store, row: Row) -> dict[str, Any]:
    resource = {"PRODUCT": "products", "ORDER": "orders", "CUSTOMER": "customers",
                "COLLECTION": "collections", "DISCOUNT_CODE_NODE": "discounts"}[row.extra]
    return {"__typename": "BasicEvent", "id": f"gid://shopify/BasicEvent/{row.id}",
            "action": row.status, "subjectType": row.extra, "subjectId": gid(resource, row.parent),
            "createdAt": iso(row.created), "message": row.name, "appTitle": None,
            "attributeToApp": False, "attributeToUser": True, "criticalAlert": False}


BUILDERS = {"orders": order, "customers": customer, "products": product, "variants": variant,
            "collections": collection, "checkouts": checkout, "discounts": discount,
            "events": event}

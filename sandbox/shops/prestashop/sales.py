"""The records of customers, their addresses, carts, orders and cart rules (see records.py
for the conventions). An order's lines are its cart's rows, priced as the products were
when the shop was generated, so old orders do not change when a product does."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from sandbox.shops import basket
from sandbox.shops.prestashop import names
from sandbox.shops.prestashop.data import PERSONAS, Row
from sandbox.shops.prestashop.records import BUILDERS, ZERO_DATE, ZERO_DAY, I18n, Record

if TYPE_CHECKING:
    from sandbox.shops.prestashop.store import Store

TAX = 0.2
SHIPPING_TAX_INCL = 700  # cents, free from 50.00 with tax and for click and collect


def _secure_key(kind: str, record_id: int, seed: int) -> str:
    return hashlib.md5(f"{kind}/{seed}/{record_id}".encode()).hexdigest()


def customer(store: Store, row: Row) -> Record:
    rng = PERSONAS.rng(store.seed, "customers", row.id)
    first, last, email = PERSONAS.customer(store.seed, row.id)
    guest, vip = row.flag == 1, rng.random() < 0.1
    newsletter = not guest and rng.random() < 0.3
    groups = [2] if guest else [3, 4] if vip else [3]
    return {
        "id": row.id, "id_default_group": groups[-1], "id_lang": row.parent,
        "newsletter_date_add": store.local_text(row.created + 30) if newsletter else ZERO_DATE,
        "ip_registration_newsletter": "", "last_passwd_gen": store.local_text(row.created),
        "secure_key": _secure_key("customer", row.id, store.seed), "deleted": row.flag == 2,
        # the webservice really shows the password hash: connectors must drop it
        "passwd": "$2y$10$" + hashlib.sha256(f"pw/{row.id}".encode()).hexdigest()[:53],
        "lastname": last, "firstname": first, "email": email, "id_gender": rng.choice((0, 1, 2)),
        "birthday": f"{rng.randrange(1950, 2006)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"
        if rng.random() < 0.4 else ZERO_DAY,
        "newsletter": newsletter, "optin": not guest and rng.random() < 0.2, "website": "",
        "company": "Atelier Dupont SARL" if rng.random() < 0.05 else "", "siret": "", "ape": "",
        "outstanding_allow_amount": 0.0, "show_public_prices": False, "id_risk": 0,
        "max_payment_days": 0, "active": bool(row.state), "note": "", "is_guest": guest,
        "id_shop": 1, "id_shop_group": 1, **store.dates(row), "reset_password_token": "",
        "reset_password_validity": ZERO_DATE,
        "associations": {"groups": [{"id": g} for g in groups]},
    }


def address(store: Store, row: Row) -> Record:
    rng = PERSONAS.rng(store.seed, "addresses", row.id)
    if row.customer:
        first, last, _ = PERSONAS.customer(store.seed, row.customer)
        city, postcode, _ = names.CITIES[row.state % len(names.CITIES)]
    else:
        first, last, (city, postcode, _) = "", "", names.CITIES[0]
    return {
        "id": row.id, "id_customer": row.customer, "id_manufacturer": row.extra,
        "id_supplier": 0, "id_warehouse": 0, "id_country": row.parent, "id_state": 0,
        "alias": "Mon adresse" if row.customer else "Studio Design",
        "company": "Studio Design" if not row.customer else "",
        "lastname": last or "Design", "firstname": first or "Studio", "vat_number": "",
        "address1": f"{rng.randrange(1, 200)} {rng.choice(('rue', 'Straße', 'via'))} "
                    f"{rng.choice(names.LAST_NAMES)}",
        "address2": "Bâtiment B" if rng.random() < 0.15 else "", "postcode": postcode,
        "city": city, "other": "",
        "phone": f"+33 1 {rng.randrange(10, 99)} {rng.randrange(10, 99)} {rng.randrange(10, 99)}"
        if rng.random() < 0.7 else "",
        "phone_mobile": f"+33 6 {rng.randrange(10, 99)} {rng.randrange(10, 99)} 00"
        if rng.random() < 0.5 else "",
        "dni": "", "deleted": row.flag == 1, **store.dates(row),
    }


def cart_lines(store: Store, cart_id: int, empty: bool = False) -> list[tuple[int, int, int, int, dict[int, str], str]]:
    """(product, combination, quantity, unit price tax excl in cents, names, reference)
    of a cart, the same for the cart and its order."""
    rng = PERSONAS.rng(store.seed, "carts", cart_id)
    if empty or not store.sellable:
        return []
    lines = []
    count = rng.choice(basket.LINE_COUNTS)
    for item, combo, qty in basket.pick(rng, store.sellable, count):
        price = item.price + (combo[1] if combo else 0)
        label = item.name
        if combo is not None:
            size, color = (int(v) for v in combo[2].split(","))
            size_name = next(v[2] for v in names.PRODUCT_OPTION_VALUES if v[0] == size)
            color_name = next(v[2] for v in names.PRODUCT_OPTION_VALUES if v[0] == color)
            label = {k: f"{v} - Size : {size_name[k]}- Color : {color_name[k]}"
                     for k, v in item.name.items()}
        lines.append((item.id, combo[0] if combo else 0, qty, price, label, f"demo_{item.id}"))
    return lines


def cart(store: Store, row: Row) -> Record:
    rng = PERSONAS.rng(store.seed, "cart-fields", row.id)
    addresses = store.addresses_of.get(row.customer, [])
    lines = cart_lines(store, row.id, empty=row.state == 1)
    carrier = rng.choice(names.LIVE_CARRIERS) if addresses and lines else 0
    return {
        "id": row.id, "id_address_delivery": addresses[0] if addresses else 0,
        "id_address_invoice": addresses[0] if addresses else 0, "id_currency": row.flag,
        "id_customer": row.customer, "id_guest": 1000 + row.id % 977, "id_lang": row.extra,
        "id_shop_group": 1, "id_shop": 1, "id_carrier": carrier, "recyclable": False,
        "gift": False, "gift_message": "", "mobile_theme": False,
        "delivery_option": f'{{"{addresses[0]}":"{carrier},"}}' if carrier else "",
        "secure_key": _secure_key("cart", row.id, store.seed), "allow_seperated_package": False,
        **store.dates(row),
        "associations": {"cart_rows": [
            {"id_product": p, "id_product_attribute": a, "id_address_delivery":
             addresses[0] if addresses else 0, "id_customization": 0, "quantity": q}
            for p, a, q, *_ in lines]},
    }


def order(store: Store, row: Row) -> Record:
    rng = PERSONAS.rng(store.seed, "orders", row.id)
    rate = 1.08 if row.flag == 2 else 1.0
    lines, state = cart_lines(store, row.parent), row.state
    addresses = store.addresses_of.get(row.customer, [])
    carrier = rng.choice(names.LIVE_CARRIERS)
    rows, products, products_wt = [], 0, 0
    for i, (pid, combo, qty, price, label, reference) in enumerate(lines):
        excl = round(price * rate)
        incl = round(excl * (1 + TAX))
        products, products_wt = products + excl * qty, products_wt + incl * qty
        rows.append({"id": row.id * 10 + i, "product_id": pid, "product_attribute_id": combo,
                     "product_quantity": qty, "product_name": label.get(row.extra, label[1]),
                     "product_reference": reference, "product_ean13": "", "product_isbn": "",
                     "product_upc": "", "product_price": excl / 100, "id_customization": 0,
                     "unit_price_tax_incl": incl / 100, "unit_price_tax_excl": excl / 100})
    discount_excl = products // 10 if lines and rng.random() < 0.1 else 0
    discount_incl = round(discount_excl * (1 + TAX))
    free = carrier == 1 or products_wt >= 5000 or not lines
    ship_incl = 0 if free else round(SHIPPING_TAX_INCL * rate)
    ship_excl = round(ship_incl / (1 + TAX))
    paid_incl = products_wt - discount_incl + ship_incl
    paid_excl = products - discount_excl + ship_excl
    valid = state in names.VALID_STATES
    invoiced = valid or state == 7
    module, payment = {1: names.PAYMENTS[0], 10: names.PAYMENTS[1],
                       13: names.PAYMENTS[3]}.get(state, rng.choice(names.PAYMENTS[:3]))
    gift = rng.random() < 0.03
    return {
        "id": row.id, "id_address_delivery": addresses[0] if addresses else 0,
        "id_address_invoice": addresses[-1] if addresses else 0, "id_cart": row.parent,
        "id_currency": row.flag, "id_lang": row.extra, "id_customer": row.customer,
        "id_carrier": carrier, "current_state": state, "module": module,
        "invoice_number": row.id if invoiced else 0,
        "invoice_date": store.local_text(row.created + 120) if invoiced else ZERO_DATE,
        "delivery_number": row.id if state == 5 else 0,
        "delivery_date": store.local_text(row.modified) if state == 5 else ZERO_DATE,
        "valid": valid, **store.dates(row),
        "shipping_number": f"6A{rng.randrange(10**10, 10**11)}" if state in (4, 5) else "",
        "note": "Livraison après 18h 🚚" if rng.random() < 0.05 else "",
        "id_shop_group": 1, "id_shop": 1, "secure_key": _secure_key("order", row.id, store.seed),
        "payment": payment, "recyclable": False, "gift": gift,
        "gift_message": "Joyeux anniversaire 🎂" if gift else "", "mobile_theme": False,
        "total_discounts": discount_incl / 100, "total_discounts_tax_incl": discount_incl / 100,
        "total_discounts_tax_excl": discount_excl / 100, "total_paid": paid_incl / 100,
        "total_paid_tax_incl": paid_incl / 100, "total_paid_tax_excl": paid_excl / 100,
        "total_paid_real": paid_incl / 100 if valid else 0.0, "total_products": products / 100,
        "total_products_wt": products_wt / 100, "total_shipping": ship_incl / 100,
        "total_shipping_tax_incl": ship_incl / 100, "total_shipping_tax_excl": ship_excl / 100,
        "carrier_tax_rate": 20.0, "total_wrapping": 0.0, "total_wrapping_tax_incl": 0.0,
        "total_wrapping_tax_excl": 0.0, "round_mode": 2, "round_type": 2,
        "conversion_rate": rate, "reference": "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
                                                      for _ in range(9)),
        "associations": {"order_rows": rows},
    }


#: (code, name, kind, value, currency, minimum, id_customer, quantity, active, expired)
CART_RULES = {
    1: ("WELCOME10", names.t("10% welcome offer", "10 % de bienvenue", "10 % Willkommensrabatt"),
        "percent", 10.0, 1, 0.0, 0, 1000, True, False),
    2: ("FREESHIP", names.t("Free shipping", "Livraison offerte", "Kostenloser Versand"),
        "shipping", 0.0, 1, 0.0, 0, 500, True, False),
    3: ("", names.t("5 € off above 50 €", "5 € offerts dès 50 €", "5 € Rabatt ab 50 €"),
        "amount", 5.0, 1, 50.0, 0, 9999, True, False),  # automatic: no code
    4: ("ÉTÉ2025", names.t("Summer sale ☀", "Soldes d'été ☀", "Sommerschlussverkauf ☀"),
        "percent", 15.0, 1, 0.0, 0, 200, True, True),
    5: ("VIP-ALICE", names.t("VIP thank you", "Merci VIP", "VIP-Dankeschön"),
        "amount", 20.0, 1, 0.0, 1, 1, True, False),
    6: ("GIFTMUG", names.t("A free mug", "Un mug offert", "Eine Tasse gratis"),
        "gift", 0.0, 1, 30.0, 0, 100, True, False),
    7: ("OLD-2023", names.t("Old campaign", "Ancienne campagne", "Alte Kampagne"),
        "amount", 10.0, 1, 0.0, 0, 0, False, False),  # used up and switched off
    8: ("USD5", names.t("5 $ off", "5 $ de réduction", "5 $ Rabatt"),
        "amount", 5.0, 2, 20.0, 0, 50, True, False),
}


def cart_rule(store: Store, row: Row) -> Record:
    code, title, kind, value, currency_id, minimum, customer_id, quantity, active, expired = \
        CART_RULES.get(row.id, (f"RULE{row.id}", names.t(f"Rule {row.id}"), "amount", 1.0, 1,
                                0.0, 0, 10, True, False))
    gift = store.sellable[0].id if kind == "gift" and store.sellable else 0
    return {
        "id": row.id, "id_customer": customer_id if store.tables["customers"].rows else 0,
        "date_from": store.local_text(row.created),
        "date_to": store.local_text(row.created + (90 if expired else 730) * 86400),
        "description": "internal: created by the marketing team" if row.id == 1 else "",
        "quantity": quantity, "quantity_per_user": 1, "priority": 1, "partial_use": True,
        "code": code, "minimum_amount": minimum, "minimum_amount_tax": False,
        "minimum_amount_currency": currency_id, "minimum_amount_shipping": False,
        "country_restriction": False, "carrier_restriction": False,
        "group_restriction": False, "cart_rule_restriction": False,
        "product_restriction": False, "shop_restriction": False,
        "free_shipping": kind == "shipping", "reduction_percent": value if kind == "percent" else 0.0,
        "reduction_amount": value if kind == "amount" else 0.0, "reduction_tax": kind == "amount",
        "reduction_currency": currency_id, "reduction_product": 0,
        "reduction_exclude_special": False, "gift_product": gift, "gift_product_attribute": 0,
        "highlight": False, "active": active, **store.dates(row), "name": I18n(title),
    }


BUILDERS.update(customers=customer, addresses=address, carts=cart, orders=order,
                cart_rules=cart_rule)

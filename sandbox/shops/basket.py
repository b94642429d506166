"""What a generated order or cart holds, and the arithmetic of its totals, as every fake
shop draws and sums them: lines drawn from the sellable products (one of a product's
options, a quantity), a coupon on some orders, its discount taken off the lines in order,
and shipping free above a threshold. All in cents; the draws come from the record's own
generator, in this order, so a seed gives the same baskets on every platform's fake.

How a platform rounds tax and writes the lines stays with the platform."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Generic, TypeVar

N = TypeVar("N")
Opt = TypeVar("Opt")
C = TypeVar("C", bound=tuple[Any, ...])
V = TypeVar("V")

#: the first word of a generated product's name
ADJECTIVES = ("Classic", "Vintage", "Organic", "Deluxe", "Minimal", "Cozy", "Bold", "Retro")
#: how many lines an order has (most one)
LINE_COUNTS = (1, 1, 1, 2, 2, 3, 4)
#: how many of a line's product (most one)
QUANTITIES = (1, 1, 1, 2, 3)


@dataclass(frozen=True, slots=True)
class Sellable(Generic[N, Opt]):
    """What an order line needs of a product, frozen at generation so that orders stay the
    same when the product is later edited or deleted: its name (PrestaShop's by language),
    price in cents and options (the platform's variations, variants, child products or
    combinations, each as the lines show it)."""

    id: int
    name: N
    price: int
    options: tuple[Opt, ...] = ()
    #: what else the lines show of the product: Magento's SKU, Shopify's vendor
    label: str = ""


def price(rng: random.Random, low: int = 4, high: int = 120) -> int:
    """A generated unit price in cents: whole units from ``low`` to ``high``, most with
    no cents, some .50, .90 or .99."""
    return rng.randrange(low, high) * 100 + rng.choice((0, 0, 50, 90, 99))


@lru_cache(maxsize=1 << 16, typed=True)
def money(cents: int) -> str:
    """Cents as a two-decimal string (``-5.00``), as the REST and GraphQL APIs write money
    (remembered: a record writes a few dozen amounts, most of them common ones)."""
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"


def pick(rng: random.Random, sellable: Sequence[Sellable[N, Opt]],
         count: int) -> list[tuple[Sellable[N, Opt], Opt | None, int]]:
    """``count`` lines (none when nothing is sellable): a product, one of its options when
    it has any, and a quantity."""
    lines: list[tuple[Sellable[N, Opt], Opt | None, int]] = []
    for _ in range(count if sellable else 0):
        product = rng.choice(sellable)
        option = rng.choice(product.options) if product.options else None
        lines.append((product, option, rng.choice(QUANTITIES)))
    return lines


def weighted(rng: random.Random, choices: Sequence[tuple[V, int]]) -> V:
    """One of the ``(value, weight)`` ``choices`` (an order's status), drawn by weight."""
    return rng.choices([value for value, _ in choices], [weight for _, weight in choices])[0]


def draw_coupon(rng: random.Random, subtotal: int, coupons: Sequence[C]) -> tuple[C | None, int]:
    """A coupon (one of the first five: ``(code, kind, value, …)``) on 12 % of the orders
    that have something to discount, and its discount (``coupon_off``; none without)."""
    coupon = coupons[rng.randrange(5)] if subtotal > 0 and rng.random() < 0.12 else None
    return coupon, coupon_off(subtotal, coupon[1] == "percent", coupon[2]) if coupon else 0


def coupon_off(subtotal: int, percent: bool, value: int) -> int:
    """A coupon's discount: ``value`` hundredths of a percent of ``subtotal``, or ``value``
    cents (never more than the subtotal)."""
    return subtotal * value // 10000 if percent else min(value, subtotal)


def spread(discount: int, amounts: Iterable[int]) -> list[int]:
    """``discount`` taken off the lines in order, each at most its amount (nothing off a
    negative line): what each line gets off."""
    offs, left = [], discount
    for amount in amounts:
        off = min(left, max(amount, 0))
        left -= off
        offs.append(off)
    return offs


def shipping(items_total: int, has_lines: bool, free_from: int = 5000, fee: int = 490) -> int:
    """The shipping fee: none above ``free_from`` cents of items, nor without lines."""
    return 0 if items_total >= free_from or not has_lines else fee

"""Who buys in a fake shop: seeded personas (the same customer wherever one is needed, with
the odd names real shops hold at fixed ids), guests, and the ASCII folding their emails and
the shops' slugs are made with. Every choice comes from a ``random.Random`` seeded with a
string (hashed with SHA-512, so the same across processes and platforms).

The word lists are the platform's (``<platform>/names.py``); so is which ids are odd."""

from __future__ import annotations

import random
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

#: the email of the odd customer whose last name is "Email"
BAD_EMAIL = "not-an-email"
#: customers at fixed ids in every seed (``odd_at``): names that break naive code
ODD_NAMES = (
    ("Rene\u0301e", "Zoe\u0308lle-Ha\u0308user"),  # combining accents (not NFC)
    ("مريم", "الحسيني"),  # right-to-left
    ("Ana 🌸", "Lima 👩\u200d💻"),  # emoji, with a zero-width joiner
    ("Bad", "Email"),  # the one whose email is BAD_EMAIL
    ("小龙", "李"),
)
DOMAINS = ("example.com", "example.net", "mail.example")
#: customers whose names and email a platform keeps drawn (a few MiB)
CUSTOMERS_KEPT = 50_000


def rng_for(platform: str, seed: int, resource: str, record_id: int) -> random.Random:
    """The generator of one record's fields: the same record for the same seed."""
    return random.Random(f"{platform}/{seed}/{resource}/{record_id}")


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()


def slugify(text: str, empty: str | None = None) -> str:
    """Roughly every platform's URL key: ascii-folded, lower case, dashes. A text with no
    latin letter gets ``empty``, or without it a stable stand-in for the percent-encoding
    the platforms do."""
    slug = re.sub(r"[^a-z0-9]+", "-", _fold(text)).strip("-")
    if slug:
        return slug
    if empty is not None:
        return empty
    return "-".join(f"{ord(c):x}" for c in text if not c.isspace())[:60]


def ascii_part(text: str, fallback: str) -> str:
    """``text`` folded to lower-case ASCII letters and digits (``fallback`` if none)."""
    return re.sub(r"[^a-z0-9]+", "", _fold(text)) or fallback


@dataclass(frozen=True)
class Personas:
    """A platform's customers: those at ``odd`` ids (id -> first and last name) are the same
    in every seed, the others drawn from the word lists with the seed."""

    platform: str
    first_names: Sequence[str]
    last_names: Sequence[str]
    odd: Mapping[int, tuple[str, str]]
    #: the email of an odd customer (the one named "Email" has ``BAD_EMAIL``)
    odd_email: Callable[[int], str] = lambda customer_id: f"customer{customer_id}@example.org"
    #: what of the id ends a drawn customer's email address
    tag: Callable[[int], int] = lambda customer_id: customer_id
    domains: Sequence[str] = DOMAINS

    #: ``_draw`` remembered: orders name their customers again and again
    _drawn: Callable[[int, int], tuple[str, str, str]] = field(init=False, repr=False,
                                                               compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_drawn", lru_cache(maxsize=CUSTOMERS_KEPT)(self._draw))

    def rng(self, seed: int, resource: str, record_id: int) -> random.Random:
        """The generator of one record's fields on this platform (``rng_for``), a customer's
        or any other's."""
        return rng_for(self.platform, seed, resource, record_id)

    def customer(self, seed: int, customer_id: int) -> tuple[str, str, str]:
        """(first name, last name, email) of a customer, the same wherever it is needed."""
        return self._drawn(seed, customer_id)

    def _draw(self, seed: int, customer_id: int) -> tuple[str, str, str]:
        if customer_id in self.odd:
            first, last = self.odd[customer_id]
            return first, last, BAD_EMAIL if last == "Email" else self.odd_email(customer_id)
        rng = rng_for(self.platform, seed, "customer-core", customer_id)
        first, last = rng.choice(self.first_names), rng.choice(self.last_names)
        local = f"{ascii_part(first, 'c')}.{ascii_part(last, 'x')}.{self.tag(customer_id)}"
        return first, last, f"{local}@{rng.choice(self.domains)}"

    def buyer(self, seed: int, customer_id: int, rng: random.Random,
              tag: object) -> tuple[str, str, str]:
        """Who placed an order or filled a cart: the customer, or without one a guest."""
        return self.customer(seed, customer_id) if customer_id else self.guest(rng, tag)

    def guest(self, rng: random.Random, tag: object) -> tuple[str, str, str]:
        """A guest buyer drawn from ``rng`` (the order's), their email ending in ``tag``."""
        first, last = rng.choice(self.first_names), rng.choice(self.last_names)
        return first, last, f"{ascii_part(first, 'guest')}.{tag}@example.net"


def odd_at(first_id: int, names: Sequence[tuple[str, str]]) -> dict[int, tuple[str, str]]:
    """The odd customers by id, from ``first_id`` on."""
    return {first_id + i: pair for i, pair in enumerate(names)}

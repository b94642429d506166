"""One great-expectations suite per target resource, as a table of typed rules.

The item models (``connectors.marketing.items``) already check types and shapes, and the
engine runs them first. These rules check what a type cannot: ids unique in a batch, codes
that exist (ISO 4217 currencies, ISO 639-1 languages), emails a person could receive,
consistent timestamps, references to known products, parents the bulk routes require.
Some repeat a model check (ids present, amounts not negative, timestamps parseable) or the
engine's dedup by key (ids unique): a suite must also stand on its own, on data that never
went through the models. Those rules are marked ``model_checked``, and the engine, whose
items have just passed the models, skips them (``check_items(..., after_models=True)``):
GX would spend its time re-proving them.

A **blocking** rule holds the row back (quarantined, not sent); a **warning** only counts:
what a shop legitimately produces (negative stock, lines of deleted products, an updated_at
seconds before created_at, customers sharing an email) must not stop its data.
Rules work on a flat frame whose columns ``SHAPES`` describes (``check.py`` builds it):
missing required text becomes ``""`` so that format rules catch absence too, timestamps are
parsed to UTC (missing or unparseable ones become NaT), ``amounts`` is the row-wise
minimum of a resource's amounts, line prices and quantities, and ``unknown_product_lines``
counts the lines whose product is not among the known ones (a join GX cannot do cheaply: an
``in_set`` over thousands of ids costs it 200 ms a batch). One rule per concern keeps the
cost down: each expectation costs GX a few ms per batch, whatever its size (``plan.py``), and
more with long value lists, so code lists are regexes (written as tries: ``one_of``).

A rule GX decides row by row (``row_local``) may be judged on any grouping of rows: one
deciding on one column's value alone keeps its verdict per value (``by_value``), and a
warning judged row by row is judged a few chunks at a time (``pooled``); ``check.py`` says
how.

GX is imported only inside ``rules_for`` (about 1 CPU-s of imports, without the libraries
``deferred.py`` keeps for when they are used): loading this module is free.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Literal

from pipelines.engine.quality.deferred import defer

if TYPE_CHECKING:
    from great_expectations.expectations import Expectation


def _codes(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: ISO 4217 codes of circulating currencies, plus a few withdrawn since 2023 that old
#: orders still carry (HRK, SLL, BGN, ANG, ZWL); no funds, metals or test codes
CURRENCIES: frozenset[str] = _codes("""
    AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN
    BWP BYN BZD CAD CDF CHF CLP CNY COP CRC CUC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR
    FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HRK HTG HUF IDR ILS INR IQD IRR ISK JMD
    JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK
    MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN
    PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN SVC SYP SZL
    THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VED VES VND VUV WST XAF XCD XCG
    XOF XPF YER ZAR ZMW ZWG ZWL
""")

#: ISO 639-1 (two-letter) language codes
LANGUAGES: frozenset[str] = _codes("""
    aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv
    cy da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr
    ht hu hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw
    ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv
    ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr
    ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi
    yo za zh zu
""")



def one_of(codes: Collection[str]) -> str:
    """A regex matching exactly ``codes`` (all of one length), as a trie: ``en|es|fr`` is
    ``(?:e[ns]|fr)``. Half the length of the plain alternation: pandas parses a pattern
    on every call (to choose between pyarrow and ``re``), which costs by its length."""
    assert len({len(c) for c in codes}) == 1, "codes of one length"
    if len(next(iter(codes))) == 0:
        return ""
    by_first: dict[str, list[str]] = {}
    for code in sorted(codes):
        by_first.setdefault(code[0], []).append(code[1:])
    if all(rest == [""] for rest in by_first.values()):
        chars = "".join(map(re.escape, by_first))
        return chars if len(by_first) == 1 else f"[{chars}]"
    branches = [re.escape(first) + one_of(rest) for first, rest in by_first.items()]
    return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"


#: a language code with an optional region or script: en, en-US, fr_FR, es-419, zh-Hant
LANG_REGEX = (
    r"^(?i:" + one_of(LANGUAGES) + r")(?:[-_](?:[A-Za-z]{2}|[0-9]{3}|[A-Za-z]{4}))?$"
)
#: stricter than the item model's shape check: no spaces, no ``..``, no dot at either end of
#: the local part, a dotted domain of proper labels ending in a TLD of 2+ letters or
#: punycode; non-ASCII letters are allowed (IDN domains, internationalised addresses)
EMAIL_REGEX = (
    r"^(?!\.)(?!.*\.\.)[\w.!#$%&'*+/=?^`{|}~-]+(?<!\.)"
    r"@(?:[^\W_](?:[\w-]*[^\W_])?\.)+(?:[^\W\d_]{2,}|xn--[\w-]+)$"
)
URL_REGEX = r"^https?://[^\s/$.?#][^\s]*$"
#: a regex, not ``in_set``: GX copies a value list many times per validation (2x the cost)
CURRENCY_REGEX = r"^" + one_of(CURRENCIES) + r"$"

#: how a frame column comes out of an item: ``id`` as is ("" becomes missing), ``text`` as a
#: string ("" when missing), ``optional`` as is, ``ts`` parsed to UTC, ``num`` a float
Kind = Literal["id", "text", "optional", "ts", "num"]

#: the row-wise minimum of the ``Shape.amounts`` fields: one rule for "nothing negative"
AMOUNTS = "amounts"
#: lines whose product is not in ``known["products"]`` (missing when that is not given)
UNKNOWN_PRODUCTS = "unknown_product_lines"
#: line fields are written ``products[].price``
LINES = "products"


@dataclass(frozen=True)
class Shape:
    """The frame columns a resource's rules read, and the amounts folded into ``amounts``."""

    columns: dict[str, Kind]
    amounts: tuple[str, ...] = ()
    lines: bool = False  # items carry order lines (``products``) that refer to products


@dataclass(frozen=True)
class Rule:
    """One expectation of a suite; ``name`` is its type and columns, as reasons show it."""

    name: str
    expectation: Expectation
    blocking: bool
    description: str
    #: the ``known`` reference set the rule needs; without it the rule is reported skipped
    needs: str | None = None
    #: the item models (or the engine's dedup by key) already guarantee it
    model_checked: bool = False
    #: the frame columns it reads
    columns: tuple[str, ...] = ()
    #: GX decides each row from that row alone (not uniqueness), so rows may be judged
    #: in any grouping: apart, or pooled with other chunks' rows
    row_local: bool = False
    #: row-local on one column's value alone: its verdict on a value holds wherever the
    #: value appears (``verdicts.py``)
    by_value: bool = False

    @property
    def pooled(self) -> bool:
        """A warning GX decides row by row and not by value: it holds nothing back, so a
        stream may judge its rows a few chunks at a time (``check.Pool``)."""
        return self.row_local and not self.blocking and not self.by_value


@dataclass(frozen=True)
class Suite:
    resource: str
    shape: Shape
    rules: tuple[Rule, ...] = field(default=())

    def active(self, after_models: bool) -> tuple[Rule, ...]:
        return tuple(r for r in self.rules if not (after_models and r.model_checked))


_TS: dict[str, Kind] = {"created_at": "ts", "updated_at": "ts"}
_LINE_AMOUNTS = ("products[].price", "products[].price_without_tax", "products[].quantity")

SHAPES: dict[str, Shape] = {
    "customers": Shape({"customer_id": "id", "email": "text", "lang": "text", **_TS}),
    "addresses": Shape({"address_id": "id", "customer_id": "id"}),
    "groups": Shape({"group_id": "id", "lang": "text", **_TS}),
    "orders": Shape(
        {"order_id": "id", "lang": "text", "currency": "text", "customer.email": "text",
         "cart_updated_at": "ts", "amount": "num", "amount_without_tax": "num", **_TS},
        amounts=("amount", "amount_without_tax", "shipping_costs", "shipping_costs_without_tax",
                 "voucher_value", *_LINE_AMOUNTS),
        lines=True,
    ),
    "statuses": Shape({"status_id": "id", "lang": "text", **_TS}),
    "carriers": Shape({"carrier_id": "id", **_TS}),
    "products": Shape(
        {"product_id": "id", "lang": "text", "currency": "text", "quantity_remaining": "num",
         **_TS},
        amounts=("price", "price_discount"),
    ),
    "variations": Shape(
        {"variation_id": "id", "product_id": "id", "lang": "text", "quantity_remaining": "num"},
        amounts=("price", "price_discount"),
    ),
    "images": Shape({"image_id": "id", "product_id": "id", "lang": "text", "url": "text"}),
    "categories": Shape({"category_id": "id", "lang": "text", **_TS}),
    "manufacturers": Shape({"manufacturer_id": "id", **_TS}),
    "vouchers": Shape(
        {"voucher_id": "id", "lang": "text", "currency": "text", "type_voucher": "text",
         "value": "num", "started_at": "ts", "ended_at": "ts", **_TS},
        amounts=("minimum_amount", "value"),
    ),
    "carts": Shape(
        {"cart_id": "id", "email": "optional", "currency": "text", **_TS},
        amounts=("amount", *_LINE_AMOUNTS),
        lines=True,
    ),
}


def columns_of(expectation: Expectation) -> tuple[str, ...]:
    return tuple(getattr(expectation, "column_list", None) or [
        c for c in (getattr(expectation, a, None) for a in ("column", "column_A", "column_B"))
        if c
    ])


def rule_name(expectation: Expectation) -> str:
    """``expect_column_values_to_match_regex(email)``: the type and the columns it reads."""
    return f"{expectation.expectation_type}({', '.join(columns_of(expectation))})"


@cache
def rules_for(resource: str) -> Suite | None:
    """The suite of ``resource`` (None when it has none). Imports GX on first call."""
    shape = SHAPES.get(resource)
    if shape is None:
        return None
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")  # read when GX builds a context
    defer()  # what GX imports and our rules never use (half of its import)
    import great_expectations.expectations as gxe
    from great_expectations.expectations.expectation import (
        ColumnMapExpectation,
        ColumnPairMapExpectation,
    )
    from great_expectations.expectations.row_conditions import Column

    from connectors.marketing.resources import SYNC_RESOURCES

    rules: list[Rule] = []

    def add(expectation: Expectation, blocking: bool, description: str, *,
            needs: str | None = None, model_checked: bool = False,
            also_reads: tuple[str, ...] = (), row_local: bool = False) -> None:
        name = rule_name(expectation)
        expectation.meta = {"rule": name}  # results name their rule, even from copies
        columns = columns_of(expectation) + also_reads
        # row-local: a map of one column or of a pair, all its rows counting (no
        # ``mostly``); uniqueness is a map too, but of the whole column: never row-local
        assert not row_local or (
            isinstance(expectation, ColumnMapExpectation | ColumnPairMapExpectation)
            and expectation.mostly == 1), name
        by_value = (row_local and len(columns) == 1
                    and getattr(expectation, "row_condition", None) is None
                    and shape.columns.get(columns[0], "num") in ("text", "num", "optional"))
        rules.append(Rule(name, expectation, blocking, description, needs, model_checked,
                          columns, row_local, by_value))

    spec = SYNC_RESOURCES[resource]
    ident = spec.id_field
    add(gxe.ExpectColumnValuesToNotBeNull(column=ident), True, f"{ident} is present",
        model_checked=True, row_local=True)
    if spec.lang_scoped:
        add(gxe.ExpectCompoundColumnsToBeUnique(column_list=[ident, "lang"]), True,
            f"one item per ({ident}, lang) in a batch: otherwise which one wins is arbitrary",
            model_checked=True)
    else:
        add(gxe.ExpectColumnValuesToBeUnique(column=ident), True,
            f"one item per {ident} in a batch: otherwise which one wins is arbitrary",
            model_checked=True)
    if spec.parent_field and spec.parent_field in shape.columns:
        add(gxe.ExpectColumnValuesToNotBeNull(column=spec.parent_field), True,
            f"{spec.parent_field} is present: the bulk route writes each item under it",
            row_local=True)
    if "lang" in shape.columns:
        add(gxe.ExpectColumnValuesToMatchRegex(column="lang", regex=LANG_REGEX), True,
            "lang is an ISO 639-1 code, optionally with a region (en, fr-FR, pt_BR)",
            row_local=True)
    if "currency" in shape.columns:
        add(gxe.ExpectColumnValuesToMatchRegex(column="currency", regex=CURRENCY_REGEX), True,
            "currency is an ISO 4217 code", row_local=True)
    for column in ("email", "customer.email"):
        if column in shape.columns:
            add(gxe.ExpectColumnValuesToMatchRegex(column=column, regex=EMAIL_REGEX), True,
                f"{column} is a deliverable-looking address (contacts are keyed by it)",
                row_local=True)
    if resource == "customers":
        add(gxe.ExpectColumnValuesToBeUnique(column="email"), False,
            "customers sharing an email merge into one contact on the service")
    if shape.amounts:
        add(gxe.ExpectColumnValuesToBeBetween(column=AMOUNTS, min_value=0), True,
            f"not negative: {', '.join(shape.amounts)}", model_checked=True, row_local=True)
    for column in ("created_at", "updated_at", "cart_updated_at", "started_at"):
        if column in shape.columns:
            add(gxe.ExpectColumnValuesToNotBeNull(column=column), True,
                f"{column} is an ISO 8601 timestamp", model_checked=True,
                row_local=True)
    if "created_at" in shape.columns:
        # a warning: shops leave updated_at seconds behind created_at (Magento's children of
        # a configurable product, mass actions, clock skew) and the item is still right
        add(gxe.ExpectColumnPairValuesAToBeGreaterThanB(
                column_A="updated_at", column_B="created_at", or_equal=True,
                ignore_row_if="either_value_is_missing"), False,
            "created_at <= updated_at", row_local=True)
    if resource == "orders":
        add(gxe.ExpectColumnPairValuesAToBeGreaterThanB(
                column_A="amount", column_B="amount_without_tax", or_equal=True,
                ignore_row_if="either_value_is_missing"), False,
            "amount (tax included) >= amount_without_tax", row_local=True)
    if "quantity_remaining" in shape.columns:
        add(gxe.ExpectColumnValuesToBeBetween(column="quantity_remaining", min_value=0), False,
            "stock is not negative (backorders are sent as they are)", row_local=True)
    if resource == "images":
        add(gxe.ExpectColumnValuesToMatchRegex(column="url", regex=URL_REGEX), False,
            "url is an http(s) URL", row_local=True)
    if resource == "vouchers":
        add(gxe.ExpectColumnValuesToBeBetween(
                column="value", max_value=100,
                row_condition=Column("type_voucher") == "percentage_reduction"), True,
            "a percentage reduction is at most 100", also_reads=("type_voucher",),
            row_local=True)
        add(gxe.ExpectColumnPairValuesAToBeGreaterThanB(
                column_A="ended_at", column_B="started_at", or_equal=True,
                ignore_row_if="either_value_is_missing"), False,
            "a voucher does not end before it starts", row_local=True)
    if shape.lines:
        add(gxe.ExpectColumnValuesToBeBetween(column=UNKNOWN_PRODUCTS, max_value=0), False,
            "lines refer to known products (old orders often hold deleted ones: a warning)",
            needs="products", row_local=True)
    return Suite(resource, shape, tuple(rules))

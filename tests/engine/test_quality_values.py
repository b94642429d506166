"""What the quality rules make of particular values: timestamps, warnings that do not
block, lines to unknown products, language codes, currencies, emails, carts without email
and empty batches.
"""

from __future__ import annotations

import itertools
import re
import string

import pytest

from connectors.marketing.samples import sample_item
from pipelines.engine.quality import QualityReport, check_items, summarize
from pipelines.engine.quality.suites import CURRENCIES, CURRENCY_REGEX, LANG_REGEX, LANGUAGES
from tests.engine.quality_support import KNOWN, keyed, valid


@pytest.mark.parametrize("created_at", ["2026-01-15T10:30:00,5+02:00", "2026-W03-4",
                                        "20260115T080000Z", "2026-01-15 09:00:00+00:00"])
def test_timestamps_the_models_accept_are_parsed(created_at: str) -> None:
    item = sample_item("carriers", created_at=created_at)
    assert check_items("carriers", [("k", item)]).failures == {}


def test_warnings_count_but_do_not_block() -> None:
    items = valid("customers", 3)
    items[2]["email"] = items[0]["email"]  # two customers, one contact
    report = check_items("customers", keyed(items))
    assert report.failures == {}
    assert report.warnings == {"expect_column_values_to_be_unique(email)": 2}

    products = valid("products", 3)
    products[1]["quantity_remaining"] = -2
    products[2]["created_at"] = "2026-01-15T10:30:04Z"  # 4 s after its update, as shops do
    report = check_items("products", keyed(products))
    assert report.failures == {}
    assert report.warnings == {
        "expect_column_values_to_be_between(quantity_remaining)": 1,
        "expect_column_pair_values_a_to_be_greater_than_b(updated_at, created_at)": 1}


def test_lines_to_unknown_products_warn_and_need_the_known_ids() -> None:
    orders = valid("orders", 2)
    orders[1]["products"] = [*orders[1]["products"], {**orders[1]["products"][0],
                                                      "product_id": 999}]
    rule = "expect_column_values_to_be_between(unknown_product_lines)"
    report = check_items("orders", keyed(orders), known=KNOWN)
    assert report.failures == {}
    assert report.warnings == {rule: 1}
    assert [r["sample"] for r in report.results if r["name"] == rule] == [["k1"]]

    report = check_items("orders", keyed(orders))
    (skipped,) = [r for r in report.results if r["name"] == rule]
    assert skipped["skipped"] and skipped["success"]
    assert report.warnings == {}


@pytest.mark.parametrize("lang", ["en", "FR", "fr-FR", "pt_BR", "es-419", "zh-Hant"])
def test_language_codes_accepted(lang: str) -> None:
    assert check_items("groups", [("g", sample_item("groups", lang=lang))]).failures == {}


@pytest.mark.parametrize("lang", ["xx", "eng", "english", "e", "en-", "fr-FRA1"])
def test_language_codes_refused(lang: str) -> None:
    assert check_items("groups", [("g", sample_item("groups", lang=lang))]).failures == {
        "g": ["expect_column_values_to_match_regex(lang)"]}


def test_the_code_regexes_accept_exactly_the_code_lists() -> None:
    lang, currency = re.compile(LANG_REGEX), re.compile(CURRENCY_REGEX)
    pairs = ["".join(p) for p in itertools.product(string.ascii_lowercase, repeat=2)]
    assert {p for p in pairs if lang.search(p)} == LANGUAGES
    assert {p for p in pairs if lang.search(p.upper())} == LANGUAGES
    triples = ["".join(p) for p in itertools.product(string.ascii_uppercase, repeat=3)]
    assert {t for t in triples if currency.search(t)} == CURRENCIES
    assert not currency.search("eur") and not currency.search("EURO")


@pytest.mark.parametrize("email", ["a.b+tag@example.co.uk", "müller@münchen.de",
                                   "o'neil@shop.example.com", "x@xn--p1ai.xn--p1ai"])
def test_emails_accepted(email: str) -> None:
    assert check_items("customers", [("c", sample_item("customers", email=email))]).failures == {}


@pytest.mark.parametrize("email", ["ada@example", "ada@example..com", ".ada@example.com",
                                   "ada.@example.com", "ada@example.c", "ada @example.com",
                                   "ada@-example.com", ""])
def test_emails_refused(email: str) -> None:
    assert check_items("customers", [("c", sample_item("customers", email=email))]).failures == {
        "c": ["expect_column_values_to_match_regex(email)"]}


def test_timestamps_with_offsets_compare_in_utc() -> None:
    # 10:30+02:00 is 08:30Z: before the 09:00Z update, though it reads later as text
    item = sample_item("carriers", created_at="2026-01-15T10:30:00+02:00",
                       updated_at="2026-01-15T09:00:00Z")
    report = check_items("carriers", [("k", item)])
    assert (report.failures, report.warnings) == ({}, {})


def test_a_cart_without_email_is_fine() -> None:
    cart = sample_item("carts", email=None, customer_id=None)
    assert check_items("carts", [("c", cart)], known=KNOWN).failures == {}


def test_an_empty_batch_works() -> None:
    report = check_items("orders", [])
    assert report == QualityReport("orders", 0, {}, {}, [], report.seconds)
    assert summarize([report])["rows"] == 0

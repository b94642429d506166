"""What the quality tests share: valid items of each resource, how to break an item for
each blocking rule, and the cases and faulty batches built from them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from connectors.marketing.resources import SYNC_RESOURCES
from connectors.marketing.samples import sample_item, sample_resources
from pipelines.engine.quality.suites import Rule, Suite, rules_for

KNOWN = {"products": {"101", "102"}}
Item = dict[str, Any]


def suite_of(resource: str) -> Suite:
    suite = rules_for(resource)
    assert suite is not None
    return suite


def valid(resource: str, n: int) -> list[Item]:
    """``n`` valid items of ``resource`` with distinct ids."""
    spec = SYNC_RESOURCES[resource]
    base = sample_item(resource)
    ident = base[spec.id_field]
    items = [sample_item(resource, **{spec.id_field: ident + i if isinstance(ident, int)
                                      else f"{ident}-{i}"}) for i in range(n)]
    for i, item in enumerate(items):
        if item.get("email"):
            item["email"] = f"user{i}@example.com"
    return items


def _set(field: str, value: Any) -> Callable[[Item], None]:
    def apply(item: Item) -> None:
        item[field] = value
    return apply


def _negative_amount(item: Item) -> None:
    if "products" in item:
        item["products"] = [{**item["products"][0], "quantity": -1}]
    else:
        field = next(f for f in ("price", "minimum_amount", "amount") if f in item)
        item[field] = -1


def _customer_email(item: Item) -> None:
    item["customer"] = {**item["customer"], "email": "ada@example..com"}


#: expectation type (and, for some, column) -> how to break an item for it
BREAK: dict[str, Callable[[Item], None]] = {
    "expect_column_values_to_match_regex(lang)": _set("lang", "xx"),
    "expect_column_values_to_match_regex(currency)": _set("currency", "EUE"),
    "expect_column_values_to_match_regex(email)": _set("email", "ada@example"),
    "expect_column_values_to_match_regex(customer.email)": _customer_email,
    "expect_column_values_to_be_between(amounts)": _negative_amount,
    "expect_column_values_to_not_be_null(created_at)": _set("created_at", "yesterday"),
    "expect_column_values_to_not_be_null(updated_at)": _set("updated_at", None),
    "expect_column_values_to_not_be_null(cart_updated_at)": _set("cart_updated_at", "soon"),
    "expect_column_values_to_not_be_null(started_at)": _set("started_at", "2026-02-30T00:00:00Z"),
    "expect_column_values_to_be_between(value)": _set("value", 150),
}


def breaker(resource: str, rule: Rule) -> Callable[[Item], None] | None:
    """How to break ``rule`` for one item; None for uniqueness (needs two items)."""
    spec = SYNC_RESOURCES[resource]
    if rule.name in (f"expect_column_values_to_not_be_null({spec.id_field})",
                     f"expect_column_values_to_not_be_null({spec.parent_field})"):
        return _set(rule.name.split("(")[1].rstrip(")"), None)
    if "unique" in rule.name:
        return None
    return BREAK[rule.name]


def blocking_cases() -> list[Any]:
    """(resource, rule, after_models): every blocking rule alone, and again as the engine
    runs it (after the item models) unless the models already guarantee it."""
    return [pytest.param(resource, rule, after, id=f"{resource}-{rule.name}"
                         + ("-after_models" if after else ""))
            for resource in sample_resources()
            for rule in suite_of(resource).rules if rule.blocking
            for after in (False, True) if not (after and rule.model_checked)]


def keyed(items: list[Item]) -> list[tuple[str, Item]]:
    return [(f"k{i}", item) for i, item in enumerate(items)]


def faulty(resource: str) -> list[tuple[str, Item]]:
    """Valid items, one broken for each blocking rule of the suite, one created after its
    update (a warning), and two sharing an id."""
    rules = [rule for rule in suite_of(resource).rules
             if rule.blocking and "unique" not in rule.name]
    items = valid(resource, len(rules) + 3)
    for item, rule in zip(items, rules, strict=False):
        breaker(resource, rule)(item)  # type: ignore[misc]
    if "created_at" in items[-3]:
        items[-3]["created_at"] = "2099-01-01T00:00:00Z"
    ident = SYNC_RESOURCES[resource].id_field
    items[-1][ident] = items[-2][ident]
    return keyed(items)

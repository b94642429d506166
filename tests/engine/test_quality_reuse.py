"""The suite's savings change nothing it finds.

- A rule decided by a column's value alone (``Rule.by_value``: codes, emails, stock, lines
  to unknown products) has GX judge each distinct value once per process; a chunk's
  failing items are found from those verdicts (``quality/verdicts.py``).
- A stream's warnings decided row by row (``Rule.pooled``: timestamps and amounts in
  order) are judged a few chunks at a time (``check.Pool``): the same items, counted once,
  in the stream's reports.
- What the suite reads of an item can be taken where the item is made (``suite_row``, in
  a read process) rather than read from the items in the run.

The reference is GX judging each chunk whole, every rule on one frame.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from connectors.marketing.samples import sample_resources
from pipelines.engine.quality import Pool, check_items, summarize
from pipelines.engine.quality import check as check_module
from pipelines.engine.quality.frame import item_frame, suite_row
from pipelines.engine.quality.verdicts import Verdicts
from tests.engine.quality_support import KNOWN, faulty, valid

Chunk = list[tuple[str, dict[str, Any]]]


def reference(resource: str, chunk: Chunk, known: Mapping[str, set[str]] | None
              ) -> dict[str, set[str]]:
    """Each rule's failing keys, judged on the chunk's whole frame: no verdicts, no pool."""
    compiled = check_module._compile(resource, True)
    assert compiled is not None
    runnable = [name for name, rule in compiled.rules.items()
                if rule.needs is None or (known is not None and rule.needs in known)]
    frame = item_frame(compiled.suite, chunk, known, compiled.columns)
    found = compiled.plan.run(frame, dict.fromkeys(runnable, "complete"))
    return {name: set(finding.keys) for name, finding in found.items()}


def findings(report: Any) -> dict[str, set[str]]:
    """A report's failing keys by rule, warnings and blocking rules alike (not skipped)."""
    return {r["name"]: set(r["sample"]) for r in report.results if "skipped" not in r}


@pytest.fixture
def fresh_verdicts() -> Iterator[None]:
    """Every rule forgets the values it judged, before and after the test."""
    check_module.forget_verdicts()
    yield
    check_module.forget_verdicts()


TEXTS = st.sampled_from(["en", "fr-FR", "xx", "", "EUR", "EUE", "ada@example.com",
                         "ada@example..com", "jo@exämple.de", " en", "\x00", "é" * 3])
ODD = st.one_of(TEXTS, st.none(), st.integers(-3, 3), st.booleans(), st.floats(allow_nan=True),
                st.lists(st.integers(), max_size=2), st.integers(2**63, 2**70))


def order(i: int, lang: Any, currency: Any, email: Any, product: Any) -> dict[str, Any]:
    (item,) = valid("orders", 1)
    item.update(order_id=f"o{i}", lang=lang, currency=currency,
                customer={**item["customer"], "email": email})
    item["products"] = [{**item["products"][0], "product_id": product}]
    return item


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(chunks=st.lists(st.lists(st.tuples(TEXTS, TEXTS, TEXTS, st.sampled_from(
    [101, 102, 999, "101", True, None, 101.0])), min_size=1, max_size=6), min_size=1, max_size=4))
def test_rules_decided_by_value_find_what_the_whole_chunk_shows(
        fresh_verdicts: None, chunks: list[list[tuple[Any, Any, Any, Any]]]) -> None:
    n = 0
    for rows in chunks:  # in order: later chunks find their values judged already
        chunk = []
        for lang, currency, email, product in rows:
            chunk.append((f"k{n}", order(n, lang, currency, email, product)))
            n += 1
        report = check_items("orders", chunk, known=KNOWN, after_models=True)
        assert findings(report) == reference("orders", chunk, KNOWN)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(chunks=st.lists(st.lists(st.tuples(ODD, ODD), min_size=1, max_size=5),
                       min_size=1, max_size=4))
@example(chunks=[[("ada@example.com", 1.0)], [(2.5, True), ("ada@example.com", 1)]])
def test_odd_values_are_judged_as_the_whole_chunk_judges_them(
        fresh_verdicts: None, chunks: list[list[tuple[Any, Any]]]) -> None:
    # carts' email is optional text and products' stock a number: ints, floats, flags,
    # lists and NaN among them must not be taken for the values they hash like
    n = 0
    for rows in chunks:
        carts, products = [], []
        for email, stock in rows:
            (cart,) = valid("carts", 1)
            (product,) = valid("products", 1)
            cart.update(cart_id=f"c{n}", email=email)
            product.update(product_id=f"p{n}", quantity_remaining=stock)
            carts.append((f"k{n}", cart))
            products.append((f"k{n}", product))
            n += 1
        for resource, chunk in (("carts", carts), ("products", products)):
            report = check_items(resource, chunk, known=KNOWN, after_models=True)
            assert findings(report) == reference(resource, chunk, KNOWN), resource


def test_a_value_judged_once_is_not_given_to_gx_again(
        fresh_verdicts: None, monkeypatch: pytest.MonkeyPatch) -> None:
    judged: list[list[Any]] = []
    judge = check_module._judge_values

    def spy(compiled: Any, name: str, column: str, values: list[Any]) -> Any:
        if name == "expect_column_values_to_match_regex(lang)":
            judged.append(sorted(values))
        return judge(compiled, name, column, values)

    monkeypatch.setattr(check_module, "_judge_values", spy)
    groups = valid("groups", 6)
    for i, lang in enumerate(["en", "fr", "xx", "en", "xx", "de"]):
        groups[i]["lang"] = lang
    first = check_items("groups", [(f"a{i}", g) for i, g in enumerate(groups[:3])],
                        after_models=True)
    second = check_items("groups", [(f"b{i}", g) for i, g in enumerate(groups[3:])],
                         after_models=True)

    assert judged == [["en", "fr", "xx"], ["de"]]
    assert first.failures == {"a2": ["expect_column_values_to_match_regex(lang)"]}
    assert second.failures == {"b1": ["expect_column_values_to_match_regex(lang)"]}


def test_a_value_one_suite_judged_is_not_given_to_gx_again_by_a_rule_deciding_alike(
        fresh_verdicts: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Customers come before their orders: the orders' ``customer.email`` rule finds the
    emails the customers' ``email`` rule judged, the languages too; a carts' optional
    email is a column of another kind, judged apart."""
    judged: list[tuple[str, list[Any]]] = []
    judge = check_module._judge_values

    def spy(compiled: Any, name: str, column: str, values: list[Any]) -> Any:
        judged.append((f"{compiled.suite.resource}.{column}", sorted(map(str, values))))
        return judge(compiled, name, column, values)

    monkeypatch.setattr(check_module, "_judge_values", spy)
    emails = ["ada@example.com", "bo@example..com"]
    customers = valid("customers", 2)
    for customer, email in zip(customers, emails, strict=True):
        customer.update(email=email, lang="en")
    orders = [order(i, "en", "EUR", email, 101) for i, email in enumerate(emails)]
    (cart,) = valid("carts", 1)
    cart["email"] = emails[0]

    first = check_items("customers", [(f"c{i}", c) for i, c in enumerate(customers)],
                        after_models=True)
    judged_by_customers = len(judged)
    second = check_items("orders", [(f"o{i}", o) for i, o in enumerate(orders)], known=KNOWN,
                         after_models=True)
    third = check_items("carts", [("k0", cart)], known=KNOWN, after_models=True)

    assert ("customers.email", emails) in judged[:judged_by_customers]
    assert [column for column, _ in judged[judged_by_customers:]] == [
        "orders.currency", "orders.unknown_product_lines", "carts.email"]
    email_rule = "expect_column_values_to_match_regex({})"
    assert first.failures == {"c1": [email_rule.format("email")]}
    assert second.failures == {"o1": [email_rule.format("customer.email")]}
    assert third.failures == {}


def test_past_its_capacity_a_rule_still_judges_new_values() -> None:
    verdicts = Verdicts(capacity=2)
    calls: list[list[object]] = []

    def run(values: list[object]) -> check_module.Finding:
        calls.append(values)
        return check_module.Finding(False, [str(i) for i, v in enumerate(values) if v == "bad"])

    assert verdicts.judge(["a", "b"], ["ok", "fine"], "text", run) == \
        check_module.Finding(True, [])
    found = verdicts.judge(["c", "d", "e"], ["bad", "ok", "bad"], "text", run)
    assert found == check_module.Finding(False, ["c", "e"])
    assert len(verdicts.passes) == 2 and calls[-1] == ["bad"]
    assert verdicts.judge(["f"], ["bad"], "text", run) == check_module.Finding(False, ["f"])
    assert calls[-1] == ["bad"]  # not kept: judged again


def test_pooled_warnings_find_the_same_items_a_few_chunks_at_a_time() -> None:
    full = 2 * check_module.POOL_CHUNKS  # chunks of 2 rows fill the pool at this many
    count = 2 * full + 3
    orders = valid("orders", count)
    late = {3, full + 1, count - 1}  # created after their update: a warning
    taxed = {7, full + 2}  # less with tax than without: a warning
    for i, item in enumerate(orders):
        item["order_id"] = f"o{i}"
        if i in late:
            item["created_at"] = "2099-01-01T00:00:00Z"
        if i in taxed:
            item["amount_without_tax"] = item["amount"] + 1
    orders[5]["lang"] = "xx"  # blocking: held back with its own chunk
    chunks = [[(f"k{i}", orders[i]) for i in range(start, min(start + 2, count))]
              for start in range(0, count, 2)]
    pool = Pool(chunk_items=2)  # judged every ``full`` rows
    reports = [check_items("orders", chunk, known=KNOWN, after_models=True, pool=pool)
               for chunk in chunks]
    drained = pool.drain()
    alone = [check_items("orders", chunk, known=KNOWN, after_models=True) for chunk in chunks]

    assert [r.failures for r in reports] == [r.failures for r in alone]
    assert {"k5"} == {key for r in reports for key in r.failures}
    pooled = [r for r in reports if any("pair" in x["name"] for x in r.results)]
    assert len(pooled) == 2 and len(drained) == 1  # when full, twice, then the last 3
    assert drained[0].rows == 0
    with_pool, without = summarize([*reports, *drained]), summarize(alone)
    assert with_pool["rows"] == without["rows"] == count
    rules = {r["name"]: r for r in with_pool["rules"]}
    assert rules == {r["name"]: r for r in without["rules"]}
    updated = rules["expect_column_pair_values_a_to_be_greater_than_b(updated_at, created_at)"]
    amounts = rules["expect_column_pair_values_a_to_be_greater_than_b(amount, amount_without_tax)"]
    assert set(updated["sample"]) == {f"k{i}" for i in late}
    assert set(amounts["sample"]) == {f"k{i}" for i in taxed}
    assert pool.drain() == []  # drained: nothing is judged twice


@pytest.mark.parametrize("resource", sample_resources())
def test_rows_taken_where_items_are_made_judge_as_the_items_do(resource: str) -> None:
    items = faulty(resource)
    rows = [suite_row(resource, item) for _, item in items]
    assert all(row is not None for row in rows)

    taken = check_items(resource, items, known=KNOWN, after_models=True,
                        rows=rows)  # type: ignore[arg-type]
    read = check_items(resource, items, known=KNOWN, after_models=True)

    assert (taken.failures, taken.warnings) == (read.failures, read.warnings)
    assert taken.results == read.results
    assert taken.failures or not any(rule.blocking for rule in
                                     check_module._compile(resource, True).rules.values())


def test_rows_a_pool_cannot_judge_show_as_its_rules_errors(
        monkeypatch: pytest.MonkeyPatch) -> None:
    framed = check_module.typed_frame

    def broken(suite: Any, keys: list[str], values: Mapping[str, list[Any]]) -> Any:
        if "created_at" in values:  # the pooled dates rule's frame
            raise ValueError("no frame today")
        return framed(suite, keys, values)

    monkeypatch.setattr(check_module, "typed_frame", broken)
    orders = valid("orders", check_module.POOL_CHUNKS)
    for i, item in enumerate(orders):
        item["order_id"] = f"o{i}"
    pool = Pool(chunk_items=1)  # full at ``POOL_CHUNKS`` rows: this chunk fills it

    report = check_items("orders", [(f"k{i}", o) for i, o in enumerate(orders)],
                         known=KNOWN, after_models=True, pool=pool)

    dates = [r for r in report.results if "updated_at, created_at" in r["name"]]
    assert len(dates) == 1 and not dates[0]["success"]
    assert "no frame today" in dates[0]["error"]
    assert report.failures == {} and pool.drain() == []

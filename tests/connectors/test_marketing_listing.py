"""Listing through the client: the 15 operators in both encodings, sorting, projection and
walking every page, against the real sandbox."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest

from connectors.http.retry import RetryPolicy
from connectors.marketing.client import MarketingClient
from connectors.marketing.operations.pagination import PaginationLimitError
from connectors.marketing.query import Operator, Query
from connectors.marketing.samples import sample_item
from tests.support import new_key

pytestmark = pytest.mark.anyio
FAST = RetryPolicy(max_attempts=3, initial_backoff=1, max_backoff=0.05, jitter=0.01)

#: (order_id, amount, currency, reference, created_at day, is_confirmed)
ORDERS = [
    ("o1", 5, "EUR", "ABC-1", 1, True),
    ("o2", 10, "USD", "abd-2", 2, True),
    ("o3", 19.9, "EUR", "XYZ", 3, False),
    ("o4", 20, "GBP", "R,1", 4, True),
    ("o5", 30, "EUR", "a_c%", 5, True),
    ("o6", 99.5, "USD", "ZABC", 6, True),
]


def day(n: int) -> datetime:
    return datetime(2026, 1, n, tzinfo=UTC)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def orders_shop(sandbox) -> str:
    """The key of a shop holding ORDERS (written once, read by every operator case)."""
    key = new_key()
    items = [
        sample_item(
            "orders", order_id=oid, amount=amount, currency=currency, reference=reference,
            created_at=day(d).isoformat(), is_confirmed=confirmed,
        )
        for oid, amount, currency, reference, d, confirmed in ORDERS
    ]
    answer = sandbox.client(key).post("/orders", json=items).json()
    assert answer["rejected_count"] == 0, answer
    return key


@pytest.fixture
async def both(sandbox, orders_shop) -> AsyncIterator[dict[str, MarketingClient]]:
    """One client per query encoding, on the same shop."""
    clients = {
        encoding: MarketingClient(
            sandbox.base_url, orders_shop, retry=FAST, query_encoding=encoding
        )
        for encoding in ("brackets", "json")
    }
    yield clients
    for client in clients.values():
        await client.aclose()


async def results(clients: dict[str, MarketingClient], query: Query) -> dict[str, list[Any]]:
    out = {}
    for encoding, client in clients.items():
        page = await client.list_orders(query.select("order_id").page(100))
        out[encoding] = [r["order_id"] for r in page.data]
    return out


OPERATOR_CASES = [
    ("currency", "EQUALS", ["EUR"], {"o1", "o3", "o5"}),
    ("currency", "NOT_EQUALS", ["EUR"], {"o2", "o4", "o6"}),
    ("reference", "CONTAINS", ["ab"], {"o1", "o2", "o6"}),
    ("reference", "NOT_CONTAINS", ["ab"], {"o3", "o4", "o5"}),
    ("reference", "STARTS_WITH", ["ab"], {"o1", "o2"}),
    ("reference", "ENDS_WITH", ["1"], {"o1", "o4"}),
    ("amount", "LESS_THAN", [19.9], {"o1", "o2"}),
    ("amount", "LESS_THAN_OR_EQUAL_TO", [19.9], {"o1", "o2", "o3"}),
    ("amount", "GREATER_THAN", [20], {"o5", "o6"}),
    ("amount", "GREATER_THAN_OR_EQUAL_TO", [20], {"o4", "o5", "o6"}),
    ("reference", "IN", ["R,1", "XYZ"], {"o3", "o4"}),  # a value with a comma stays whole
    ("currency", "NOT_IN", ["EUR", "USD"], {"o4"}),
    ("reference", "LIKE", ["a_c%"], {"o1", "o5"}),
    ("created_at", "BETWEEN", [day(2), day(4)], {"o2", "o3", "o4"}),
    ("amount", "NOT_BETWEEN", [10, 30], {"o1", "o6"}),
]


def test_the_cases_cover_all_fifteen_operators():
    assert sorted(c[1] for c in OPERATOR_CASES) == sorted(Operator)


@pytest.mark.parametrize(
    ("field", "operator", "values", "expected"), OPERATOR_CASES, ids=[c[1] for c in OPERATOR_CASES]
)
async def test_each_operator_gives_the_same_records_in_both_encodings(
    both, field, operator, values, expected
):
    found = await results(both, Query().where(field, operator, *values))

    assert set(found["brackets"]) == expected
    assert found["json"] == found["brackets"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        pytest.param(Query().where("is_confirmed", "EQUALS", False), ["o3"], id="boolean"),
        pytest.param(Query().where("shipping_number", "EQUALS", None),
                     ["o1", "o2", "o3", "o4", "o5", "o6"], id="null"),
        pytest.param(Query().where("shipping_number", "NOT_IN", None, "x"), [], id="not-in-null"),
        pytest.param(Query().where("created_at", "GREATER_THAN", "2026-01-05T00:00:00Z"),
                     ["o6"], id="timestamp-text"),
        pytest.param(
            Query().where("currency", "IN", "EUR", "USD").or_where("amount", "LESS_THAN", 10)
            .or_where("reference", "STARTS_WITH", "Z"),
            ["o1", "o6"], id="filters-and-any-or-filters",
        ),
        pytest.param(Query().order_by("currency").order_by("amount", "desc"),
                     ["o5", "o3", "o1", "o4", "o6", "o2"], id="two-orders"),
    ],
)
async def test_combinations_and_order_agree_in_both_encodings(both, query, expected):
    found = await results(both, query)

    assert found["brackets"] == expected
    assert found["json"] == expected


async def test_select_projects_each_record_to_the_fields(both):
    for client in both.values():
        page = await client.list_orders(Query().select("order_id", "amount").page(2, 1))
        assert page.data == [{"order_id": "o2", "amount": 10}, {"order_id": "o3", "amount": 19.9}]
        assert (page.meta.pagination.total_items, page.meta.pagination.offset) == (6, 1)


# --- walking every page -----------------------------------------------------------------------


@pytest.fixture
async def client(sandbox) -> AsyncIterator[MarketingClient]:
    async with MarketingClient(sandbox.base_url, new_key(), retry=FAST) as client:
        yield client


async def test_iter_pages_walks_to_the_last_page_once(client):
    customers = [
        sample_item("customers", customer_id=f"c{i:02}", email=f"c{i:02}@example.com")
        for i in range(23)
    ]
    await client.bulk_save("customers", customers)

    pages = [p async for p in client.iter_pages(client.list_resource, "customers", page_size=5)]

    assert [len(p.data) for p in pages] == [5, 5, 5, 5, 3]
    assert [p.meta.pagination.current_page for p in pages] == [1, 2, 3, 4, 5]
    seen = [r["customer_id"] for p in pages for r in p.data]
    assert sorted(seen) == sorted(c["customer_id"] for c in customers)
    emails = [r["contact_data_email"] async for r in client.iter_records(
        client.list_contacts,
        query=Query().where("contact_data_email", "ENDS_WITH", "1@example.com"),
        page_size=1,
    )]
    assert emails == ["c01@example.com", "c11@example.com", "c21@example.com"]


async def test_iter_pages_walks_event_listings_through_settings(client):
    for i in range(7):
        await client.create_event(f"Event {i}", f"Event{i}")

    pages = [p async for p in client.iter_pages(
        client.list_events, query=Query().order_by("id_event", "desc").select("code_name"),
        page_size=3,
    )]

    assert [len(p.data) for p in pages] == [3, 3, 1]
    newest_first = [f"Event{i}" for i in range(6, -1, -1)]
    assert [r["code_name"] for p in pages for r in p.data] == newest_first


async def test_iter_pages_starts_at_the_querys_offset_and_stops_at_max_pages(client):
    carriers = [sample_item("carriers", carrier_id=f"k{i}") for i in range(6)]
    await client.bulk_save("carriers", carriers)

    pages = [p async for p in client.iter_pages(
        client.list_resource, "carriers", query=Query().page(1, 4), page_size=1,
    )]
    assert [p.data[0]["carrier_id"] for p in pages] == ["k4", "k5"]

    with pytest.raises(PaginationLimitError, match="list_resource has more than 2 pages of 2"):
        async for _ in client.iter_records(
            client.list_resource, "carriers", page_size=2, max_pages=2
        ):
            pass

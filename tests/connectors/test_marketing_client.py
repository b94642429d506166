"""Every operation of the async Marketing API client, against the real sandbox over HTTP.

One fresh shop per test (``--accept-any-key``, no visibility delay), so reads see writes at
once and tests cannot see each other's data.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from connectors.http.retry import RetryPolicy
from connectors.marketing.client import MarketingClient
from connectors.marketing.errors import NotFoundError, RequestRejected
from connectors.marketing.models import BulkResult, CustomKpi, DataSource, ListPage
from connectors.marketing.query import Query
from connectors.marketing.samples import sample_item
from tests.support import new_key, new_kpi_key

pytestmark = pytest.mark.anyio
#: waits of max_backoff (0.05 s): initial_backoff stays 1 because any other value makes
#: connectors/http/retry.py pass tenacity's deprecated ``initial`` (an error under pytest)
FAST = RetryPolicy(max_attempts=3, initial_backoff=1, max_backoff=0.05, jitter=0.01)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def client(sandbox) -> AsyncIterator[MarketingClient]:
    """A client of a fresh shop, with keys for both endpoint families."""
    async with MarketingClient(
        sandbox.base_url, new_key(), kpi_api_key=new_kpi_key(), retry=FAST
    ) as client:
        yield client


def ids(page: ListPage[dict[str, Any]], field: str) -> list[Any]:
    return [record[field] for record in page.data]


# --- data sources and the shop ----------------------------------------------------------------


async def test_data_sources_are_created_found_updated_and_deleted(client):
    default = (await client.list_data_sources()).data
    assert [(s.label, s.is_default) for s in default] == [("Default", True)]

    created = await client.create_data_source("ERP", "api", config='{"a": 1}')
    assert isinstance(created, DataSource) and created.label == "ERP" and not created.is_default
    assert (await client.find_or_create_data_source("ERP")).id_data_source == created.id_data_source
    other = await client.find_or_create_data_source("POS", "api")
    assert other.id_data_source not in (created.id_data_source, default[0].id_data_source)

    updated = await client.update_data_source(created.id_data_source, label="ERP 2", active=False)
    assert (updated.label, updated.active) == ("ERP 2", False)
    await client.delete_data_source(created.id_data_source)
    await client.delete_data_source(created.id_data_source)  # idempotent
    labels = [s.label for s in (await client.list_data_sources()).data]
    assert labels == ["Default", "POS"]


class CreatedThenFailed(httpx.AsyncHTTPTransport):
    """The API's real answers, except the first data source created: made, then answered
    with a 500, as when a server fails after its write — the client cannot know it was made."""

    def __init__(self) -> None:
        super().__init__()
        self.creates = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await super().handle_async_request(request)
        if request.method == "POST" and request.url.path.endswith("/data-sources"):
            self.creates += 1
            if self.creates == 1:
                await response.aread()
                return httpx.Response(500, json={"statusCode": 500, "message": "boom"},
                                      request=request)
        return response


async def test_a_data_source_created_then_answered_with_a_500_is_found_not_made_twice(sandbox):
    wire = CreatedThenFailed()
    async with MarketingClient(sandbox.base_url, new_key(), retry=FAST, transport=wire) as client:
        found = await client.find_or_create_data_source("ERP")

        labelled = [s for s in (await client.list_data_sources()).data if s.label == "ERP"]
    assert [s.id_data_source for s in labelled] == [found.id_data_source]
    assert wire.creates == 1


async def test_connect_shop_answers_the_stored_connection(client):
    connection = await client.connect_shop(
        default_currency="EUR", default_lang="fr", langs=["fr", "en"], timezone="Europe/Paris",
        url_client="https://shop.example.com", module_version="1.2.3",
    )
    assert connection["default_currency"] == "EUR" and connection["langs"] == ["fr", "en"]
    assert connection["ecommerce_version"] is None


# --- sync resources: writes and reads ---------------------------------------------------------


async def test_sync_writes_and_single_reads(client):
    customer = sample_item("customers", group_ids=["g1"])
    order = sample_item("orders")
    results = [
        await client.bulk_save("customers", [customer]),
        await client.bulk_save(
            "groups", [sample_item("groups"), sample_item("groups", group_id="g2")]
        ),
        await client.bulk_save("orders", [order]),
        await client.bulk_save("addresses", [sample_item("addresses")]),
        await client.bulk_save("statuses", [sample_item("statuses")]),
    ]
    assert all(isinstance(r, BulkResult) and r.rejected_count == 0 for r in results)

    assert (await client.get_customer("c-1001"))["email"] == "ada@example.com"
    assert [g["group_id"] for g in await client.get_customer_groups("c-1001")] == ["g1"]
    addresses = await client.list_customer_addresses("c-1001")
    assert ids(addresses, "address_id") == [501]
    assert (await client.get_order("o-9001"))["reference"] == "XKBKNABJK"
    by_reference = await client.get_order_by_reference("XKBKNABJK")
    assert by_reference["order_id"] == "o-9001"
    assert by_reference["customer_email"] == "ada@example.com"
    assert ids(await client.list_orders(), "order_id") == ["o-9001"]
    assert ids(await client.list_orders_statuses(), "name") == ["Payment accepted"]
    assert ids(await client.list_resource("groups"), "group_id") == ["g1", "g2"]


async def test_bulk_update_rejects_unknown_ids_and_bulk_delete_is_idempotent(client):
    await client.bulk_save("carriers", [sample_item("carriers")])
    result = await client.bulk_update(
        "carriers", [sample_item("carriers", name="DHL"), sample_item("carriers", carrier_id="zz")]
    )
    assert (result.sent_count, result.rejected_count) == (1, 1)
    rejected = result.rejected_items[0]
    assert rejected.index == 1 and "no item with carrier_id" in rejected.errors[0]
    assert ids(await client.list_resource("carriers"), "name") == ["DHL"]

    deleted = await client.bulk_delete("carriers", ["k1", "unknown"])
    assert deleted.sent_count == 2
    assert (await client.list_resource("carriers")).data == []


async def test_list_resource_names_the_known_resources_and_needs_parents(client):
    with pytest.raises(ValueError, match="unknown sync resource 'nope'; known: customers"):
        await client.list_resource("nope")
    with pytest.raises(ValueError, match="needs the product_id"):
        await client.list_resource("variations")
    await client.bulk_save("variations", [sample_item("variations")], parent_id=101)
    assert ids(await client.list_resource("variations", parent_id=101), "variation_id") == [5]


async def test_a_custom_data_records_batch_is_checked_before_sending(client):
    with pytest.raises(ValueError, match="at most 20 items, got 21"):
        await client.save_custom_data_records(1, [{}] * 21)
    assert client.stats.attempts == 0


# --- contacts and lists -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    [{"id_shop_contact": 1}, {"id_customer_shop": "c-1001"},
     {"contact_data_email": "ADA@example.com"}],
    ids=["id_shop_contact", "id_customer_shop", "email"],
)
async def test_get_contact_by_each_of_its_keys(client, key):
    await client.bulk_save("customers", [sample_item("customers")])
    contact = await client.get_contact(**key)
    assert contact["contact_data_email"] == "ada@example.com"


async def test_get_contact_takes_exactly_one_key(client):
    with pytest.raises(ValueError, match="exactly one of id_shop_contact"):
        await client.get_contact(id_shop_contact=1, contact_data_email="a@b.co")


async def test_contacts_their_history_and_their_lists(client):
    await client.bulk_save("customers", [
        sample_item("customers"),
        sample_item("customers", customer_id="c-2", email="bob@example.com", lang="fr",
                    is_opt_in=False),
    ])
    contacts = await client.list_contacts(Query().order_by("contact_data_email", "desc"))
    assert ids(contacts, "contact_data_email") == ["bob@example.com", "ada@example.com"]
    history = await client.list_contact_consent_history(Query().where("consent", "EQUALS", True))
    assert ids(history, "contact_data_email") == ["ada@example.com"]
    assert (await client.list_contact_messages_reject()).data == []
    assert await client.get_contact_tags(1) == []

    segment = await client.create_list("French", "segment")
    plain = await client.create_list("Newsletter")
    assert (segment["type"], plain["type"]) == ("segment", "list")
    config = {"filters": [{"field": "contact_lang", "operator": "EQUALS", "values": "fr"}]}
    updated = await client.update_list(segment["id_list"], segmentation_config=config, name="FR")
    assert (updated["name"], updated["nb_contacts"]) == ("FR", 1)
    assert (await client.get_list(segment["id_list"]))["name"] == "FR"
    lists = await client.list_lists(Query().select("id_list", "name"))
    assert ids(lists, "name") == ["FR", "Newsletter"]
    members = await client.list_list_contacts(segment["id_list"])
    assert ids(members, "contact_data_email") == ["bob@example.com"]
    bob = members.data[0]["id_shop_contact"]
    assert [entry["name"] for entry in await client.get_contact_lists(bob)] == ["FR"]

    await client.delete_list(plain["id_list"])
    await client.delete_list(plain["id_list"])
    assert ids(await client.list_lists(), "name") == ["FR"]


async def test_contact_custom_data_definitions_are_those_related_to_contacts(client):
    await client.bulk_save("customers", [sample_item("customers")])
    await client.create_custom_data_definition(
        "loyalty", [{"name": "contact", "type": "number"}, {"name": "points", "type": "number"}],
        relationships=[{"sourceField": "contact", "targetSchemaType": "system",
                        "targetSchema": "contacts", "targetField": "id_shop_contact"}],
    )
    await client.create_custom_data_definition("stores", [{"name": "city", "type": "text"}])
    related = await client.get_contact_custom_data_definitions(1)
    assert [d["name"] for d in related] == ["loyalty"]


# --- custom data ------------------------------------------------------------------------------


async def test_custom_data_definitions_records_and_overrides(client):
    definition = await client.create_custom_data_definition(
        "warranty", [{"name": "sku", "type": "text", "required": True},
                     {"name": "months", "type": "number"}],
        description="Extended warranties", unique_keys=["sku"],
    )
    id_def = definition["id"]
    assert definition["active"] is True
    assert (await client.get_custom_data_definition(id_def))["description"] == "Extended warranties"
    listed = await client.list_custom_data_definitions(Query().where("name", "EQUALS", "warranty"))
    assert ids(listed, "id") == [id_def]
    extended = await client.extend_custom_data_definition(
        id_def, [{"name": "price", "type": "decimal"}]
    )
    assert [f["name"] for f in extended["fields"]] == ["sku", "months", "price"]

    saved = await client.save_custom_data_records(
        id_def, [{"sku": f"S{i}", "months": i} for i in range(1, 4)] + [{"months": 1}]
    )
    assert (saved.sent_count, saved.rejected_count) == (3, 1)
    records = await client.list_custom_data_records(id_def, Query().order_by("months", "desc"))
    assert ids(records, "sku") == ["S3", "S2", "S1"]
    first = records.data[-1]["id"]
    put = await client.update_custom_data_records(
        id_def, [{"id": first, "months": 12}, {"id": 999}]
    )
    assert (put.sent_count, put.rejected_count) == (1, 1)
    await client.update_custom_data_record(id_def, first, {"price": 9.5})
    one = await client.list_custom_data_records(id_def, Query().where("id", "EQUALS", first))
    assert one.data == [{"id": first, "sku": "S1", "months": 12, "price": 9.5}]
    await client.delete_custom_data_record(id_def, first)
    result = await client.bulk_delete_custom_data_records(id_def, [first + 1, 12345])
    assert result.sent_count == 2
    assert ids(await client.list_custom_data_records(id_def), "sku") == ["S3"]

    rows = await client.update_field_override_priorities(
        "products", "price",
        [{"id_custom_data_definition": id_def, "custom_field_name": "price", "priority": 1}],
    )
    assert [(r["target_schema"], r["system_field"], r["priority"]) for r in rows] == [
        ("products", "price", 1)
    ]
    overrides = await client.list_field_override_priorities()
    assert ids(overrides, "custom_field_name") == ["price"]

    assert (await client.deactivate_custom_data_definition(id_def))["active"] is False
    with pytest.raises(RequestRejected, match="is deactivated"):
        await client.save_custom_data_records(id_def, [{"sku": "S9"}])
    assert (await client.activate_custom_data_definition(id_def))["active"] is True

    await client.delete_custom_data_definition(id_def)
    await client.delete_custom_data_definition(id_def)
    assert (await client.list_custom_data_definitions()).data == []
    assert (await client.list_field_override_priorities()).data == []


# --- events -----------------------------------------------------------------------------------


async def test_events_are_declared_fired_and_recorded(client):
    await client.bulk_save("customers", [sample_item("customers")])
    properties = {"customData": [{"name": "tracking", "type": "text", "required": True}]}
    event = await client.create_event("Order shipped", "Order.Shipped", properties)
    assert (event["code_name"], event["properties"]["customData"][0]["name"]) == (
        "Order.Shipped", "tracking"
    )
    assert (await client.get_event(event["id_event"]))["name"] == "Order shipped"
    renamed = await client.update_event(event["id_event"], code_name="Order_Shipped")
    assert renamed["code_name"] == "Order_Shipped"
    listed = await client.list_events(Query().select("id_event", "code_name"))
    assert listed.data == [{"id_event": event["id_event"], "code_name": "Order_Shipped"}]

    answer = await client.trigger_event(
        "Order_Shipped", {"contact": {"email": "ada@example.com"}, "customData": {"tracking": "T1"}}
    )
    assert answer["queued"] is True
    with pytest.raises(RequestRejected) as rejected:
        await client.trigger_event("Order_Shipped", {"contact": {"email": "ada@example.com"},
                                                     "customData": {"tracking": 5, "x": 1}})
    assert rejected.value.status_code == 400
    assert rejected.value.errors == [
        "Invalid type for property: customData.tracking. Expected text, got number",
        "Undeclared property: customData.x",
    ]
    histories = await client.list_event_histories(
        Query().where("code_name", "EQUALS", "Order_Shipped")
    )
    assert [(h["id_event_history"], h["execution_status"]) for h in histories.data] == [
        (answer["id_event_history"], "triggered")
    ]

    await client.delete_event(event["id_event"])
    await client.delete_event(event["id_event"])
    with pytest.raises(NotFoundError):
        await client.get_event(event["id_event"])


# --- custom KPIs ------------------------------------------------------------------------------


def revenue(**changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": {"en": "Revenue"},
        "source_type": "system",
        "source_schema_name": "orders",
        "measures": [{"id_measure": "m1", "type": "sum", "field": "amount",
                      "label": {"en": "Revenue"}, "format": "currency", "suffix": "EUR",
                      "position": 0}],
        "dimensions": [{"id_dimension": "d1", "field": "currency", "position": 0}],
        "time_field": "created_at",
    }
    return {**body, **changes}


async def test_custom_kpis_with_their_own_key(client):
    assert await client.list_custom_kpis() == []
    kpi = await client.create_custom_kpi(revenue())
    assert isinstance(kpi, CustomKpi) and kpi.status == "backfilling"
    assert kpi.dimension_field == "currency" and kpi.source_table_name == "orders"
    assert [k.id_custom_kpi for k in await client.list_custom_kpis()] == [kpi.id_custom_kpi]
    assert (await client.get_custom_kpi(kpi.id_custom_kpi)).name == {"en": "Revenue"}
    updated = await client.update_custom_kpi(kpi.id_custom_kpi, {"name": {"en": "Sales"}})
    assert (updated.name, updated.id_custom_kpi) == ({"en": "Sales"}, kpi.id_custom_kpi)

    sources = await client.list_custom_kpi_sources()
    assert {"orders", "customers"} <= {s["source_schema_name"] for s in sources}
    fields = await client.list_custom_kpi_fields("system", "orders", ["customers"])
    names = {f["name"] for f in fields}
    assert {"amount", "customers.email"} <= names
    preview = await client.preview_custom_kpi(revenue())
    assert preview == {"rows": []}

    await client.delete_custom_kpi(kpi.id_custom_kpi)
    await client.delete_custom_kpi(kpi.id_custom_kpi)
    assert await client.list_custom_kpis() == []

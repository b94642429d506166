"""The client and the sandbox read the Marketing API spec each on their own
(``connectors.marketing`` and ``sandbox.marketing.spec``); here the two readings are held
side by side where they must agree, so a drift in either fails a test instead of being
shared: the resource table, the listing grammar, and which items are valid.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest
import qs_codec
from pydantic import BaseModel, ValidationError

from connectors.marketing import items as client_items
from connectors.marketing import query as client_query
from connectors.marketing import resources as client_resources
from connectors.marketing.samples import sample_item, sample_resources
from sandbox.marketing.errors import ApiError, describe_validation_error
from sandbox.marketing.http import QS_OPTIONS
from sandbox.marketing.listing_parse import parse_event_settings, parse_list_query
from sandbox.marketing.spec import query as sandbox_query
from sandbox.marketing.spec import resources as sandbox_resources
from sandbox.marketing.spec.examples import EXAMPLES

CLIENT = client_resources.SYNC_RESOURCES
SANDBOX = sandbox_resources.SYNC_RESOURCES


# --- the resource table ---------------------------------------------------------------------


def test_both_know_the_same_sync_resources_in_the_same_order() -> None:
    assert list(SANDBOX) == list(CLIENT) == sample_resources()


@pytest.mark.parametrize("name", list(CLIENT))
def test_a_resource_is_written_where_and_as_the_client_writes_it(name: str) -> None:
    client, sandbox = CLIENT[name], SANDBOX[name]
    assert (sandbox.route, sandbox.bulk_route, sandbox.parent_field) == (
        client.route, client.bulk_route, client.parent_field)
    assert (sandbox.max_batch, sandbox.delete_key) == (client.max_batch, client.delete_key)
    assert sandbox.key_fields == client.key_fields
    assert sandbox.model.__name__ == client.model.__name__


def test_custom_data_records_live_at_the_same_route_with_the_same_batch() -> None:
    assert sandbox_resources.CUSTOM_DATA_RECORDS_ROUTE == client_resources.CUSTOM_DATA_RECORDS_ROUTE
    assert (sandbox_resources.CUSTOM_DATA_RECORDS_MAX_BATCH
            == client_resources.CUSTOM_DATA_RECORDS_MAX_BATCH)


# --- the listing grammar --------------------------------------------------------------------


def test_both_know_the_same_operators_and_which_take_many_values() -> None:
    assert [op.value for op in sandbox_query.Operator] == [op.value for op in client_query.Operator]
    assert ({op.value for op in sandbox_query.MULTI_VALUE_OPERATORS}
            == {op.value for op in client_query.MULTI_VALUE_OPERATORS})


def test_both_page_with_the_same_default_and_largest_limit() -> None:
    assert (sandbox_query.DEFAULT_LIMIT, sandbox_query.MAX_LIMIT) == (
        client_query.DEFAULT_LIMIT, client_query.MAX_LIMIT)


def _values_cases() -> Iterator[tuple[str, tuple[Any, ...]]]:
    """Every operator with none, one, two and three values, and with a null."""
    for op in client_query.Operator:
        for values in [(), ("5",), ("1", "9"), ("1", "5", "9"), (None,), ("a,b",)]:
            yield op.value, values


def _sandbox_parses(params: list[tuple[str, str]]) -> sandbox_query.Filter | ApiError:
    decoded = qs_codec.decode(urlencode(params), QS_OPTIONS)
    try:
        return parse_list_query(decoded, ["f"]).filters[0]
    except ApiError as exc:
        return exc


@pytest.mark.parametrize("operator, values", list(_values_cases()))
def test_a_criterion_the_client_builds_is_read_back_the_same_by_the_sandbox(
    operator: str, values: tuple[Any, ...]
) -> None:
    try:
        built = client_query.Query().where("f", operator, *values)
    except client_query.QueryError:
        return  # refused before sending: the next test sends it anyway
    for encoding in client_query.ENCODINGS:
        parsed = _sandbox_parses(built.to_params(encoding))
        assert not isinstance(parsed, ApiError), (encoding, parsed.errors)
        assert (parsed.field, parsed.operator.value) == ("f", operator)
        # bracket notation carries text: null travels as "null", which the sandbox reads as null
        sent = ["null" if v is None else str(v) for v in built.filters[0].values]
        assert ["null" if v is None else str(v) for v in parsed.values] == sent, encoding


@pytest.mark.parametrize("operator, values", list(_values_cases()))
def test_a_criterion_the_client_refuses_is_refused_by_the_sandbox(
    operator: str, values: tuple[Any, ...]
) -> None:
    try:
        client_query.criterion("f", operator, *values)
    except client_query.QueryError:
        pass
    else:
        return
    criterion = {"field": "f", "operator": operator, "values": list(values)}
    parsed = _sandbox_parses([("filters", json.dumps(criterion))])
    assert isinstance(parsed, ApiError), f"the sandbox accepts {criterion}"


@pytest.mark.parametrize("limit", [0, 1, client_query.MAX_LIMIT, client_query.MAX_LIMIT + 1])
def test_a_limit_is_accepted_by_one_side_exactly_when_by_the_other(limit: int) -> None:
    try:
        client_query.Query().page(limit)
        client_accepts = True
    except client_query.QueryError:
        client_accepts = False
    try:
        parse_list_query({"limit": str(limit)}, ["f"])
        sandbox_accepts = True
    except ApiError:
        sandbox_accepts = False
    assert client_accepts == sandbox_accepts


# --- the items ------------------------------------------------------------------------------


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    """A model's JSON schema without its prose (titles and descriptions may differ)."""
    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k not in ("title", "description")}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node
    return strip(model.model_json_schema())


@pytest.mark.parametrize("name", list(CLIENT))
def test_both_describe_an_item_with_the_same_fields_types_and_bounds(name: str) -> None:
    assert _schema(SANDBOX[name].model) == _schema(CLIENT[name].model)


@pytest.mark.parametrize("name", list(CLIENT))
def test_the_sample_items_of_each_side_are_valid_for_the_other(name: str) -> None:
    SANDBOX[name].model.model_validate(sample_item(name))
    CLIENT[name].model.model_validate(EXAMPLES[name])


#: values that break some field of some item: wrong types, empty, out of range, malformed
_HOSTILE: list[Any] = [
    None, "", " ", "x", "not-an-email", "2026-13-45", "2026-01-15", "2026-01-15T10:30:00Z",
    "EUR", "eur", "en", "english", "1", "a" * 192, "a" * 65536, 0, -1, 1.5, 2**63, -(2**63) - 1,
    math.inf, True, "true", [], ["x"], [-1], {}, {"x": 1},
]


def _leaves(item: dict[str, Any], where: tuple[str | int, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of every value of an item, into nested objects and the first list element."""
    for key, value in item.items():
        yield (*where, key)
        if isinstance(value, dict):
            yield from _leaves(value, (*where, key))
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            yield from _leaves(value[0], (*where, key, 0))


_GONE = object()


def _with(item: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    """A deep copy of ``item`` with the value at ``path`` replaced (or removed: ``_GONE``)."""
    copied = copy.deepcopy(item)
    parent: Any = copied
    for step in path[:-1]:
        parent = parent[step]
    if value is _GONE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return copied


def _mutations(name: str) -> Iterator[tuple[str, dict[str, Any]]]:
    item = sample_item(name)
    for path in _leaves(item):
        for value in [_GONE, *_HOSTILE]:
            yield f"{path}={'<removed>' if value is _GONE else repr(value)[:20]}", _with(
                item, path, value)


def _refusals(model: type[BaseModel], item: dict[str, Any]) -> list[str]:
    try:
        model.model_validate(item)
    except ValidationError as exc:
        return describe_validation_error(exc)
    return []


@pytest.mark.parametrize("name", list(CLIENT))
def test_an_item_is_refused_by_both_for_the_same_fields_in_the_same_words(name: str) -> None:
    disagreements = []
    for label, item in _mutations(name):
        by_sandbox = _refusals(SANDBOX[name].model, item)
        by_client = client_items.validate_item(CLIENT[name].model, item)
        if by_sandbox != by_client:
            disagreements.append(f"{label}: sandbox {by_sandbox}, client {by_client}")
    assert disagreements == []


def test_the_mutations_do_refuse_items() -> None:
    refused = [label for label, item in _mutations("orders")
               if _refusals(SANDBOX["orders"].model, item)]
    assert len(refused) > 100
    assert any(label.startswith("('products', 0, 'price')") for label in refused)


def test_an_event_listing_the_client_builds_is_read_back_the_same_by_the_sandbox() -> None:
    built = (client_query.Query().where("name", "STARTS_WITH", "order")
             .where("id_event", "IN", 1, 2).order_by("created_at", "desc").page(5, 10))

    parsed = parse_event_settings(built.to_event_settings(), None, ["name", "id_event",
                                                                    "created_at"])

    assert (parsed.limit, parsed.offset) == (5, 10)
    assert [(o.field, o.type) for o in parsed.order] == [("created_at", "desc")]
    assert [(f.field, f.operator.value, f.values) for f in parsed.filters] == [
        ("name", "STARTS_WITH", ["order"]), ("id_event", "IN", [1, 2])]

"""The client's listing query builder: immutable, validated early, both spec encodings."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from urllib.parse import urlencode

import pydantic
import pytest
import qs_codec

from connectors.marketing.query import Filter, Operator, Query, QueryError

FULL = (
    Query()
    .where("currency", "IN", "EUR", "U,SD")
    .where("amount", "BETWEEN", 10, 20.5)
    .or_where("is_confirmed", "EQUALS", True)
    .or_where("reference", "EQUALS", None)
    .order_by("amount", "desc")
    .order_by("order_id")
    .select("order_id", "amount")
    .page(5, 10)
)


def test_bracket_encoding_is_the_specs_bracket_notation():
    assert FULL.to_params("brackets") == [
        ("fields", "order_id,amount"),
        ("filters[0][field]", "currency"),
        ("filters[0][operator]", "IN"),
        ("filters[0][values][0]", "EUR"),
        ("filters[0][values][1]", "U,SD"),
        ("filters[1][field]", "amount"),
        ("filters[1][operator]", "BETWEEN"),
        ("filters[1][values]", "10,20.5"),
        ("orFilters[0][field]", "is_confirmed"),
        ("orFilters[0][operator]", "EQUALS"),
        ("orFilters[0][values]", "true"),
        ("orFilters[1][field]", "reference"),
        ("orFilters[1][operator]", "EQUALS"),
        ("orFilters[1][values]", "null"),
        ("order[0][field]", "amount"),
        ("order[0][type]", "desc"),
        ("order[1][field]", "order_id"),
        ("order[1][type]", "asc"),
        ("limit", "5"),
        ("offset", "10"),
    ]


def test_bracket_encoding_matches_what_qs_itself_encodes():
    """Node's qs (ported as qs_codec) is what the real service decodes with: values that
    hold a comma travel as an indexed array."""
    query = Query().where("lang", "IN", "e,n", "de").where("amount", "LESS_THAN", 3)
    ours = "&".join(f"{k}={v}" for k, v in query.to_params("brackets"))
    theirs = qs_codec.encode(
        {"filters": [{"field": "lang", "operator": "IN", "values": ["e,n", "de"]},
                     {"field": "amount", "operator": "LESS_THAN", "values": "3"}]},
        qs_codec.EncodeOptions(encode=False),
    )
    assert ours == theirs


def test_multiple_values_travel_comma_separated_unless_one_holds_a_comma_or_is_empty():
    """The spec's comma-separated form keeps a read-back of 100 ids in one short parameter
    (and under qs's default limit of 20 array indices)."""
    ids = [f"o-{n}" for n in range(100)]
    assert Query().where("order_id", "IN", *ids).to_params("brackets")[2:] == [
        ("filters[0][values]", ",".join(ids))]
    assert Query().where("order_id", "NOT_IN", "a", "").to_params("brackets")[2:] == [
        ("filters[0][values][0]", "a"), ("filters[0][values][1]", "")]


def test_json_encoding_is_one_object_per_repeated_parameter():
    params = FULL.to_params("json")

    assert [name for name, _ in params] == [
        "fields", "filters", "filters", "orFilters", "orFilters", "order", "order", "limit",
        "offset",
    ]
    decoded = [json.loads(v) for k, v in params if k in ("filters", "orFilters", "order")]
    assert decoded == [
        {"field": "currency", "operator": "IN", "values": ["EUR", "U,SD"]},
        {"field": "amount", "operator": "BETWEEN", "values": [10, 20.5]},
        {"field": "is_confirmed", "operator": "EQUALS", "values": True},
        {"field": "reference", "operator": "EQUALS", "values": None},
        {"field": "amount", "type": "desc"},
        {"field": "order_id", "type": "asc"},
    ]


@pytest.mark.parametrize("encoding", ["brackets", "json"])
def test_the_sandbox_parser_reads_back_the_same_query(encoding):
    from sandbox.marketing.listing_parse import parse_list_query

    raw = urlencode(FULL.to_params(encoding))
    decoded = qs_codec.decode(raw, qs_codec.DecodeOptions(list_limit=1000, depth=5))
    parsed = parse_list_query(decoded, ["currency", "amount", "is_confirmed", "reference",
                                        "order_id"])

    assert (parsed.limit, parsed.offset, parsed.fields) == (5, 10, ["order_id", "amount"])
    assert [(f.field, f.operator, [str(v) for v in f.values]) for f in parsed.filters] == [
        ("currency", Operator.IN, ["EUR", "U,SD"]), ("amount", Operator.BETWEEN, ["10", "20.5"]),
    ]
    assert [(f.field, f.operator) for f in parsed.or_filters] == [
        ("is_confirmed", Operator.EQUALS), ("reference", Operator.EQUALS),
    ]
    assert [(o.field, o.type) for o in parsed.order] == [("amount", "desc"), ("order_id", "asc")]


def test_values_of_other_types_are_spelled_alike_in_both_encodings():
    moment = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    query = Query().where("created_at", "GREATER_THAN", moment)

    assert query.to_params()[-1] == ("filters[0][values]", "2026-01-02T03:04:05+00:00")
    assert json.loads(query.to_params("json")[0][1])["values"] == "2026-01-02T03:04:05+00:00"


def test_a_multi_value_operator_also_takes_one_list():
    assert Query().where("lang", "IN", ["en", "de"]) == Query().where("lang", "IN", "en", "de")
    assert Query().where("lang", Operator.NOT_IN, ("en",)).filters == (
        Filter(field="lang", operator=Operator.NOT_IN, values=["en"]),
    )


def test_queries_are_immutable():
    base = Query().where("lang", "EQUALS", "en")
    narrower = base.where("amount", "GREATER_THAN", 3).page(20)

    assert len(base.filters) == 1 and base.limit is None
    assert len(narrower.filters) == 2 and narrower.limit == 20
    with pytest.raises(pydantic.ValidationError):
        base.limit = 3  # type: ignore[misc]


def test_an_empty_query_sends_nothing():
    assert Query().to_params() == [] and Query().to_params("json") == []
    assert Query().to_event_params() == [("settings", "{}")]


@pytest.mark.parametrize(
    ("build", "message"),
    [
        pytest.param(lambda q: q.where("amount", "BETWEEN", 1),
                     "amount BETWEEN needs exactly 2 values (low, high), got 1", id="between-1"),
        pytest.param(lambda q: q.where("amount", "NOT_BETWEEN", 1, 2, 3),
                     "amount NOT_BETWEEN needs exactly 2 values (low, high), got 3",
                     id="not-between-3"),
        pytest.param(lambda q: q.where("lang", "IN"), "lang IN needs at least one value",
                     id="in-empty"),
        pytest.param(lambda q: q.or_where("lang", "NOT_IN", []),
                     "lang NOT_IN needs at least one value", id="not-in-empty-list"),
        pytest.param(lambda q: q.where("lang", "EQUALS", "en", "de"),
                     "lang EQUALS takes a single value, got 2", id="equals-2"),
        pytest.param(lambda q: q.where("lang", "EQUALS"),
                     "lang EQUALS takes a single value, got 0", id="equals-0"),
        pytest.param(lambda q: q.where("lang", "equals", "en"),
                     "unknown operator 'equals' (operators are uppercase: 'EQUALS')",
                     id="lowercase-operator"),
        pytest.param(lambda q: q.where("lang", "SOUNDS_LIKE", "en"),
                     "unknown operator 'SOUNDS_LIKE'; valid operators: EQUALS, NOT_EQUALS",
                     id="unknown-operator"),
        pytest.param(lambda q: q.where("amount", "LESS_THAN", None),
                     "amount LESS_THAN cannot compare with null", id="null-comparison"),
        pytest.param(lambda q: q.where("lang", "EQUALS", ["en"]),
                     "lang EQUALS: values must be scalars", id="nested-value"),
        pytest.param(lambda q: q.where("", "EQUALS", 1), "field must be a non-empty field name",
                     id="empty-field"),
        pytest.param(lambda q: q.select("a,b"), "a selected field must be a non-empty",
                     id="comma-in-field"),
        pytest.param(lambda q: q.select(), "select needs at least one field", id="select-none"),
        pytest.param(lambda q: q.order_by("amount", "DESC"),  # type: ignore[arg-type]
                     "direction must be 'asc' or 'desc' (lowercase), got 'DESC'", id="DESC"),
        pytest.param(lambda q: q.page(0), "limit must be between 1 and 1000, got 0", id="limit-0"),
        pytest.param(lambda q: q.page(1001), "limit must be between 1 and 1000, got 1001",
                     id="limit-1001"),
        pytest.param(lambda q: q.page(10, -1), "offset must be >= 0, got -1", id="offset-neg"),
        pytest.param(lambda q: q.to_params("xml"),  # type: ignore[arg-type]
                     "encoding must be one of brackets, json", id="encoding"),
        pytest.param(lambda q: q.or_where("a", "EQUALS", 1).to_event_settings(),
                     "event listings take no orFilters", id="event-or-filters"),
    ],
)
def test_what_the_api_would_refuse_is_refused_early(build, message):
    with pytest.raises(QueryError) as caught:
        build(Query())
    assert str(caught.value).startswith(message)


def test_event_settings_carry_paging_order_and_filter_and_fields_repeat():
    query = (
        Query().where("code_name", "IN", "A", "B").order_by("created_at", "desc")
        .select("id_event", "code_name").page(3, 6)
    )

    params = query.to_event_params()

    assert params[1:] == [("fields", "id_event"), ("fields", "code_name")]
    assert params[0][0] == "settings"
    assert json.loads(params[0][1]) == {
        "limit": 3, "offset": 6, "order": [{"field": "created_at", "type": "desc"}],
        "filter": [{"field": "code_name", "operator": "IN", "values": ["A", "B"]}],
    }

"""The table of who refers to whom: complete against the item models, and the order it
gives — referenced resources first — for every platform's streams; a circle is refused."""

from __future__ import annotations

import types
from collections.abc import Iterator, Mapping, Sequence
from typing import Annotated, Any, Union, get_args, get_origin

import pytest
from pydantic import BaseModel

from connectors.marketing.references import (
    ATTRIBUTION,
    REFERENCES,
    REFERS_TO,
    Reference,
    ReferenceCycle,
    ordered,
    reference_order,
    stream_order,
    upstream,
)
from connectors.marketing.resources import SYNC_RESOURCES
from pipelines.engine.platforms import names, platform


def _required(annotation: Any) -> Any:
    """The type under ``X | None``."""
    if get_origin(annotation) in (Union, types.UnionType):
        (inner,) = [a for a in get_args(annotation) if a is not type(None)]
        return inner
    return annotation


def _bare(annotation: Any) -> Any:
    """The type under ``X | None``, ``Annotated[X, …]`` and ``list[X]``."""
    annotation = _required(annotation)
    if get_origin(annotation) in (Annotated, list):
        return _bare(get_args(annotation)[0])
    return annotation


def _fields(model: type[BaseModel], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Every field of ``model`` with its bare type, nested ones spelled as the table does:
    ``customer.customer_id``, ``products[].product_id``."""
    for name, info in model.model_fields.items():
        bare = _bare(info.annotation)
        if isinstance(bare, type) and issubclass(bare, BaseModel):
            many = get_origin(_required(info.annotation)) is list
            yield from _fields(bare, f"{prefix}{name}{'[]' if many else ''}.")
        else:
            yield f"{prefix}{name}", bare


def _named_like_a_reference(path: str) -> bool:
    name = path.rsplit(".", 1)[-1]
    return name.endswith(("_id", "_ids")) or name.startswith("id_")


def _referenced_first(order: Mapping[str, Sequence[str]]) -> list[str]:
    """What ``order`` (stream -> resources, as synced) sends before what it refers to."""
    sent = [r for resources in order.values() for r in resources]
    return [f"{r} before {u}" for i, r in enumerate(sent) for u in upstream(r)
            if u in sent and u not in sent[:i]]


@pytest.mark.parametrize("resource", list(SYNC_RESOURCES))
def test_every_field_named_like_a_reference_is_in_the_table(resource: str) -> None:
    spec = SYNC_RESOURCES[resource]
    fields = dict(_fields(spec.model))
    references = {ref.field for ref in REFERENCES[resource]}
    named = {path for path in fields if _named_like_a_reference(path)}

    missing = named - references - {spec.id_field, *ATTRIBUTION}

    assert not missing, f"{resource}: reference fields without a table entry: {missing}"


@pytest.mark.parametrize("resource", list(SYNC_RESOURCES))
def test_each_reference_is_a_field_holding_the_kind_of_value_it_points_at(resource: str) -> None:
    fields = dict(_fields(SYNC_RESOURCES[resource].model))
    for ref in REFERENCES[resource]:
        assert ref.field in fields, f"{resource} items have no field {ref.field}"
        target = SYNC_RESOURCES[ref.resource]
        key = ref.by or target.id_field
        assert fields[ref.field] is dict(_fields(target.model))[key], (
            f"{resource}.{ref.field} does not hold a {ref.resource} {key}")


def test_the_table_covers_exactly_the_sync_resources() -> None:
    assert set(REFERENCES) == set(SYNC_RESOURCES)


def test_the_references_the_lineage_lacked_are_there() -> None:
    assert "customers" in upstream("addresses")
    assert "carriers" in upstream("orders")
    assert "products" in upstream("variations")
    assert {"products", "variations"} <= set(upstream("images"))
    assert {"addresses", "carts", "variations", "manufacturers", "vouchers"} <= set(
        upstream("orders"))
    assert Reference("voucher_used", "vouchers", by="code") in REFERENCES["orders"]


def test_upstream_leaves_a_resource_referring_to_itself_out() -> None:
    assert Reference("parent_category_id", "categories") in REFERENCES["categories"]
    assert upstream("categories") == ()
    assert "categories" not in REFERS_TO


def test_upstream_names_the_known_resources_for_an_unknown_one() -> None:
    with pytest.raises(KeyError, match="known: statuses, carriers"):
        upstream("coupons")


def test_referenced_resources_come_first_and_the_rest_stays_as_given() -> None:
    assert reference_order(["orders", "customers", "groups"]) == ["groups", "customers",
                                                                  "orders"]
    assert reference_order(["carriers", "statuses"]) == ["carriers", "statuses"]
    assert reference_order(["statuses", "carriers"]) == ["statuses", "carriers"]


@pytest.mark.parametrize("name", names())
def test_every_platforms_streams_are_ordered_referenced_first(name: str) -> None:
    produces = platform(name).mapping().produces
    backwards = dict(reversed(list(produces.items())))
    backwards = {stream: tuple(reversed(resources)) for stream, resources in backwards.items()}

    order = stream_order(backwards)

    assert _referenced_first(order) == []
    assert _referenced_first(produces) == []  # what the engine reads within a stream
    assert set(order) == set(produces)
    assert {s: set(rs) for s, rs in order.items()} == {s: set(rs) for s, rs in produces.items()}


def test_a_circle_in_the_table_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(REFERENCES, "groups", (Reference("customer_id", "customers"),))

    with pytest.raises(ReferenceCycle, match=r"customers -> groups -> customers|"
                                             r"groups -> customers -> groups"):
        reference_order(["orders", "customers", "groups"])


def test_streams_whose_resources_refer_to_each_other_across_them_are_refused() -> None:
    # groups <- customers <- orders: each stream waits on the other
    with pytest.raises(ReferenceCycle, match=r"streams .* in a circle: (a -> b -> a|b -> a -> b)"):
        stream_order({"a": ("groups", "orders"), "b": ("customers",)})


def test_any_circle_is_named_from_where_it_closes() -> None:
    after = {"x": ["y"], "y": ["z"], "z": ["y"]}
    with pytest.raises(ReferenceCycle, match="things in a circle: y -> z -> y"):
        ordered(["x", "y", "z"], after.__getitem__, "things")

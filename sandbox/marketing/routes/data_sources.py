"""Data sources: every shop starts with a default one; sync items are attributed to one."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, BeforeValidator, ConfigDict, StrictBool, StrictInt

from sandbox.marketing.answers import Answer, Done, Moment, page, single
from sandbox.marketing.errors import not_found, validated
from sandbox.marketing.http import json_object, ok, shop
from sandbox.marketing.listing import list_envelope
from sandbox.marketing.listing_parse import ListQuery
from sandbox.marketing.openapi import documented, omittable
from sandbox.marketing.store import Doc, Shop, now_iso

router = APIRouter(tags=["data sources"])


def _whole(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


#: a JSON integer: 5, or 5.0 (the same number to JSON Schema and to the real service's
#: JavaScript), but not true or "5"
WholeNumber = Annotated[StrictInt, BeforeValidator(_whole)]


class DataSourceIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str
    type: str = "api"
    config: str | None = None
    parent_id: WholeNumber | None = None
    is_default: StrictBool = False
    active: StrictBool = True


class DataSourcePatch(BaseModel):
    """The keys given replace the current ones; label, type and the flags cannot be null."""

    model_config = ConfigDict(extra="forbid")

    label: str = omittable()
    type: str = omittable()
    config: str | None = None
    parent_id: WholeNumber | None = None
    is_default: StrictBool = omittable()
    active: StrictBool = omittable()


class DataSource(Answer):
    """A data source as the sandbox answers it."""

    id_data_source: int
    id_shop: int
    label: str
    type: str
    config: str | None
    parent_id: int | None
    is_default: bool
    active: bool
    created_at: Moment
    updated_at: Moment


def data_sources(shop: Shop) -> dict[str, Doc]:
    """The shop's data sources by id, with the default one made on first use."""
    collection = shop.collection("data_sources")
    if not len(collection):
        _create(shop, DataSourceIn(label="Default", type="ecommerce_connector", is_default=True))
    return collection.docs


def default_data_source_id(shop: Shop) -> int:
    for doc in data_sources(shop).values():
        if doc["is_default"]:
            return doc["id_data_source"]
    return min(doc["id_data_source"] for doc in data_sources(shop).values())


def _create(shop: Shop, body: DataSourceIn) -> Doc:
    now = now_iso()
    doc = {
        "id_data_source": shop.next_id("data_sources"),
        "id_shop": shop.shop_id,
        **body.model_dump(),
        "created_at": now,
        "updated_at": now,
    }
    _save(shop, doc)
    return doc


def _save(shop: Shop, doc: Doc) -> None:
    collection = shop.collection("data_sources")
    if doc["is_default"]:
        for other in collection.values():
            if other["is_default"] and other["id_data_source"] != doc["id_data_source"]:
                collection.put(str(other["id_data_source"]), {**other, "is_default": False})
    collection.put(str(doc["id_data_source"]), doc)


@router.get("/v1/data-sources", summary="listDataSources", **documented(page(DataSource)))
async def list_data_sources(the_shop: Shop = Depends(shop)) -> Any:
    """All data sources, active and inactive, ordered by parent_id then creation date."""
    docs = sorted(
        data_sources(the_shop).values(),
        key=lambda d: (d["parent_id"] is not None, d["parent_id"] or 0, d["id_data_source"]),
    )
    return list_envelope(docs, len(docs), ListQuery(limit=max(len(docs), 1), offset=0))


@router.post("/v1/data-sources", summary="createDataSource",
             **documented(single(DataSource), body=DataSourceIn))
async def create_data_source(request: Request, the_shop: Shop = Depends(shop)) -> Any:
    body = validated(DataSourceIn, await json_object(request))
    data_sources(the_shop)
    return ok(_create(the_shop, body))


@router.put("/v1/data-sources/{id_data_source}", summary="updateDataSource",
            **documented(single(DataSource), body=DataSourcePatch, sends=[404]))
async def update_data_source(
    id_data_source: int, request: Request, the_shop: Shop = Depends(shop)
) -> Any:
    patch = validated(DataSourcePatch, await json_object(request))
    current = data_sources(the_shop).get(str(id_data_source))
    if current is None:
        raise not_found(f"Data source {id_data_source}")
    doc = {**current, **patch.model_dump(exclude_unset=True), "updated_at": now_iso()}
    _save(the_shop, doc)
    return ok(doc)


@router.delete("/v1/data-sources/{id_data_source}", summary="deleteDataSource",
               **documented(Done))
async def delete_data_source(id_data_source: int, the_shop: Shop = Depends(shop)) -> Any:
    """Idempotent: deleting an unknown data source succeeds."""
    data_sources(the_shop)
    the_shop.collection("data_sources").delete(str(id_data_source))
    return {"statusCode": 200, "success": True}

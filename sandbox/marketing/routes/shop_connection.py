"""The shop connection: the shop's defaults (currency, languages, time zone, URLs)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field

from sandbox.marketing.answers import Moment, single
from sandbox.marketing.errors import validated
from sandbox.marketing.http import json_object, ok, shop
from sandbox.marketing.openapi import documented
from sandbox.marketing.store import Shop, now_iso

router = APIRouter(tags=["shop"])


class ShopConnection(BaseModel):
    model_config = ConfigDict(extra="forbid")

    default_currency: str = Field(pattern=r"^[A-Z]{3}$")
    default_lang: str
    langs: list[str] = Field(min_length=1)
    timezone: str
    url_client: str
    ecommerce_version: str | None = None
    module_version: str | None = None


class ConnectedShop(ShopConnection):
    """The shop's connection as stored."""

    id_shop: int
    updated_at: Moment


@router.post("/v1/shop/connection", summary="connectShop",
             **documented(single(ConnectedShop), body=ShopConnection))
async def connect_shop(request: Request, the_shop: Shop = Depends(shop)) -> Any:
    body = validated(ShopConnection, await json_object(request))
    doc = {"id_shop": the_shop.shop_id, **body.model_dump(), "updated_at": now_iso()}
    the_shop.collection("shop").put("connection", doc)
    return ok(doc)

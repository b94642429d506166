"""Checking the items of one bulk write of a sync resource, each on its own: the write op of
a valid item, the reasons an invalid one is rejected (``routes/sync.py`` serves the routes).

What every item of a batch looks up alike — the fields an item keeps, the shop's data sources
and its default one — is looked up once per batch, when the first item needs it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import ValidationError

from sandbox.marketing.errors import describe_validation_error
from sandbox.marketing.http import integer
from sandbox.marketing.routes.data_sources import data_sources, default_data_source_id
from sandbox.marketing.spec.resources import SYNC_RESOURCES, SyncResource
from sandbox.marketing.store import Doc, Shop

Mode = Literal["save", "update"]

#: the fields a stored item keeps of what was sent, per resource (its data source is kept
#: as ``data_source_id``)
STORED_FIELDS: dict[str, set[str]] = {
    name: resource.model.model_fields.keys() - {"id_data_source"}
    for name, resource in SYNC_RESOURCES.items()
}


#: the fields of a stored item's key, per resource
KEY_FIELDS: dict[str, tuple[str, ...]] = {
    name: ("data_source_id", *resource.key_fields) for name, resource in SYNC_RESOURCES.items()
}


def item_key(resource: SyncResource, doc: Doc) -> str:
    """Where an item lives: its id within its data source (and language, when scoped)."""
    return "|".join([str(doc[f]) for f in KEY_FIELDS[resource.name]])


def typed_parent(resource: SyncResource, parent_field: str, parent: str) -> Any:
    """The route's parent id as the item model types its parent field (an int or a str)."""
    annotation = resource.model.model_fields[parent_field].annotation
    if annotation is not None and "int" in str(annotation):
        return integer(parent, f"{parent_field} (in the path)", low=0)
    return parent


class ItemCheck:
    """Checks item ``index`` of one batch: the ``sync.save`` op to queue, or the reasons the
    item is rejected. ``known`` tells whether an item key exists (or waits to), for updates."""

    def __init__(self, shop: Shop, resource: SyncResource, *, mode: Mode, parent: str | None,
                 known: Callable[[str], bool]) -> None:
        self._shop = shop
        self._resource = resource
        self._mode = mode
        self._parent = parent
        self._known = known
        self._fields = STORED_FIELDS[resource.name]
        self._sources: dict[str, Doc] | None = None
        self._default: tuple[Any] | None = None

    def _data_sources(self) -> dict[str, Doc]:
        if self._sources is None:
            self._sources = data_sources(self._shop)
        return self._sources

    def _default_source(self) -> Any:
        if self._default is None:
            self._default = (default_data_source_id(self._shop),)
        return self._default[0]

    def __call__(self, index: int, raw: Any) -> tuple[Doc | None, list[str]]:
        if not isinstance(raw, dict):
            return None, ["item: must be a JSON object"]
        resource = self._resource
        errors: list[str] = []
        try:
            model = resource.model.model_validate(raw)
        except ValidationError as exc:
            errors.extend(describe_validation_error(exc))
            model = None
        ds = raw.get("id_data_source")
        if ds is None:
            ds = self._default_source()
        elif str(ds) not in self._data_sources():
            errors.append(f"id_data_source: data source {ds} does not exist in this shop")
        parent, parent_field = self._parent, resource.parent_field
        if parent_field:
            given = raw.get(parent_field)
            if parent is not None and given is not None and str(given) != parent:
                errors.append(f"{parent_field}: is {given!r} but the route is for {parent!r}")
            if parent is None and given is None:
                errors.append(f"{parent_field}: is required on {resource.bulk_route}")
        if errors or model is None:
            return None, errors
        doc = {k: raw[k] for k in self._fields if k in raw}
        if parent_field and parent is not None:
            doc[parent_field] = (model.__dict__[parent_field]
                                 or typed_parent(resource, parent_field, parent))
        doc["data_source_id"] = ds
        doc["shop_id"] = self._shop.shop_id
        key = item_key(resource, doc)
        if self._mode == "update" and not self._known(key):
            return None, [
                (f"{resource.id_field}: no item with {resource.id_field}"
                 f" {doc[resource.id_field]!r} exists to update (use POST to create it)")
            ]
        return {"kind": "sync.save", "resource": resource.name, "key": key, "doc": doc}, []

"""Custom data: definitions (typed schemas), field override priorities and records."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from connectors.marketing.models import BulkResult, ListPage, Record
from connectors.marketing.operations.base import Operations, body_of, seg
from connectors.marketing.query import Query
from connectors.marketing.resources import CUSTOM_DATA_RECORDS_MAX_BATCH, CUSTOM_DATA_RECORDS_ROUTE

DEFINITIONS = "custom-data-definitions"


def _records_route(id_definition: int) -> str:
    return CUSTOM_DATA_RECORDS_ROUTE.replace("{id_definition}", seg(id_definition))


def _check_batch(records: Sequence[Any]) -> None:
    if len(records) > CUSTOM_DATA_RECORDS_MAX_BATCH:
        raise ValueError(
            f"a custom data records batch holds at most {CUSTOM_DATA_RECORDS_MAX_BATCH} items,"
            f" got {len(records)}; split it"
        )


class CustomDataOperations(Operations):
    # definitions --------------------------------------------------------------------------

    async def list_custom_data_definitions(self, query: Query | None = None) -> ListPage[Record]:
        """``GET custom-data-definitions``."""
        return await self._list(DEFINITIONS, query)

    async def create_custom_data_definition(
        self,
        name: str,
        fields: Sequence[Mapping[str, Any]],
        *,
        description: str | None = None,
        unique_keys: Sequence[str] = (),
        relationships: Sequence[Mapping[str, Any]] = (),
    ) -> dict[str, Any]:
        """``POST custom-data-definitions``. Not retried on a server error: the definition may
        exist already and names are unique per shop."""
        body = body_of(
            name=name, description=description, unique_keys=list(unique_keys),
            fields=[dict(f) for f in fields], relationships=[dict(r) for r in relationships],
        )
        return await self._data("POST", DEFINITIONS, json=body, idempotent=False)

    async def get_custom_data_definition(self, id_definition: int) -> dict[str, Any]:
        """``GET custom-data-definitions/{id}``."""
        return await self._data("GET", f"{DEFINITIONS}/{seg(id_definition)}")

    async def delete_custom_data_definition(self, id_definition: int) -> None:
        """``DELETE custom-data-definitions/{id}`` (idempotent; its records go with it)."""
        await self._done("DELETE", f"{DEFINITIONS}/{seg(id_definition)}")

    async def extend_custom_data_definition(
        self, id_definition: int, fields: Sequence[Mapping[str, Any]]
    ) -> dict[str, Any]:
        """``PATCH custom-data-definitions/{id}/extend``: add fields (existing ones stay)."""
        return await self._data(
            "PATCH", f"{DEFINITIONS}/{seg(id_definition)}/extend",
            json={"fields": [dict(f) for f in fields]},
        )

    async def activate_custom_data_definition(self, id_definition: int) -> dict[str, Any]:
        """``PATCH custom-data-definitions/{id}/activate``."""
        return await self._data("PATCH", f"{DEFINITIONS}/{seg(id_definition)}/activate")

    async def deactivate_custom_data_definition(self, id_definition: int) -> dict[str, Any]:
        """``PATCH custom-data-definitions/{id}/deactivate``: records stay readable, writes stop."""
        return await self._data("PATCH", f"{DEFINITIONS}/{seg(id_definition)}/deactivate")

    # field override priorities ------------------------------------------------------------

    async def list_field_override_priorities(self, query: Query | None = None) -> ListPage[Record]:
        """``GET custom-data-definitions/overrides`` (listFieldOverridePriorities)."""
        return await self._list(f"{DEFINITIONS}/overrides", query)

    async def update_field_override_priorities(
        self,
        target_system_schema: str,
        system_field_name: str,
        overrides: Sequence[Mapping[str, Any]],
    ) -> list[dict[str, Any]]:
        """``PUT custom-data-definitions/overrides?target_system_schema=..&system_field_name=..``:
        replace the pair's overrides ({id_custom_data_definition, custom_field_name, priority},
        at most 3, priority 1 highest); an empty list clears the pair."""
        params = {"target_system_schema": target_system_schema,
                  "system_field_name": system_field_name}
        return await self._data(
            "PUT", f"{DEFINITIONS}/overrides", params=params,
            json={"overrides": [dict(o) for o in overrides]},
        )

    # records ------------------------------------------------------------------------------

    async def list_custom_data_records(
        self, id_definition: int, query: Query | None = None
    ) -> ListPage[Record]:
        """``GET custom-data-records/{id_definition}`` (listCustomDataRecords)."""
        return await self._list(_records_route(id_definition), query)

    async def save_custom_data_records(
        self, id_definition: int, records: Sequence[Mapping[str, Any]]
    ) -> BulkResult:
        """``POST custom-data-records/{id_definition}``: at most 20 records per call. With
        ``unique_keys`` a record matching an existing one updates it, so a retry is harmless;
        without them a retried batch the server had processed would insert twice."""
        _check_batch(records)
        return await self._bulk("POST", _records_route(id_definition), [dict(r) for r in records])

    async def update_custom_data_records(
        self, id_definition: int, records: Sequence[Mapping[str, Any]]
    ) -> BulkResult:
        """``PUT custom-data-records/{id_definition}``: each record carries its ``id``."""
        _check_batch(records)
        return await self._bulk("PUT", _records_route(id_definition), [dict(r) for r in records])

    async def update_custom_data_record(
        self, id_definition: int, id: int, values: Mapping[str, Any]
    ) -> None:
        """``PATCH custom-data-records/{id_definition}/{id}``: change some values of one record."""
        await self._done("PATCH", f"{_records_route(id_definition)}/{seg(id)}", json=dict(values))

    async def delete_custom_data_record(self, id_definition: int, id: int) -> None:
        """``DELETE custom-data-records/{id_definition}?id={id}`` (idempotent)."""
        await self._done("DELETE", _records_route(id_definition), params={"id": str(id)})

    async def bulk_delete_custom_data_records(
        self, id_definition: int, ids: Sequence[int]
    ) -> BulkResult:
        """``POST custom-data-records/{id_definition}/bulk-delete`` with a plain array of ids."""
        return await self._bulk("POST", f"{_records_route(id_definition)}/bulk-delete", list(ids))

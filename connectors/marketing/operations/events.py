"""Custom events: event types, firing them, and the history of firings."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connectors.marketing.models import ListPage, Record
from connectors.marketing.operations.base import Operations, body_of, seg
from connectors.marketing.query import Query


class EventOperations(Operations):
    async def list_events(self, query: Query | None = None) -> ListPage[Record]:
        """``GET events`` (listEvents); the query travels as ``settings`` JSON plus ``fields``."""
        return await self._event_list("events", query)

    async def list_event_histories(self, query: Query | None = None) -> ListPage[Record]:
        """``GET events/histories`` (listEventHistories): firings, newest first by default.
        Emission is asynchronous: this, not the trigger's answer, tells what happened."""
        return await self._event_list("events/histories", query)

    async def create_event(
        self, name: str, code_name: str, properties: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """``POST events`` (createEvent). Not idempotent: retried only on answers that say the
        request was not processed (429, 503), never on other server errors."""
        body = body_of(name=name, code_name=code_name,
                       properties=None if properties is None else dict(properties))
        return await self._data("POST", "events", json=body, idempotent=False)

    async def update_event(
        self,
        id_event: int,
        *,
        name: str | None = None,
        code_name: str | None = None,
        properties: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """``PATCH events`` with ``id_event`` in the body (updateEvent). A new ``code_name``
        is the trigger path at once; ``properties`` replaces the whole schema."""
        body = body_of(id_event=id_event, name=name, code_name=code_name,
                       properties=None if properties is None else dict(properties))
        return await self._data("PATCH", "events", json=body)

    async def get_event(self, id_event: int) -> dict[str, Any]:
        """``GET events/{id_event}`` (getEvent)."""
        return await self._data("GET", f"events/{seg(id_event)}")

    async def delete_event(self, id_event: int) -> None:
        """``DELETE events/{id_event}`` (deleteEvent): irreversible, stops its scenarios."""
        await self._done("DELETE", f"events/{seg(id_event)}")

    async def trigger_event(self, code_name: str, payload: Mapping[str, Any]) -> dict[str, Any]:
        """``POST events/trigger/{code_name}`` (triggerEvent). Not idempotent (each call is
        one more firing), so retried only on 429/503. A payload that breaks the schema is a
        RequestRejected whose ``errors`` lists every violation."""
        return await self._data(
            "POST", f"events/trigger/{seg(code_name)}", json=dict(payload), idempotent=False
        )

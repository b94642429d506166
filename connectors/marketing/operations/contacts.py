"""Contacts (derived from customers), their consent history and rejects, lists and segments."""

from __future__ import annotations

from typing import Any, Literal

from connectors.marketing.models import ListPage, Record
from connectors.marketing.operations.base import Operations, body_of, seg
from connectors.marketing.query import Query

CONTACT_KEYS = ("id_shop_contact", "id_customer_shop", "contact_data_email")


class ContactOperations(Operations):
    async def list_contacts(self, query: Query | None = None) -> ListPage[Record]:
        """``GET contacts/all`` (listContacts), by creation date unless ordered otherwise."""
        return await self._list("contacts/all", query)

    async def get_contact(
        self,
        *,
        id_shop_contact: int | None = None,
        id_customer_shop: str | None = None,
        contact_data_email: str | None = None,
    ) -> dict[str, Any]:
        """``GET contacts?<key>=<value>``: one contact by exactly one of its three keys."""
        given = body_of(
            id_shop_contact=id_shop_contact,
            id_customer_shop=id_customer_shop,
            contact_data_email=contact_data_email,
        )
        if len(given) != 1:
            raise ValueError(f"get_contact takes exactly one of {', '.join(CONTACT_KEYS)}")
        return await self._data("GET", "contacts", params={k: str(v) for k, v in given.items()})

    async def get_contact_lists(self, id_shop_contact: int) -> list[dict[str, Any]]:
        """``GET contacts/{id}/lists``: lists and segments the contact is in."""
        return await self._data("GET", f"contacts/{seg(id_shop_contact)}/lists")

    async def get_contact_tags(self, id_shop_contact: int) -> list[Any]:
        """``GET contacts/{id}/tags``."""
        return await self._data("GET", f"contacts/{seg(id_shop_contact)}/tags")

    async def get_contact_custom_data_definitions(
        self, id_shop_contact: int
    ) -> list[dict[str, Any]]:
        """``GET contacts/{id}/custom-data-definitions``: definitions related to contacts."""
        return await self._data("GET", f"contacts/{seg(id_shop_contact)}/custom-data-definitions")

    async def list_contact_consent_history(self, query: Query | None = None) -> ListPage[Record]:
        """``GET contact-consent-history``."""
        return await self._list("contact-consent-history", query)

    async def list_contact_messages_reject(self, query: Query | None = None) -> ListPage[Record]:
        """``GET contact-messages-reject``."""
        return await self._list("contact-messages-reject", query)

    # lists and segments -------------------------------------------------------------------

    async def list_lists(self, query: Query | None = None) -> ListPage[Record]:
        """``GET lists``."""
        return await self._list("lists", query)

    async def create_list(
        self, name: str, type: Literal["list", "segment"] = "list"
    ) -> dict[str, Any]:
        """``POST lists``. Not retried on a server error: a retry could create a second list."""
        return await self._data(
            "POST", "lists", json={"name": name, "type": type}, idempotent=False
        )

    async def get_list(self, id_list: int) -> dict[str, Any]:
        """``GET lists/{id_list}``."""
        return await self._data("GET", f"lists/{seg(id_list)}")

    async def update_list(
        self,
        id_list: int,
        *,
        name: str | None = None,
        segmentation_config: dict[str, Any] | None = None,
        keep_updated: bool | None = None,
    ) -> dict[str, Any]:
        """``PATCH lists/{id_list}`` (updateList); only the given attributes change."""
        body = body_of(
            name=name, segmentation_config=segmentation_config, keep_updated=keep_updated
        )
        return await self._data("PATCH", f"lists/{seg(id_list)}", json=body)

    async def delete_list(self, id_list: int) -> None:
        """``DELETE lists/{id_list}`` (idempotent)."""
        await self._done("DELETE", f"lists/{seg(id_list)}")

    async def list_list_contacts(
        self, id_list: int, query: Query | None = None
    ) -> ListPage[Record]:
        """``GET lists/{id_list}/contacts`` (listListContacts), by membership date."""
        return await self._list(f"lists/{seg(id_list)}/contacts", query)

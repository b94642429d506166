"""Magento Web API errors: ``{"message": "text with %placeholders", "parameters": {...}}``."""

from __future__ import annotations

from typing import Any

from sandbox.shops.web import ShopError

#: the ACL resource each REST route family needs (named in 401 answers)
ACL = {
    "orders": "Magento_Sales::actions_view",
    "customers": "Magento_Customer::customer",
    "products": "Magento_Catalog::products",
    "carts": "Magento_Cart::manage",
    "categories": "Magento_Catalog::categories",
    "store": "Magento_Backend::store",
}


class MagentoError(ShopError):
    """An error answered in Magento's shape (Magento\\Framework\\Webapi\\ErrorProcessor)."""

    def __init__(self, status: int, message: str, parameters: dict[str, Any] | list[Any] | None = None,
                 *, headers: dict[str, str] | None = None) -> None:
        super().__init__(status, message, headers, f"{status}: {message}")
        self.parameters = parameters

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"message": self.message}
        if self.parameters is not None:
            body["parameters"] = self.parameters
        return body


def not_authorized(acl: str) -> MagentoError:
    """What a missing, wrong or expired token gets (2.4 wording; older: "Consumer is not
    authorized to access %resources")."""
    return MagentoError(401, "The consumer isn't authorized to access %resources.",
                        {"resources": acl})


def no_route() -> MagentoError:
    return MagentoError(404, "Request does not match any route.")


def no_entity(resource: str, value: Any) -> MagentoError:
    """The 404 of each repository's ``get`` for an unknown id or SKU."""
    if resource == "products":
        return MagentoError(404, "The product that was requested doesn't exist. Verify the"
                                 " product and try again.")
    key = {"customers": "customerId", "carts": "cartId", "categories": "id"}.get(resource)
    if key is not None:
        return MagentoError(404, "No such entity with %fieldName = %fieldValue",
                            {"fieldName": key, "fieldValue": value})
    return MagentoError(404, "The entity that was requested doesn't exist. Verify the entity"
                             " and try again.")


def required(field: str) -> MagentoError:
    return MagentoError(400, '"%fieldName" is required. Enter and try again.',
                        {"fieldName": field})


def unknown_column(field: str, clause: str = "where clause") -> MagentoError:
    return MagentoError(400, f"SQLSTATE[42S22]: Column not found: 1054 Unknown column"
                             f" '{field}' in '{clause}'")

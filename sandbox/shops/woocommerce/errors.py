"""WordPress REST errors: ``{code, message, data: {status, params?, details?}}``."""

from __future__ import annotations

from typing import Any

from sandbox.shops.web import ShopError


class WooError(ShopError):
    """An error answered in the WP/WC shape (both use it, see WP_REST_Server::error_to_response)."""

    def __init__(self, status: int, code: str, message: str, *,
                 extra: dict[str, Any] | None = None, headers: dict[str, str] | None = None) -> None:
        super().__init__(status, message, headers, f"{status} {code}: {message}")
        self.code = code
        self.extra = extra or {}

    def body(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message,
                "data": {"status": self.status, **self.extra}}


def invalid_params(problems: dict[str, tuple[str, str]]) -> WooError:
    """WP's schema validation failure: one message per parameter, and (WP 5.7+) the details."""
    return WooError(
        400,
        "rest_invalid_param",
        f"Invalid parameter(s): {', '.join(problems)}",
        extra={
            "params": {name: message for name, (_, message) in problems.items()},
            "details": {name: {"code": code, "message": message, "data": None}
                        for name, (code, message) in problems.items()},
        },
    )


def no_route() -> WooError:
    return WooError(404, "rest_no_route", "No route was found matching the URL and request method.")


def invalid_id(resource: str) -> WooError:
    """The 404 each WC controller answers for an unknown id."""
    code, message = {
        "orders": ("woocommerce_rest_shop_order_invalid_id", "Invalid ID."),
        "products": ("woocommerce_rest_product_invalid_id", "Invalid ID."),
        "variations": ("woocommerce_rest_product_variation_invalid_id", "Invalid ID."),
        "coupons": ("woocommerce_rest_shop_coupon_invalid_id", "Invalid ID."),
        "customers": ("woocommerce_rest_invalid_id", "Invalid resource ID."),
        "categories": ("woocommerce_rest_term_invalid", "Resource does not exist."),
    }.get(resource, ("rest_post_invalid_id", "Invalid post ID."))
    return WooError(404, code, message)


def cannot_view(listing: bool) -> WooError:
    """What an unauthenticated request gets (401; 403 would mean authenticated but not allowed)."""
    message = "Sorry, you cannot list resources." if listing else "Sorry, you cannot view this resource."
    return WooError(401, "woocommerce_rest_cannot_view", message)


def failing_listing(status: int) -> WooError:
    """What a listing made to fail (``POST /__fake__/{resource}/fail``) answers: WordPress's
    own error for that status (a key without read access: 401/403, ``cannot list``)."""
    if status in (401, 403):
        return WooError(status, "woocommerce_rest_cannot_view", "Sorry, you cannot list resources.")
    if status >= 500:
        return WooError(status, "internal_server_error",
                        "There has been a critical error on this website.")
    return WooError(status, "rest_error", "The listing was made to fail (/__fake__).")


def authentication_error(message: str) -> WooError:
    return WooError(401, "woocommerce_rest_authentication_error", message)

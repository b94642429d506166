"""The GraphQL documents the connector sends, one spec per stream, in two forms: a paged
query (``first``/``after`` with ``pageInfo``, nested connections limited to a few nodes and
followed up when longer) and a bulk query (no ``first`` anywhere, ``edges { node }``).

Money is read as ``shopMoney`` only (the shop's currency, what the mapping sends); nested
objects cost a point each, so only what the mapping uses is asked for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

_MONEY = "{ shopMoney { amount currencyCode } }"

ORDER = f"""id legacyResourceId name email phone createdAt updatedAt processedAt cancelledAt
closed confirmed test currencyCode displayFinancialStatus displayFulfillmentStatus
taxesIncluded discountCodes totalPriceSet {_MONEY} subtotalPriceSet {_MONEY}
totalTaxSet {_MONEY} totalDiscountsSet {_MONEY} totalShippingPriceSet {_MONEY}
customer {{ id email createdAt }}
shippingLine {{ title code source taxLines {{ priceSet {{ shopMoney {{ amount }} }} }} }}"""
ORDER_LINE = f"""id quantity sku name vendor variant {{ id }} product {{ id }}
originalUnitPriceSet {_MONEY} discountedTotalSet {_MONEY}
taxLines {{ priceSet {{ shopMoney {{ amount }} }} }}"""
CUSTOMER = """id legacyResourceId firstName lastName email defaultEmailAddress { emailAddress
marketingState } phone state locale createdAt updatedAt tags
emailMarketingConsent { marketingState consentUpdatedAt } defaultAddress { id }
addresses { id firstName lastName company address1 address2 city zip countryCodeV2 phone }"""
PRODUCT = """id legacyResourceId title handle status vendor productType descriptionHtml
description createdAt updatedAt onlineStoreUrl totalInventory"""
VARIANT = "id legacyResourceId title sku barcode price compareAtPrice inventoryQuantity position"
MEDIA = "... on MediaImage { id image { url } }"
COLLECTION = "id legacyResourceId title handle description updatedAt"
CHECKOUT = f"""id name abandonedCheckoutUrl createdAt updatedAt completedAt taxesIncluded
customer {{ id email createdAt }} totalPriceSet {_MONEY} totalTaxSet {_MONEY}"""
CHECKOUT_LINE = f"""id quantity sku title variant {{ id }} product {{ id }}
originalUnitPriceSet {_MONEY} discountedTotalPriceSet {_MONEY}"""
_DISCOUNT_COMMON = """title summary status startsAt endsAt createdAt updatedAt asyncUsageCount
codes(first: 25) { nodes { id code asyncUsageCount } }
minimumRequirement { __typename ... on DiscountMinimumSubtotal { greaterThanOrEqualToSubtotal {
amount currencyCode } } }"""
_GETS = """customerGets { value { __typename ... on DiscountPercentage { percentage }
... on DiscountAmount { amount { amount currencyCode } appliesOnEachItem } } }"""
DISCOUNT = f"""id codeDiscount {{ __typename
... on DiscountCodeBasic {{ {_DISCOUNT_COMMON} {_GETS} }}
... on DiscountCodeBxgy {{ {_DISCOUNT_COMMON} }}
... on DiscountCodeFreeShipping {{ {_DISCOUNT_COMMON} }} }}"""


@dataclass(frozen=True)
class StreamQuery:
    """How one stream is queried: its root connection, fields and nested connections."""

    root: str
    fields: str
    #: nested connection -> (node fields, GID type of its nodes in bulk JSONL)
    nested: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: the sort key matching the change-time filter; None when the API has none
    sort_key: str | None = "UPDATED_AT"
    #: the root count query, to size windows and choose bulk operations
    count: str | None = None
    #: the GraphQL type of the root nodes (for follow-ups of nested connections)
    typename: str = ""
    bulk: bool = False

    def page(self) -> str:
        sort = f", sortKey: {self.sort_key}" if self.sort_key else ""
        nested = " ".join(
            f"{name}(first: $nested) {{ pageInfo {{ hasNextPage endCursor }} nodes {{ {fields} }} }}"
            for name, (fields, _) in self.nested.items())
        variables = "$first: Int!, $after: String, $query: String"
        if self.nested:
            variables += ", $nested: Int!"
        return (f"query Page({variables}) {{ {self.root}(first: $first, after: $after,"
                f" query: $query{sort}) {{ pageInfo {{ hasNextPage endCursor }}"
                f" nodes {{ {self.fields} {nested} }} }} }}")

    def more(self, connection: str) -> str:
        """The follow-up of one nested connection of one node, past its first page."""
        fields, _ = self.nested[connection]
        return (f"query More($id: ID!, $first: Int!, $after: String) {{ node(id: $id) {{"
                f" ... on {self.typename} {{ {connection}(first: $first, after: $after) {{"
                f" pageInfo {{ hasNextPage endCursor }} nodes {{ {fields} }} }} }} }} }}")

    def bulk_query(self, search: str | None) -> str:
        nested = " ".join(f"{name} {{ edges {{ node {{ {fields} }} }} }}"
                          for name, (fields, _) in self.nested.items())
        arguments = []
        if search:
            arguments.append(f"query: {_string(search)}")
        if self.sort_key:
            arguments.append(f"sortKey: {self.sort_key}")
        args = f"({', '.join(arguments)})" if arguments else ""
        return f"{{ {self.root}{args} {{ edges {{ node {{ {self.fields} {nested} }} }} }} }}"

    def counting(self) -> str:
        return f"query Count($query: String, $limit: Int) {{ {self.count}(query: $query, limit: $limit) {{ count precision }} }}"

    def ids(self) -> str:
        return (f"query Ids($first: Int!, $after: String) {{ {self.root}(first: $first,"
                f" after: $after, sortKey: ID) {{ pageInfo {{ hasNextPage endCursor }}"
                f" nodes {{ id }} }} }}")


def _string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def stamp(moment: datetime) -> str:
    """A search date: UTC with ``Z`` (a date without an offset is read in the shop's zone)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def window(lower: datetime | None, upper: datetime | None, field_name: str = "updated_at") -> str | None:
    """A search for changes in ``[lower, upper]`` (both inclusive, to the second)."""
    terms = []
    if lower is not None:
        terms.append(f"{field_name}:>='{stamp(lower)}'")
    if upper is not None:
        terms.append(f"{field_name}:<='{stamp(upper)}'")
    return " AND ".join(terms) or None  # never an empty filter: Shopify errs on one


SPECS: dict[str, StreamQuery] = {
    "orders": StreamQuery("orders", ORDER, {"lineItems": (ORDER_LINE, "LineItem")},
                          count="ordersCount", typename="Order", bulk=True),
    "customers": StreamQuery("customers", CUSTOMER, count="customersCount",
                             typename="Customer", bulk=True),
    "products": StreamQuery("products", PRODUCT,
                            {"variants": (VARIANT, "ProductVariant"),
                             "collections": ("id legacyResourceId", "Collection"),
                             "media": (MEDIA, "MediaImage")},
                            count="productsCount", typename="Product", bulk=True),
    "categories": StreamQuery("collections", COLLECTION, count="collectionsCount",
                              typename="Collection"),
    "vouchers": StreamQuery("codeDiscountNodes", DISCOUNT, count="discountCodesCount",
                            typename="DiscountCodeNode"),
    # abandoned checkouts can be filtered by updated_at but not sorted by it
    "carts": StreamQuery("abandonedCheckouts", CHECKOUT,
                         {"lineItems": (CHECKOUT_LINE, "AbandonedCheckoutLineItem")},
                         sort_key=None, count="abandonedCheckoutsCount",
                         typename="AbandonedCheckout"),
}
STATUSES = ('query { __type(name: "OrderDisplayFinancialStatus") { enumValues { name'
            ' description } } }')
VENDORS = ("query Vendors($first: Int!, $after: String) { productVendors(first: $first,"
           " after: $after) { pageInfo { hasNextPage endCursor } nodes } }")
SHOP = "query { shop { name myshopifyDomain ianaTimezone currencyCode } }"
DELETIONS = ("query Deleted($first: Int!, $after: String, $query: String) { events(first: $first,"
             " after: $after, query: $query, sortKey: CREATED_AT) { pageInfo { hasNextPage"
             " endCursor } nodes { ... on BasicEvent { subjectId subjectType createdAt } } } }")
RUN_BULK = ("mutation Run($query: String!) { bulkOperationRunQuery(query: $query) {"
            " bulkOperation { id status createdAt } userErrors { field message code } } }")
BULK_FIELDS = ("id status errorCode createdAt completedAt objectCount rootObjectCount fileSize"
               " url partialDataUrl query")
POLL_BULK = f"query Poll($id: ID!) {{ node(id: $id) {{ ... on BulkOperation {{ {BULK_FIELDS} }} }} }}"
CURRENT_BULK = f"query {{ currentBulkOperation(type: QUERY) {{ {BULK_FIELDS} }} }}"
CANCEL_BULK = ("mutation Cancel($id: ID!) { bulkOperationCancel(id: $id) { bulkOperation { id"
               " status } userErrors { field message } } }")

"""The fields of QueryRoot and Mutation the fake serves, and how one request runs: cost,
the bucket (THROTTLED, MAX_COST_EXCEEDED), execution, ``extensions.cost``."""

from __future__ import annotations

from typing import Any

from graphql import FieldNode, OperationType

from sandbox.shops.shopify import bulk, names
from sandbox.shops.shopify.data import Row
from sandbox.shops.shopify.executor import (
    MUTATION_COST,
    Context,
    QueryError,
    fields,
    key,
    page_list,
    page_rows,
    prepare,
    project,
    project_connection,
    requested_cost,
)
from sandbox.shops.shopify.search import Search, SearchError, parse_search
from sandbox.shops.shopify.store import SORT_KEYS, SORT_VALUES, Store

DOCS = "https://shopify.dev/api/usage/rate-limits"
#: root connection -> (resource, sort key enum, its values)
CONNECTIONS: dict[str, tuple[str, str, frozenset[str]]] = {
    "orders": ("orders", "OrderSortKeys", frozenset(
        {"ID", "CREATED_AT", "UPDATED_AT", "PROCESSED_AT", "ORDER_NUMBER", "TOTAL_PRICE",
         "CUSTOMER_NAME", "RELEVANCE"})),
    "customers": ("customers", "CustomerSortKeys", frozenset(
        {"ID", "CREATED_AT", "UPDATED_AT", "NAME", "RELEVANCE"})),
    "products": ("products", "ProductSortKeys", frozenset(
        {"ID", "CREATED_AT", "UPDATED_AT", "TITLE", "VENDOR", "PRODUCT_TYPE", "RELEVANCE"})),
    "productVariants": ("variants", "ProductVariantSortKeys", frozenset(
        {"ID", "TITLE", "SKU", "POSITION", "RELEVANCE"})),
    "collections": ("collections", "CollectionSortKeys", frozenset(
        {"ID", "TITLE", "UPDATED_AT", "RELEVANCE"})),
    # no UPDATED_AT: abandoned checkouts can be filtered by updated_at, not sorted by it
    "abandonedCheckouts": ("checkouts", "AbandonedCheckoutSortKeys", frozenset(
        {"CHECKOUT_ID", "CREATED_AT", "CUSTOMER_NAME", "ID", "RELEVANCE", "TOTAL_PRICE"})),
    "codeDiscountNodes": ("discounts", "CodeDiscountSortKeys", frozenset(
        {"CREATED_AT", "ENDS_AT", "ID", "RELEVANCE", "STARTS_AT", "TITLE", "UPDATED_AT"})),
    "events": ("events", "EventSortKeys", frozenset({"CREATED_AT", "ID", "RELEVANCE"})),
}
COUNTS = {"ordersCount": "orders", "customersCount": "customers", "productsCount": "products",
          "collectionsCount": "collections", "abandonedCheckoutsCount": "checkouts",
          "discountCodesCount": "discounts", "eventsCount": "events"}
OBJECTS = {"order": "orders", "customer": "customers", "product": "products",
           "productVariant": "variants", "collection": "collections",
           "codeDiscountNode": "discounts", "event": "events"}
GID_TYPES = {"Order": "orders", "Customer": "customers", "Product": "products",
             "ProductVariant": "variants", "Collection": "collections",
             "AbandonedCheckout": "checkouts", "DiscountCodeNode": "discounts",
             "BasicEvent": "events"}
#: the enums introspection shows: each value is described as Shopify's admin displays it
ENUMS = {"OrderDisplayFinancialStatus": sorted(s for s, _ in names.FINANCIAL_STATUSES),
         "OrderDisplayFulfillmentStatus": names.FULFILLMENT_STATUSES}


def _words(value: str) -> str:
    """An enum value as the admin shows it: ``PARTIALLY_PAID`` is "Partially paid"."""
    return value.replace("_", " ").capitalize()


def matching_rows(ctx: Context, root: str, args: dict[str, Any], node: FieldNode,
                  path: list[Any]) -> tuple[list[Row], Any, list[Any]]:
    """The rows of a root connection that match ``query``, in ``sortKey`` order, how a row
    sorts, and the rows' ``(sort value, id)`` keys."""
    resource, enum, allowed = CONNECTIONS[root]
    sort_key = args.get("sortKey") or "ID"
    if sort_key not in allowed:
        raise QueryError(f"Argument 'sortKey' on Field '{root}' has an invalid value"
                         f" ({sort_key}). Expected type '{enum}'.",
                         "argumentLiteralsIncompatible", node, path)
    search = _search(ctx, resource, args, node, path)
    if search.warnings:
        ctx.warnings.append({"path": path, "query": args.get("query"), "warnings": search.warnings})
    rows, keys = ctx.store.tables[resource].where(
        sort_key, str(args.get("query")), search.predicate, SORT_KEYS[sort_key])
    return rows, SORT_VALUES[sort_key], keys


def _search(ctx: Context, resource: str, args: dict[str, Any], node: FieldNode,
            path: list[Any]) -> Search:
    try:
        return parse_search(args.get("query"), resource, ctx.store.tz)
    except SearchError as exc:
        raise QueryError(f"Invalid search query: {exc}", "BAD_REQUEST", node, path) from None


def record_of_gid(store: Store, text: Any) -> dict[str, Any] | None:
    parts = str(text or "").split("?")[0].split("/")
    if len(parts) != 5 or parts[:3] != ["gid:", "", "shopify"] or not parts[4].isdigit():
        return None
    if parts[3] == "BulkOperation":
        operation = store.bulk.get(int(parts[4]))
        if operation is None:
            return None
        operation.refresh(store.now())
        return operation.record()
    resource = GID_TYPES.get(parts[3])
    if resource is None:
        return None
    row = store.tables[resource].rows.get(int(parts[4]))
    return None if row is None else store.record(resource, row)


def shop_record(store: Store) -> dict[str, Any]:
    return {"__typename": "Shop", "id": "gid://shopify/Shop/48310000001",
            "name": "shopsync fake shop", "myshopifyDomain": "shopsync-fake.myshopify.com",
            "ianaTimezone": store.settings.timezone, "currencyCode": store.currency,
            "taxesIncluded": True, "email": "owner@shopsync-fake.example",
            "primaryDomain": {"__typename": "Domain", "url": "https://shopsync-fake.example",
                              "host": "shopsync-fake.example"},
            "plan": {"__typename": "ShopPlan", "displayName": "Basic", "partnerDevelopment": False,
                     "shopifyPlus": False}}


def resolve_query_field(ctx: Context, node: FieldNode) -> Any:
    name, path = node.name.value, [key(node)]
    args = ctx.args(node)
    store = ctx.store
    if name == "__typename":
        return "QueryRoot"
    if name in CONNECTIONS:
        rows, value, keys = matching_rows(ctx, name, args, node, path)
        chosen, page = page_rows(rows, keys, value, ctx, node, path)
        resource = CONNECTIONS[name][0]
        page.records = [store.record(resource, r) for r in chosen]
        return project_connection(ctx, page, node, path)
    if name in COUNTS:
        resource = COUNTS[name]
        search = _search(ctx, resource, args, node, path)
        n = sum(1 for r in store.tables[resource].rows.values()
                if search.predicate is None or search.predicate(r))
        limit = args.get("limit", 10000)
        count = {"__typename": "Count", "count": n if limit is None else min(n, limit),
                 "precision": "AT_LEAST" if limit is not None and n > limit else "EXACT"}
        return project(ctx, count, node.selection_set, path)
    if name in OBJECTS:
        record = record_of_gid(store, args.get("id"))
        if record is not None and record["__typename"] not in (
                "DiscountCodeNode", "BasicEvent") and GID_TYPES.get(record["__typename"]) != OBJECTS[name]:
            record = None
        return None if record is None else project(ctx, record, node.selection_set, path)
    if name == "node":
        record = record_of_gid(store, args.get("id"))
        return None if record is None else project(ctx, record, node.selection_set, path)
    if name == "nodes":
        return [None if (r := record_of_gid(store, i)) is None
                else project(ctx, r, node.selection_set, [*path, n])
                for n, i in enumerate(args.get("ids") or ())]
    if name == "shop":
        return project(ctx, shop_record(store), node.selection_set, path)
    if name == "productVendors":
        vendors = sorted({r.extra for r in store.tables["products"].rows.values()})
        return project_connection(ctx, page_list(vendors, ctx, node, path), node, path)
    if name == "currentBulkOperation":
        current = bulk.current(store, args.get("type") or "QUERY")
        return None if current is None else project(ctx, current.record(), node.selection_set, path)
    if name == "__type":
        values = ENUMS.get(str(args.get("name")))
        if values is None:
            return None
        enum = {"__typename": "__Type", "name": args["name"], "kind": "ENUM", "description": None,
                "enumValues": [{"__typename": "__EnumValue", "name": n,
                                "description": f"Displayed as **{_words(n)}**.",
                                "isDeprecated": False, "deprecationReason": None}
                               for n in values]}
        return project(ctx, enum, node.selection_set, path)
    raise QueryError(f"Field '{name}' doesn't exist on type 'QueryRoot'", "undefinedField",
                     node, path, typeName="QueryRoot", fieldName=name)


def resolve_mutation_field(ctx: Context, node: FieldNode) -> Any:
    name, path = node.name.value, [key(node)]
    args = ctx.args(node)
    if name == "bulkOperationRunQuery":
        if not isinstance(args.get("query"), str):
            raise QueryError("Field 'bulkOperationRunQuery' is missing required arguments: query",
                             "missingRequiredArguments", node, path)
        payload = bulk.run_query(ctx, args["query"])
    elif name == "bulkOperationCancel":
        payload = bulk.cancel(ctx.store, args.get("id"))
    else:
        raise QueryError(f"Field '{name}' doesn't exist on type 'Mutation'", "undefinedField",
                         node, path, typeName="Mutation", fieldName=name)
    return project(ctx, payload, node.selection_set, path)


def _cost(requested: int | None, actual: int | None, store: Store) -> dict[str, Any]:
    return {"requestedQueryCost": requested, "actualQueryCost": actual,
            "throttleStatus": store.bucket.status()}


def run(store: Store, body: dict[str, Any], base_url: str) -> dict[str, Any]:
    """One GraphQL request: the answer's body (always HTTP 200 from here)."""
    store.stats["requests"] += 1
    try:
        operation, ctx = prepare(store, body, base_url)
        requested = requested_cost(ctx, operation.selection_set, [])
        mutation = operation.operation == OperationType.MUTATION
        requested += MUTATION_COST if mutation else 0
    except QueryError as exc:
        return {"errors": [exc.body]}
    limit = store.settings.max_query_cost
    if requested > limit:
        store.stats["max_cost_exceeded"] += 1
        message = (f"Query cost is {requested}, which exceeds the single query max cost limit"
                   f" ({limit}).\n\nSee {DOCS} for more information on how the cost of a query"
                   " is calculated.\n\nTo query larger amounts of data with fewer limits, bulk"
                   " operations should be used instead.")
        return {"errors": [{"message": message, "extensions": {
                    "code": "MAX_COST_EXCEEDED", "cost": requested, "maxCost": limit,
                    "documentation": DOCS}}],
                "extensions": {"cost": _cost(requested, None, store)}}
    bucket = store.bucket
    if requested > bucket.meet():
        store.stats["throttled"] += 1
        return {"errors": [{"message": "Throttled", "extensions": {
                    "code": "THROTTLED", "documentation": DOCS}}],
                "extensions": {"cost": _cost(requested, None, store)}}
    bucket.tokens -= requested
    store.stats["cost_requested"] += requested
    resolve = resolve_mutation_field if mutation else resolve_query_field
    try:
        data = {key(node): resolve(ctx, node) for node in fields(
            ctx, operation.selection_set, "Mutation" if mutation else "QueryRoot")}
    except QueryError as exc:
        bucket.tokens = min(bucket.capacity, bucket.tokens + requested)
        store.stats["cost_requested"] -= requested
        return {"errors": [exc.body], "extensions": {"cost": _cost(requested, None, store)}}
    actual = min(requested, ctx.actual + (MUTATION_COST if mutation else 0))
    bucket.tokens = min(bucket.capacity, bucket.tokens + requested - actual)
    store.stats["cost_actual"] += actual
    extensions: dict[str, Any] = {"cost": _cost(requested, actual, store)}
    if ctx.warnings:
        extensions["search"] = ctx.warnings
    return {"data": data, "extensions": extensions}

"""A small GraphQL executor for the fake: parses with graphql-core and projects the
selection onto the generated records, with Shopify's cost accounting.

Not a full schema: a field is valid on an object when the record has it (every record
builder sets all of its fields, null ones included); connections are recognised by their
``edges``/``nodes``/``pageInfo`` selections; inline fragments and fragment spreads apply by
``__typename``. Requested cost is computed from the query alone (objects 1, scalars 0,
connections ``2 + first × node cost``, mutations 10 more); actual cost counts what was
returned. See README.md for what this simplifies.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson
from graphql import (
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
    parse,
)
from graphql.language.location import get_location
from graphql.pyutils import Undefined
from graphql.utilities import value_from_ast_untyped

from sandbox.shops.shopify.data import Row
from sandbox.shops.shopify.store import Store
from sandbox.shops.table import Span, window

MAX_PAGE = 250
MUTATION_COST = 10
CONNECTION_FIELDS = frozenset({"edges", "nodes", "pageInfo"})
#: interfaces a record's type satisfies, for fragments ``... on Interface``
INTERFACES = {"BasicEvent": ("Event",), "DiscountCodeBasic": ("DiscountCode",),
              "DiscountCodeBxgy": ("DiscountCode",), "DiscountCodeFreeShipping": ("DiscountCode",),
              "MediaImage": ("Media",)}


class QueryError(Exception):
    """A GraphQL error answered with HTTP 200 in ``errors`` (the query did not run)."""

    def __init__(self, message: str, code: str | None = None, node: Any = None,
                 path: list[Any] | None = None, **extensions: Any) -> None:
        super().__init__(message)
        self.body: dict[str, Any] = {"message": message}
        if node is not None and node.loc is not None:
            where = get_location(node.loc.source, node.loc.start)
            self.body["locations"] = [{"line": where.line, "column": where.column}]
        if path:
            self.body["path"] = path
        if code:
            self.body["extensions"] = {"code": code, **extensions}


@dataclass
class Page:
    """One page of a connection: the records and their cursors."""

    records: list[Any]
    cursors: list[str]
    has_next: bool
    has_previous: bool


@dataclass
class Context:
    store: Store
    variables: dict[str, Any]
    fragments: dict[str, FragmentDefinitionNode]
    base_url: str
    actual: int = 0
    warnings: list[dict[str, Any]] = field(default_factory=list)

    def args(self, node: FieldNode) -> dict[str, Any]:
        values = {argument.name.value: value_from_ast_untyped(argument.value, self.variables)
                  for argument in node.arguments or ()}
        return {name: None if value is Undefined else value for name, value in values.items()}


def key(node: FieldNode) -> str:
    return node.alias.value if node.alias else node.name.value


def matches(typename: str | None, condition: str | None) -> bool:
    return condition is None or typename == condition or condition in INTERFACES.get(
        typename or "", ()) or condition == "Node"


def fields(ctx: Context, selection_set: SelectionSetNode | None,
           typename: str | None) -> Iterator[FieldNode]:
    """The fields of a selection that apply to an object of ``typename`` (None: all)."""
    for selection in selection_set.selections if selection_set else ():
        if isinstance(selection, FieldNode):
            yield selection
            continue
        condition, inner = fragment(ctx, selection)
        if typename is None or matches(typename, condition):
            yield from fields(ctx, inner, typename)


def fragment(ctx: Context, selection: Any) -> tuple[str | None, SelectionSetNode]:
    """An inline fragment's or a fragment spread's type condition (None: any type) and
    selections."""
    if isinstance(selection, InlineFragmentNode):
        condition = selection.type_condition
        return condition.name.value if condition else None, selection.selection_set
    assert isinstance(selection, FragmentSpreadNode)
    defined = ctx.fragments.get(selection.name.value)
    if defined is None:
        raise QueryError(f"Fragment {selection.name.value} was used, but not defined",
                         "useAndDefineFragment", selection)
    return defined.type_condition.name.value, defined.selection_set


def is_connection(ctx: Context, node: FieldNode) -> bool:
    return any(f.name.value in CONNECTION_FIELDS for f in fields(ctx, node.selection_set, None))


def node_selection(ctx: Context, node: FieldNode) -> list[SelectionSetNode | None]:
    """The selection sets applied to a connection's nodes (``nodes`` and ``edges.node``)."""
    out = []
    for f in fields(ctx, node.selection_set, None):
        if f.name.value == "nodes":
            out.append(f.selection_set)
        elif f.name.value == "edges":
            out += [g.selection_set for g in fields(ctx, f.selection_set, None)
                    if g.name.value == "node"]
    return out


def page_size(ctx: Context, node: FieldNode, path: list[Any]) -> int:
    args = ctx.args(node)
    size = args.get("first") if args.get("first") is not None else args.get("last")
    if size is None:
        raise QueryError("you must provide one of first or last", "MISSING_PAGINATION_ARGUMENT",
                         node, path)
    if not 0 <= int(size) <= MAX_PAGE:
        raise QueryError(f"The maximum number of {node.name.value} per page is {MAX_PAGE}"
                         f" ('first' or 'last' was {size})", "BAD_REQUEST", node, path)
    return int(size)


def requested_cost(ctx: Context, selection_set: SelectionSetNode | None,
                   path: list[Any]) -> int:
    """What a selection may cost at most: fragments on different types count as the dearest."""
    total, by_type = 0, dict[str, int]()
    for selection in selection_set.selections if selection_set else ():
        if isinstance(selection, FieldNode):
            total += _field_cost(ctx, selection, path)
            continue
        condition, inner = fragment(ctx, selection)
        by_type[condition or ""] = by_type.get(condition or "", 0) + requested_cost(ctx, inner, path)
    return total + max(by_type.values(), default=0)


def _field_cost(ctx: Context, node: FieldNode, path: list[Any]) -> int:
    if node.selection_set is None or node.name.value == "pageInfo":
        return 0
    here = [*path, key(node)]
    if is_connection(ctx, node):
        size = page_size(ctx, node, here)
        per_node = max((requested_cost(ctx, s, here) for s in node_selection(ctx, node)),
                       default=0)
        return 2 + size * (1 + per_node)
    return 1 + requested_cost(ctx, node.selection_set, here)


# paging ---------------------------------------------------------------------------------

def encode_cursor(value: Any, last_id: Any) -> str:
    return base64.urlsafe_b64encode(orjson.dumps({"last_id": last_id, "last_value": value})).decode()


def decode_cursor(cursor: str, node: FieldNode, path: list[Any]) -> tuple[Any, Any]:
    try:
        data = orjson.loads(base64.urlsafe_b64decode(cursor.encode()))
        return data["last_value"], data["last_id"]
    except (ValueError, KeyError, TypeError):
        raise QueryError(f"Invalid cursor for current pagination sort: {cursor}",
                         "BAD_REQUEST", node, path) from None


def page_rows(rows: list[Row], keys: list[Any], sort: Callable[[Row], Any], ctx: Context,
              node: FieldNode, path: list[Any]) -> tuple[list[Row], Page]:
    """Keyset paging of rows already sorted by ``(sort(row), id)`` (``keys``): a cursor holds
    the last row's sort value and id, so rows changed meanwhile neither shift nor repeat a
    page; a bisect finds where a cursor leaves off."""
    args = ctx.args(node)
    size = page_size(ctx, node, path)
    reverse = bool(args.get("reverse"))
    after, before = args.get("after"), args.get("before")
    marks = [tuple(decode_cursor(c, node, path)) if c else None for c in (after, before)]
    # ``after`` keeps the keys above its mark (``before`` does when reversed), else below it
    low, high = window(keys, *(marks[::-1] if reverse else marks))
    span = Span(rows, low, max(low, high))
    left = len(span)
    if args.get("first") is not None:
        chosen, has_next, has_previous = span.page(0, size, descending=reverse), left > size, bool(after)
    else:
        chosen = span.page(left - size, size, descending=reverse) if size else []
        has_next, has_previous = bool(before), left > size
    cursors = [encode_cursor(sort(r), r.id) for r in chosen]
    return chosen, Page([], cursors, has_next, has_previous)


def page_list(items: list[Any], ctx: Context, node: FieldNode, path: list[Any]) -> Page:
    """A nested connection (a record's list) paged by position."""
    args = ctx.args(node)
    size = page_size(ctx, node, path)
    start = 0
    if args.get("after"):
        start = int(decode_cursor(args["after"], node, path)[1]) + 1
    end = len(items)
    if args.get("before"):
        end = int(decode_cursor(args["before"], node, path)[1])
    if args.get("first") is not None:
        chosen = list(range(start, min(end, start + size)))
    else:
        chosen = list(range(max(start, end - size), end))
    return Page([items[i] for i in chosen], [encode_cursor(None, i) for i in chosen],
                bool(chosen) and chosen[-1] + 1 < end, bool(chosen) and chosen[0] > start)


# projection -----------------------------------------------------------------------------

def project_connection(ctx: Context, page: Page, node: FieldNode, path: list[Any]) -> dict[str, Any]:
    ctx.actual += 2
    out: dict[str, Any] = {}
    for f in fields(ctx, node.selection_set, None):
        name, here = f.name.value, [*path, key(f)]
        if name == "nodes":
            out[key(f)] = [project_value(ctx, r, f, here) for r in page.records]
        elif name == "edges":
            edges = []
            for record, cursor in zip(page.records, page.cursors, strict=True):
                edge: dict[str, Any] = {}
                for g in fields(ctx, f.selection_set, None):
                    if g.name.value == "cursor":
                        edge[key(g)] = cursor
                    elif g.name.value == "node":
                        edge[key(g)] = project_value(ctx, record, g, [*here, "node"])
                    elif g.name.value == "__typename":
                        edge[key(g)] = "Edge"
                    else:
                        raise QueryError(f"Field '{g.name.value}' doesn't exist on type 'Edge'",
                                         "undefinedField", g, here)
                edges.append(edge)
            out[key(f)] = edges
        elif name == "pageInfo":
            info = {"hasNextPage": page.has_next, "hasPreviousPage": page.has_previous,
                    "startCursor": page.cursors[0] if page.cursors else None,
                    "endCursor": page.cursors[-1] if page.cursors else None,
                    "__typename": "PageInfo"}
            out[key(f)] = project(ctx, info, f.selection_set, here)
        elif name == "__typename":
            out[key(f)] = "Connection"
        else:
            raise QueryError(f"Field '{name}' doesn't exist on type 'Connection'",
                             "undefinedField", f, here)
    return out


def project_value(ctx: Context, value: Any, node: FieldNode, path: list[Any]) -> Any:
    if node.selection_set is None:
        if isinstance(value, dict) or (isinstance(value, list) and value and isinstance(value[0], dict)):
            raise QueryError(f"Field must have selections (field '{node.name.value}' returns an"
                             " object but has no selections)", "selectionMismatch", node, path)
        return value
    if value is None:
        return None
    if isinstance(value, list) and is_connection(ctx, node):
        return project_connection(ctx, page_list(value, ctx, node, path), node, path)
    if isinstance(value, list):
        return [project_value(ctx, v, node, [*path, i]) for i, v in enumerate(value)]
    if not isinstance(value, dict):
        raise QueryError(f"Selections can't be made on scalars (field '{node.name.value}')",
                         "selectionMismatch", node, path)
    return project(ctx, value, node.selection_set, path)


def project(ctx: Context, record: dict[str, Any], selection_set: SelectionSetNode | None,
            path: list[Any]) -> dict[str, Any]:
    typename = record.get("__typename")
    if typename != "PageInfo":
        ctx.actual += 1
    out: dict[str, Any] = {}
    for f in fields(ctx, selection_set, typename):
        name, here = f.name.value, [*path, key(f)]
        if name == "__typename":
            out[key(f)] = typename
        elif name not in record or name.startswith("_"):
            raise QueryError(f"Field '{name}' doesn't exist on type '{typename}'",
                             "undefinedField", f, here, typeName=typename, fieldName=name)
        else:
            out[key(f)] = project_value(ctx, record[name], f, here)
    return out


def parse_query(text: str) -> Any:
    try:
        return parse(text)
    except GraphQLError as exc:
        locations = [{"line": loc.line, "column": loc.column} for loc in exc.locations or ()]
        error = QueryError(exc.message, "parseError")
        error.body["locations"] = locations
        raise error from None


def prepare(store: Store, body: dict[str, Any], base_url: str) -> tuple[OperationDefinitionNode, Context]:
    """The operation to run and its context (variables with their defaults)."""
    text = body.get("query")
    if not isinstance(text, str) or not text.strip():
        raise QueryError("No query string was present")
    document = parse_query(text)
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    fragments = {d.name.value: d for d in document.definitions
                 if isinstance(d, FragmentDefinitionNode)}
    name = body.get("operationName")
    chosen = [o for o in operations if name is None or (o.name and o.name.value == name)]
    if len(chosen) != 1:
        raise QueryError("An operation name is required" if len(chosen) > 1
                         else f"No operation named \"{name}\"")
    operation = chosen[0]
    given = body.get("variables") or {}
    defaults = {d.variable.name.value: d.default_value for d in operation.variable_definitions or ()}
    variables = {var: given[var] if var in given
                 else None if default is None else value_from_ast_untyped(default, {})
                 for var, default in defaults.items()}
    return operation, Context(store, variables, fragments, base_url)

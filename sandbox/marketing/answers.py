"""What the sandbox answers, as pydantic models, for its OpenAPI document: the spec's three
envelopes, the error body, and the rows of listings.

The handlers build plain dicts (fast, and free to answer exactly as the real service does);
these models only describe them. ``tests/sandbox/test_openapi_conformance.py`` holds the two
together: schemathesis checks every answer of a bounded run against these schemas.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Annotated, Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, create_model

#: an instant the sandbox made (``now_iso``): UTC, milliseconds, ``Z``
Moment = Annotated[str, Field(json_schema_extra={"format": "date-time"})]
Count = Annotated[int, Field(ge=0)]


class Answer(BaseModel):
    """An object the sandbox sends: exactly these keys."""

    model_config = ConfigDict(extra="forbid")


class ErrorBody(Answer):
    """The body of every answer that is not a success, whatever its status."""

    statusCode: int = Field(ge=400, le=599, description="the HTTP status, repeated")
    success: Literal[False]
    message: str = Field(description="every problem found, joined with '; '")
    errors: list[str] = Field(description="every problem found in the request, one a line")


class Pagination(Answer):
    total_items: Count
    items_per_page: Annotated[int, Field(ge=1)]
    total_pages: Count
    current_page: Annotated[int, Field(ge=1)]
    offset: Count
    has_previous_page: bool
    has_next_page: bool
    next_page: Annotated[int, Field(ge=2)] | None
    previous_page: Annotated[int, Field(ge=1)] | None


class ListMeta(Answer):
    pagination: Pagination
    generated_at: Moment


class RejectedItem(Answer):
    index: Count = Field(description="the item's place in the batch, from 0")
    item: Any = Field(description="the item as it was sent")
    errors: list[str]


class BulkResult(Answer):
    """The bulk-write envelope: a batch is answered 200 whatever became of its items."""

    statusCode: Literal[200]
    sent_count: Count = Field(description="items accepted (ids taken, for a bulk delete)")
    rejected_count: Count
    rejected_items: list[RejectedItem]


class Done(Answer):
    """A deletion or a change that carries no data back."""

    statusCode: Literal[200]
    success: Literal[True]


@cache
def page(row: type[BaseModel]) -> type[BaseModel]:
    """The List envelope around rows of ``row``."""
    rows: Any = list[row]  # type: ignore[valid-type]
    return create_model(
        f"{row.__name__}Page", __base__=Answer,
        __doc__=f"The List envelope: a page of {row.__name__} rows.",
        statusCode=(Literal[200], ...), data=(rows, ...), meta=(ListMeta, ...),
    )


@cache
def single(data: type[BaseModel], *, many: bool = False) -> type[BaseModel]:
    """The single-resource envelope: ``data`` is one ``data`` object (or, ``many``, an array)."""
    name = f"{data.__name__}{'Array' if many else ''}Data"
    shape: Any = list[data] if many else data  # type: ignore[valid-type]
    what = f"an array of {data.__name__}" if many else f"one {data.__name__}"
    return create_model(name, __base__=Answer, __doc__=f"The single-resource envelope: {what}.",
                        statusCode=(Literal[200], ...), data=(shape, ...))


def row(name: str, types: Mapping[str, Any], doc: str | None = None) -> type[BaseModel]:
    """A row of a listing, whose ``fields`` parameter picks the columns: every field is
    optional and may be null (a column asked for that a record lacks reads as null)."""
    fields: dict[str, Any] = {field: (Optional[kind], None)  # noqa: UP045 (kind may be None)
                              for field, kind in types.items()}
    return create_model(name, __base__=Answer, __doc__=doc, **fields)


@cache
def projected(model: type[BaseModel]) -> type[BaseModel]:
    """``model`` as a row of a listing (``row``)."""
    return row(f"{model.__name__}Row", model_types(model), model.__doc__)


def model_types(model: type[BaseModel], *, prefix: str = "") -> dict[str, Any]:
    """A model's fields and their types, constraints included (``prefix`` before each name)."""
    return {prefix + name: Annotated[info.annotation, *info.metadata] if info.metadata
            else info.annotation for name, info in model.model_fields.items()}

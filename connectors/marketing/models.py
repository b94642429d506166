"""Pydantic models of the API's answers: the three envelopes and the objects they carry."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field

T = TypeVar("T")


class _Answer(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class Pagination(_Answer):
    total_items: int
    items_per_page: int
    total_pages: int
    current_page: int
    offset: int
    has_previous_page: bool
    has_next_page: bool
    next_page: int | None = None
    previous_page: int | None = None


class ListMeta(_Answer):
    pagination: Pagination
    generated_at: str | None = None


class ListPage(_Answer, Generic[T]):
    """The List envelope: one page of records and where it stands."""

    status_code: int = Field(alias="statusCode")
    data: list[T]
    meta: ListMeta


class Single(_Answer, Generic[T]):
    """The single-resource envelope."""

    status_code: int = Field(alias="statusCode")
    data: T


class RejectedItem(_Answer):
    index: int
    item: Any = None
    errors: list[str] = Field(default_factory=list)


class BulkResult(_Answer):
    """The bulk-write envelope: how many items were accepted, and why the others were not."""

    status_code: int = Field(alias="statusCode")
    sent_count: int
    rejected_count: int
    rejected_items: list[RejectedItem] = Field(default_factory=list)


class DataSource(_Answer):
    id_data_source: int
    id_shop: int | None = None
    label: str
    type: str | None = None
    is_default: bool = False
    config: str | None = None
    active: bool = True
    parent_id: int | None = None
    created_at: str | None = None
    updated_at: str | None = None


Record = dict[str, Any]

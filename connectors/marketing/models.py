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


class CustomKpi(_Answer):
    """A custom KPI as the KPI endpoints answer it: bare, not in an envelope.

    Only the id is required: the spec shows the fields but not which may be null.
    """

    id_custom_kpi: str
    id_shop: int | None = None
    name: dict[str, Any] = Field(default_factory=dict)
    description: dict[str, Any] | None = None
    measures: list[dict[str, Any]] = Field(default_factory=list)
    source_type: str | None = None
    source_schema_name: str | None = None
    source_table_name: str | None = None
    relations_chain: list[list[str]] = Field(default_factory=list)
    dimension_field: str | None = None
    secondary_dimension_field: str | None = None
    time_field: str | None = None
    filters: Any = None
    status: str | None = None
    last_event_run_at: str | None = None
    last_error: str | None = None
    lookback_max_months: int | None = None
    created_at: str | None = None
    updated_at: str | None = None

"""The bodies the custom KPI endpoints take and the objects they answer with
(``routes/kpis.py`` serves them; its docstring lists the choices where the spec says "not
shown"). Unknown keys are refused throughout."""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, create_model, model_validator

from sandbox.marketing.answers import Answer, Moment, model_types
from sandbox.marketing.openapi import omittable
from sandbox.marketing.spec.query import MULTI_VALUE_OPERATORS, Filter, Operator

Label = dict[str, str]
Position = Annotated[int, Field(strict=True, ge=0)]


class _Strict(BaseModel):
    """Unknown keys are refused: a misspelt key would otherwise be silently ignored."""

    model_config = ConfigDict(extra="forbid")


class Measure(_Strict):
    id_measure: str = Field(min_length=1)
    type: Literal["count", "count_distinct", "sum", "avg", "min", "max"]
    field: str = Field(min_length=1)
    label: Label = Field(default_factory=dict)
    format: str | None = None
    suffix: str | None = None
    position: Position = 0


class Dimension(_Strict):
    id_dimension: str = Field(min_length=1)
    field: str = Field(min_length=1)
    label: Label = Field(default_factory=dict)
    position: Position = 0


class KpiFilter(_Strict):
    field: str = Field(min_length=1)
    operator: Operator
    value: Any = None

    @model_validator(mode="after")
    def _shape(self) -> KpiFilter:
        count = len(self.value) if isinstance(self.value, list) else None
        if self.operator in (Operator.BETWEEN, Operator.NOT_BETWEEN) and count != 2:
            raise ValueError(f"value: {self.operator} takes an array of 2 values")
        if self.operator in (Operator.IN, Operator.NOT_IN) and not count:
            raise ValueError(f"value: {self.operator} takes a non-empty array")
        if self.operator not in MULTI_VALUE_OPERATORS and isinstance(self.value, list | dict):
            raise ValueError(f"value: {self.operator} takes a single value")
        return self

    def as_filter(self) -> Filter:
        values = self.value if isinstance(self.value, list) else [self.value]
        return Filter(field=self.field, operator=self.operator, values=values)


class KpiIn(_Strict):
    """Body of ``POST /v1/custom-stats/kpis`` (and ``/preview``).

    The spec does not show which fields are required; we require ``name``,
    ``source_type``, ``source_schema_name`` and at least one measure, without which a KPI
    means nothing. The rest have empty defaults.
    """

    name: Label = Field(min_length=1)
    description: Label = Field(default_factory=dict)
    source_type: Literal["system", "custom"]
    source_schema_name: str = Field(min_length=1)
    relations_chain: list[list[str]] = Field(default_factory=list)
    measures: list[Measure] = Field(min_length=1)
    dimensions: list[Dimension] = Field(default_factory=list)
    time_field: str | None = None
    time_field_explicit: StrictBool = False
    filters: list[KpiFilter] = Field(default_factory=list)
    lookback_max_months: Annotated[int, Field(strict=True, ge=1, le=120)] = 12

    @model_validator(mode="after")
    def _unique_ids(self) -> KpiIn:
        for kind, ids in (("id_measure", [m.id_measure for m in self.measures]),
                          ("id_dimension", [d.id_dimension for d in self.dimensions])):
            twice = sorted(i for i, times in Counter(ids).items() if times > 1)
            if twice:
                raise ValueError(f"{kind}: {', '.join(twice)} given more than once")
        return self


_ANY_OF_KPI: dict[str, Any] = {name: (kind, omittable())
                               for name, kind in model_types(KpiIn).items()}
KpiPatch = create_model(
    "KpiPatch", __base__=_Strict,
    __doc__="Any fields of a KPI: merged over its current definition, checked as a whole.",
    **_ANY_OF_KPI,
)


# --- what the KPI endpoints answer (bare objects, not envelopes) ------------------------------


class KpiMeasure(Answer):
    id_measure: str
    type: str
    field: str
    label: Label
    chart_types: list[str]
    position: int


class KpiConditions(Answer):
    combinator: Literal["AND"]
    conditions: list[KpiFilter]


class Kpi(Answer):
    """A custom KPI."""

    id_custom_kpi: str
    id_shop: int
    name: Label
    description: Label
    measures: list[KpiMeasure]
    source_type: Literal["system", "custom"]
    source_schema_name: str
    source_table_name: str
    relations_chain: list[list[str]]
    dimension_field: str | None
    secondary_dimension_field: str | None
    time_field: str | None
    filters: KpiConditions
    status: Literal["backfilling"]
    last_event_run_at: Moment | None
    last_error: str | None
    lookback_max_months: int
    created_at: Moment
    updated_at: Moment


class KpiSource(Answer):
    """A schema KPIs may be computed on (custom ones: a definition)."""

    source_type: Literal["system", "custom"]
    source_schema_name: str
    label: str
    id_custom_data_definition: int | None = None
    active: bool | None = None


class KpiField(Answer):
    """A field of a source schema (``<schema>.<field>`` through a relation)."""

    name: str
    type: str
    label: str


class PreviewRows(Answer):
    rows: list[dict[str, Any]] = Field(description="per combination of the first two"
                                       " dimensions: their values and each measure's")


class Preview(Answer):
    """The KPI computed now over the shop's stored data."""

    statusCode: Literal[200]
    data: PreviewRows


class Confirmation(BaseModel):
    """Deleting a KPI drops its history: say so."""

    confirmation: Literal[True]

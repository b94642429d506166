"""What the state store binds for a value on its quicker ways is what the general way binds:
a time on SQLite (``UTCDateTime``), and a JSON column's text (``sql.dumps``)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import orjson
import pytest
from sqlalchemy.types import TypeDecorator

from pipelines.engine.state import ItemStatus
from pipelines.engine.state.schema import UTCDateTime
from pipelines.engine.state.sql import dumps, open_engine


class _Moment(datetime):
    """A datetime subclass (as pendulum's are): bound the general way."""


@pytest.mark.parametrize("value", [
    datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 1, 2, 3, 4, 5),
    datetime(999, 12, 31, 23, 59, 59, 999_999), datetime(1, 1, 1),
    datetime(2024, 6, 1, 0, 15, 1, 10, tzinfo=timezone(timedelta(hours=5, minutes=30))),
    datetime(2024, 6, 1, 23, 59, tzinfo=timezone(timedelta(hours=-8)), fold=1),
    _Moment(2024, 2, 29, 12, tzinfo=UTC), None,
])
def test_sqlite_binds_a_time_as_sqlalchemy_would(value: datetime | None) -> None:
    """``UTCDateTime``'s one-step text on SQLite is what its ``process_bind_param`` and
    SQLAlchemy's ``DATETIME`` make of the value together."""
    engine = open_engine("sqlite://")
    try:
        impl = UTCDateTime().dialect_impl(engine.dialect)
        fast = impl.bind_processor(engine.dialect)
        general = TypeDecorator.bind_processor(impl, engine.dialect)
        assert fast is not None and general is not None and fast is not general
        assert fast(value) == general(value)
        with pytest.raises(AttributeError):  # neither takes a date
            fast(date(2024, 2, 29))
    finally:
        engine.dispose()


@pytest.mark.parametrize("value", [
    {"a": 1, "lines": [{"q": None}], "x": 1.5}, [], ["refused"], {},
    {ItemStatus.ACCEPTED: 1, 2: "b", "c": {3: [4]}}, {"s": ItemStatus.VISIBLE},
    {"x": float("nan")}, "text", 7, None,
])
def test_json_text_is_the_same_with_or_without_string_keys(value: Any) -> None:
    assert dumps(value) == orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def test_a_value_json_cannot_hold_is_refused() -> None:
    with pytest.raises(TypeError):
        dumps({"a": {1, 2}})

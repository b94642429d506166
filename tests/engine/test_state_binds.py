"""What the state store binds for a value on its quicker ways is what the general way binds:
a time on SQLite (``UTCDateTime``)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from sqlalchemy.types import TypeDecorator

from pipelines.engine.state.schema import UTCDateTime
from pipelines.engine.state.sql import open_engine


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

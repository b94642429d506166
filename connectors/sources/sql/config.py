"""What a SQL source needs to be told: the database URL, its time zone, and its streams."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from connectors.http.urls import is_loopback
from connectors.sources.sql.columns import StreamSpec, zone

#: sslmode values that encrypt the connection (libpq); "prefer" may silently not
TLS_MODES = frozenset({"require", "verify-ca", "verify-full"})


def _is_local(host: str | None) -> bool:
    """No host (a Unix socket), ``localhost`` or a loopback address."""
    return not host or host.startswith("/") or is_loopback(host)


class SqlStreamSpec(StreamSpec):
    """A stream read from a table (``schema.table`` allowed) or from a SELECT query."""

    table: str | None = None
    query: str | None = None
    #: how the cursor column holds time: a timestamp (native or text), or Unix seconds or
    #: milliseconds
    cursor_format: Literal["timestamp", "epoch", "epoch_ms"] = "timestamp"

    @model_validator(mode="after")
    def _one_source(self) -> SqlStreamSpec:
        if (self.table is None) == (self.query is None):
            raise ValueError("give exactly one of `table` or `query`")
        return self

    @field_validator("query")
    @classmethod
    def _select(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip().rstrip(";").strip()
        if not value.lower().startswith(("select", "with")):
            raise ValueError("must be a SELECT (or WITH … SELECT) query")
        return value


class SqlConfig(BaseModel):
    """A database reachable with SQLAlchemy and the streams read from it. The URL is a
    ``SecretStr`` (it may hold a password): it never shows in a repr, a log or an error."""

    #: errors never echo their input: it may be the URL
    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    url: SecretStr
    #: the zone of naive timestamps (``timestamp without time zone``, SQLite text)
    timezone: str = "UTC"
    page_size: int = Field(default=500, ge=1, le=10_000)
    #: allow a PostgreSQL server on another host without TLS (sslmode=require or stricter)
    allow_unencrypted: bool = False
    streams: dict[str, SqlStreamSpec] = Field(default_factory=dict)

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        zone(value)
        return value

    @field_validator("url")
    @classmethod
    def _url(cls, value: SecretStr) -> SecretStr:
        try:
            url = make_url(value.get_secret_value().strip())
        except ArgumentError:
            raise ValueError("is not a SQLAlchemy database URL (like"
                             " postgresql+psycopg://user@host/db or sqlite:////path/shop.db)"
                             ) from None
        if url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:"):
            raise ValueError("an in-memory SQLite database has nothing to read: give the"
                             " file, like sqlite:////path/shop.db")
        return value

    @model_validator(mode="after")
    def _tls(self) -> SqlConfig:
        url = self.sqlalchemy_url()
        if (url.get_backend_name() == "postgresql" and not self.allow_unencrypted
                and not _is_local(url.host) and url.query.get("sslmode") not in TLS_MODES):
            raise ValueError(
                "url: a PostgreSQL server on another host must be reached over TLS, the"
                " password and the shop's data travel on the wire: add ?sslmode=require (or"
                " verify-full) to the URL, or set allow_unencrypted")
        return self

    def sqlalchemy_url(self) -> URL:
        return make_url(self.url.get_secret_value().strip())

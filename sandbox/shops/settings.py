"""What every fake shop's settings share: where it listens, the seed and sizes of the
generated shop, its timezone (checked), and the faults the hosting layer injects. Each
platform's ``settings`` module subclasses these and keeps its own fields and defaults; the
command-line options that fill them are in ``sandbox.shops.cli``."""

from __future__ import annotations

from typing import Annotated
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, Field, field_validator

#: a port to listen on (0: a free one)
Port = Annotated[int, Field(ge=0, le=65535)]
#: the most records of a kind a fake generates (a cap the command line leaves to the model)
MOST = 1_000_000
#: how many records of a kind to generate
Count = Annotated[int, Field(ge=0, le=MOST)]


class FakeShopSettings(BaseModel):
    host: str = "127.0.0.1"
    port: Port = 8788
    seed: int = 0
    customers: Count = 50
    orders: Count = 200
    products: Count = 30
    #: the shop's IANA timezone (each platform says what it changes on the wire)
    timezone: str = "Europe/Paris"
    #: the share of API requests that meet an injected fault
    fault_rate: float = Field(default=0.0, ge=0, le=1)
    #: the ``Retry-After`` of an injected 429 or 503
    retry_after: int = Field(default=1, ge=0)

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        """A name ``zoneinfo`` knows; the message gives the platform's default as example."""
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            example = cls.model_fields["timezone"].default
            raise ValueError(
                f"unknown timezone {value!r} (use an IANA name like {example})") from None
        return value


class HostedShopSettings(FakeShopSettings):
    """A fake behind the hosting layer's rate limit (``sandbox.shops.hosting``): every one
    but Shopify, whose limit is its cost bucket."""

    #: requests per second allowed by a token bucket (burst = the same number); None = off
    rate_limit: float | None = Field(default=None, gt=0)

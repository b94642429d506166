"""The sandbox's settings, as given on the command line or by a test."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from sandbox.marketing.limits import LISTING_WORK_SECONDS

#: key pattern of most endpoints, and of the custom KPI endpoints (spec, Authentication)
GENERAL_KEY_PATTERN = re.compile(r"^[a-zA-Z0-9]{8}\.[A-Za-z0-9_-]+$")
KPI_KEY_PATTERN = re.compile(r"^[a-zA-Z0-9-]{20,64}$")

#: the keys of the one shop a sandbox serves when no ``--key`` is given (documented in the README)
DEFAULT_KEY = "sandbox1.shopsync-local-key"
DEFAULT_KPI_KEY = "shopsync-sandbox-kpi-key"


class ShopKeys(BaseModel):
    """The keys of one shop: one for most endpoints, optionally one for the KPI endpoints."""

    model_config = ConfigDict(frozen=True)

    key: str
    kpi_key: str | None = None

    @field_validator("key")
    @classmethod
    def _general(cls, value: str) -> str:
        if not GENERAL_KEY_PATTERN.match(value):
            raise ValueError(
                f"a shop key must match {GENERAL_KEY_PATTERN.pattern} (eight letters or digits,"
                " a dot, then letters, digits, '_' or '-')"
            )
        return value

    @field_validator("kpi_key")
    @classmethod
    def _kpi(cls, value: str | None) -> str | None:
        if value is not None and not KPI_KEY_PATTERN.match(value):
            raise ValueError(f"a KPI key must match {KPI_KEY_PATTERN.pattern}")
        return value

    @classmethod
    def parse(cls, text: str) -> ShopKeys:
        """``KEY`` or ``KEY,KPI_KEY`` (the comma fits neither pattern, so it cannot be part of one)."""
        key, _, kpi_key = text.partition(",")
        return cls(key=key.strip(), kpi_key=kpi_key.strip() or None)


class SandboxSettings(BaseModel):
    host: str = "127.0.0.1"
    port: int = Field(default=8787, ge=0, le=65535)
    shops: list[ShopKeys] = Field(
        default_factory=lambda: [ShopKeys(key=DEFAULT_KEY, kpi_key=DEFAULT_KPI_KEY)]
    )
    accept_any_key: bool = False
    visibility_delay: float = Field(default=0.5, ge=0)
    #: the clock writes become visible by stands still until ``POST /_sandbox/clock`` moves
    #: it: tests pass the visibility delay without waiting it out
    manual_clock: bool = False
    fault_rate: float = Field(default=0.0, ge=0, le=1)
    drop_rate: float = Field(default=0.0, ge=0, le=1)
    disconnect_rate: float = Field(default=0.0, ge=0, le=1)
    latency_ms: float = Field(default=0.0, ge=0)
    retry_after: int = Field(default=1, ge=0)
    seed: int | None = None
    data: Path | None = None
    #: seconds of work one listing may take before it is refused (tests lower it)
    listing_work_seconds: float = Field(default=LISTING_WORK_SECONDS, gt=0)

"""``shops.yaml``: where data comes from, where it goes, and how — validated by pydantic.

Secrets are never in the file: it names the environment variables that hold them. A bad
file gets one message per problem, each naming the field and how to fix it.
"""

from __future__ import annotations

import os
import re
from datetime import date
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

CONFIG_ENV = "SHOPSYNC_CONFIG"
DEFAULT_CONFIG = Path("shops.yaml")
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,40}$")
_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")


class ConfigError(Exception):
    """The configuration cannot be used; ``problems`` holds one line per problem."""

    def __init__(self, problems: list[str], path: Path | None = None) -> None:
        self.problems = problems
        self.path = path
        where = f"{path}: " if path else ""
        super().__init__(f"{where}{len(problems)} problem(s) in the configuration:\n"
                         + "\n".join(f"  - {p}" for p in problems))


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _env_name(value: str) -> str:
    if not _ENV_NAME.match(value):
        raise ValueError(
            f"{value!r} is not an environment variable name: give the NAME of the variable"
            " that holds the secret (like SHOPSYNC_API_KEY), never the secret itself"
        )
    return value


class Destination(_Model):
    base_url: str = "http://127.0.0.1:8787/v1"
    api_key_env: str = "SHOPSYNC_API_KEY"
    kpi_api_key_env: str | None = None
    #: the spec lets clients write carts; a deployment whose service exposes carts read-only
    #: turns this off (orders still carry cart_id and cart_updated_at)
    write_carts: bool = True

    _check_key_env = field_validator("api_key_env", "kpi_api_key_env")(
        lambda cls, v: v if v is None else _env_name(v)
    )

    @field_validator("base_url")
    @classmethod
    def _v1(cls, value: str) -> str:
        if not value.rstrip("/").endswith("/v1"):
            raise ValueError("must end with the API version prefix /v1 (like https://…/v1)")
        return value.rstrip("/")


class Connection(_Model):
    """How to reach a source. Which fields a platform needs is its own to say (see
    ``pipelines/engine/platforms/``): an address (``url``, or ``url_env`` when the URL holds
    a password, or ``path`` for a folder), secrets by environment variable name, and
    platform ``options`` and per-stream definitions (``streams``) where it takes them."""

    url: str | None = None
    url_env: str | None = None
    path: str | None = None
    key_env: str | None = None
    secret_env: str | None = None
    token_env: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    streams: dict[str, dict[str, Any]] = Field(default_factory=dict)

    _check_env = field_validator("url_env", "key_env", "secret_env", "token_env")(
        lambda cls, v: v if v is None else _env_name(v)
    )

    @field_validator("url")
    @classmethod
    def _trim(cls, value: str | None) -> str | None:
        return value.rstrip("/") if value else value


class DataSourceRef(_Model):
    """The target data source: an id, or a label found (or created) through the API."""

    id: int | None = None
    label: str | None = None
    type: str = "api"

    @model_validator(mode="after")
    def _one(self) -> DataSourceRef:
        if (self.id is None) == (self.label is None):
            raise ValueError("give exactly one of `id` or `label`")
        return self


class ResourceMapping(_Model):
    """Overrides of a platform's default mapping for one target resource."""

    set: dict[str, Any] = Field(default_factory=dict)
    rename: dict[str, str] = Field(default_factory=dict)
    callable: str | None = None

    @field_validator("callable")
    @classmethod
    def _dotted(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"^[\w.]+:[\w.]+$", value):
            raise ValueError("must be `package.module:function`")
        return value


class Tuning(_Model):
    concurrency: int = Field(default=8, ge=1, le=64)
    min_concurrency: int = Field(default=1, ge=1)
    page_size: int = Field(default=100, ge=1, le=100)
    #: items gathered before a push and a checkpoint: the most a crash makes re-read
    chunk_items: int = Field(default=2000, ge=1, le=100_000)
    #: sends of an item the API keeps rejecting before it is parked for a person
    max_rejected_attempts: int = Field(default=3, ge=1, le=100)


class Source(_Model):
    name: str
    platform: str
    connection: Connection
    data_source: DataSourceRef = DataSourceRef(label="shopsync")
    resources: list[str] = Field(default_factory=lambda: ["all"])
    schedule: str | None = "*/15 * * * *"
    history_start: date | None = None
    lookback_seconds: int = Field(default=300, ge=0)
    lang: str = "en"
    currency: str = Field(default="EUR", pattern=r"^[A-Z]{3}$")
    mapping: dict[str, ResourceMapping] = Field(default_factory=dict)
    tuning: Tuning = Tuning()

    @field_validator("platform")
    @classmethod
    def _known_platform(cls, value: str) -> str:
        from pipelines.engine.platforms import names

        if value not in names():
            raise ValueError(f"unknown platform {value!r}; use one of: {', '.join(names())}")
        return value

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError(
                "must be lowercase letters, digits and _ (it names Dagster assets), like my_shop"
            )
        return value


class Reconciliation(_Model):
    """When accepted items are read back, and how patient to be with them."""

    schedule: str = "*/5 * * * *"
    deadline_seconds: float = Field(default=600, ge=0)
    max_resends: int = Field(default=3, ge=0, le=20)
    #: the window of change time (ending now) whose completeness each run checks at the source
    completeness_hours: float = Field(default=24, gt=0, le=24 * 31)


class Alerts(_Model):
    """Where a person hears about trouble: always the logs, and a webhook when given."""

    webhook_url: str | None = None
    #: share of a run's pushed items rejected above which a rejection spike is reported
    max_rejection_rate: float = Field(default=0.05, ge=0, le=1)

    @field_validator("webhook_url")
    @classmethod
    def _https(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("https://", "http://127.", "http://localhost")):
            raise ValueError("must be an https URL (plain http only on loopback)")
        return value


class Config(_Model):
    destination: Destination = Destination()
    state_url: str | None = None
    reconciliation: Reconciliation = Reconciliation()
    alerts: Alerts = Alerts()
    sources: list[Source] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> Config:
        names = [s.name for s in self.sources]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"source names must be unique; repeated: {', '.join(dupes)}")
        return self

    def source(self, name: str) -> Source:
        for source in self.sources:
            if source.name == name:
                return source
        raise ConfigError([f"no source named {name!r}; known: "
                           + ", ".join(s.name for s in self.sources)])


_HINTS = {
    "missing": "add it",
    "extra_forbidden": "remove it (or check its spelling)",
    "literal_error": "use one of the allowed values",
    "int_parsing": "use a whole number",
    "date_from_datetime_parsing": "use a date like 2024-01-31",
    "date_parsing": "use a date like 2024-01-31",
    "string_pattern_mismatch": "see the expected pattern",
}


def describe(exc: ValidationError) -> list[str]:
    """One line per problem: where it is, what is wrong, how to fix it."""
    lines = []
    for err in exc.errors(include_url=False):
        where = ""
        for part in err["loc"]:
            where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else str(part))
        message = str(err["msg"]).removeprefix("Value error, ")
        hint = _HINTS.get(err["type"])
        if err["type"] == "literal_error":
            message = f"{message} (got {err.get('input')!r})"
        lines.append(f"{where or 'file'}: {message}" + (f" — {hint}" if hint else ""))
    return lines


def config_path(given: str | Path | None = None) -> Path:
    return Path(given or os.environ.get(CONFIG_ENV) or DEFAULT_CONFIG)


def load_config(path: str | Path | None = None) -> Config:
    """Read and validate the configuration; raise ConfigError listing every problem."""
    file = config_path(path)
    try:
        raw = yaml.safe_load(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(
            [f"no configuration file at {file}: pass --config PATH or set {CONFIG_ENV}"]
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError([f"not valid YAML: {exc}"], file) from None
    return parse_config(raw, file)


def parse_config(raw: Any, path: Path | None = None) -> Config:
    if not isinstance(raw, dict):
        raise ConfigError(["the file must be a mapping with `sources:` (and `destination:`)"],
                          path)
    try:
        config = Config.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(describe(exc), path) from None
    from pipelines.engine.platforms import platform

    problems = [
        f"sources[{index}].{problem}"
        for index, source in enumerate(config.sources)
        for problem in platform(source.platform).check(source)
    ]
    if problems:
        raise ConfigError(problems, path)
    return config

"""The configuration's models: the destination, each source (its connection, data source,
mapping overrides and tuning), reconciliation, alerts, execution, and the whole file."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from pipelines.engine.config.checks import (
    at_most_one,
    callable_problem,
    database_url,
    env_var_name,
    secure_address,
)
from pipelines.engine.config.cron import cron_schedule, spread_cron
from pipelines.engine.config.errors import ConfigError

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,40}$")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)



class Destination(_Model):
    """The Marketing API a sync writes to: the global ``destination``, or a source's own
    ``destination`` (whose fields not given are the global one's, see
    ``Config.destination_for``)."""

    base_url: str = "http://127.0.0.1:8787/v1"
    api_key_env: str = "SHOPSYNC_API_KEY"
    kpi_api_key_env: str | None = None
    #: the spec lets clients write carts; a deployment whose service exposes carts read-only
    #: turns this off (orders still carry cart_id and cart_updated_at)
    write_carts: bool = True
    #: a sync stops when the API has answered no request (network errors, 5xx) for this
    #: long: it is taken as down, and the run ends saying so instead of retrying on and on
    down_after_seconds: float = Field(default=60.0, gt=0, le=3600)
    #: the request budget of the API key, shared by every run and process writing with it
    #: (through the state database: pipelines/engine/budgets.py); None: no pacing
    requests_per_second: float | None = Field(default=None, gt=0)

    _check_key_env = field_validator("api_key_env", "kpi_api_key_env")(
        lambda cls, v, info: v if v is None else env_var_name(v, info)
    )

    @field_validator("base_url")
    @classmethod
    def _v1(cls, value: str) -> str:
        secure_address(value, carrying="the API key travels", label="base_url")
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
        lambda cls, v, info: v if v is None else env_var_name(v, info)
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
        if value is None:
            return value
        if not re.fullmatch(r"[\w.]+:[\w.]+", value):
            raise ValueError("must be `package.module:function`")
        why = callable_problem(value)
        if why:
            raise ValueError(why)
        return value


class Tuning(_Model):
    #: bulk requests in flight at the start of a push; the writer finds the API's pace from
    #: here (AIMD), between ``min_concurrency`` and ``max_concurrency``
    concurrency: int = Field(default=8, ge=1, le=64)
    min_concurrency: int = Field(default=1, ge=1)
    #: a safety bound on requests in flight, not a guess of the pace
    max_concurrency: int = Field(default=64, ge=1, le=64)
    page_size: int = Field(default=100, ge=1, le=100)
    #: items gathered before a push and a checkpoint: the most a crash makes re-read
    chunk_items: int = Field(default=2000, ge=1, le=100_000)
    #: sends of an item the API keeps rejecting before it is parked for a person
    max_rejected_attempts: int = Field(default=3, ge=1, le=100)
    #: seconds a sync reads each chunk's accepted items back (beside the sync; the last chunk's
    #: read-backs add up to this to the run) to measure their visibility lag finely; 0: off
    probe_seconds: float = Field(default=0, ge=0, le=60)
    #: read and map the streams in a process of their own, beside the sync: a second core
    #: for a large sync, at the cost of starting a Python process (about a second) per run
    read_process: bool = False

    @model_validator(mode="after")
    def _concurrency_order(self) -> Tuning:
        low, start, high = self.min_concurrency, self.concurrency, self.max_concurrency
        if low > start:
            raise ValueError(f"min_concurrency ({low}) is above concurrency ({start}): lower"
                             f" min_concurrency to at most {start} or raise concurrency")
        if start > high:
            raise ValueError(f"concurrency ({start}) is above max_concurrency ({high}): raise"
                             f" max_concurrency to at least {start} or lower concurrency")
        return self


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
    #: where this source's items go when not the global destination (another account, or
    #: another API): only the fields given here differ from the global ``destination``
    destination: Destination | None = None

    @field_validator("platform")
    @classmethod
    def _known_platform(cls, value: str) -> str:
        from pipelines.engine.platforms import names

        if value not in names():
            raise ValueError(f"unknown platform {value!r}; use one of: {', '.join(names())}")
        return value

    _check_schedule = field_validator("schedule")(lambda cls, v: cron_schedule(v))

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
    _check_schedule = field_validator("schedule")(lambda cls, v: cron_schedule(v))
    deadline_seconds: float = Field(default=600, ge=0)
    max_resends: int = Field(default=3, ge=0, le=20)
    #: the window of change time (ending now) whose completeness each run checks at the source
    completeness_hours: float = Field(default=24, gt=0, le=24 * 31)
    #: items per resource that each scheduled run re-reads among those the ledger holds as
    #: visible (the longest unchecked first, so runs cover everything in turn); ``all`` for
    #: every item each run, 0 for none
    audit_sample: Annotated[int, Field(ge=0)] | Literal["all"] = 500
    #: days each item's story (``shopsync trace``) is kept: each run deletes the older
    #: events; an item's ledger row, its state and last moments, is kept whatever its age
    keep_events_days: float = Field(default=90, gt=0)


class Alerts(_Model):
    """Where a person hears about trouble: always the logs, and a webhook when given."""

    webhook_url: str | None = None
    #: the environment variable holding the webhook's address instead (one with a token in it)
    webhook_url_env: str | None = None
    #: share of a run's pushed items rejected above which a rejection spike is reported
    max_rejection_rate: float = Field(default=0.05, ge=0, le=1)

    @field_validator("webhook_url")
    @classmethod
    def _https(cls, value: str | None) -> str | None:
        if value is None:
            return value
        return secure_address(value, carrying="the alerts, which name your sources and items, travel",
                    label="webhook_url")

    _check_env = field_validator("webhook_url_env")(
        lambda cls, v, info: v if v is None else env_var_name(v, info))
    _one = model_validator(mode="after")(lambda self: at_most_one(self, "webhook_url"))


class Execution(_Model):
    """How the job syncing every source (``sync_all_sources``) runs its steps: in its run's
    process (the default: the great-expectations import is seconds per process), or on
    celery workers (``pip install 'shopsync[deploy]'``, workers started with ``python -m
    pipelines.worker``). The broker's and result backend's URLs may hold a password: the
    file names the environment variables holding them, read by the run and the workers."""

    executor: Literal["in_process", "celery"] = "in_process"
    #: the variable holding the celery broker's URL (like ``redis://:PASSWORD@host:6379/0``)
    broker_url_env: str | None = None
    #: the variable holding the result backend's URL; default: the broker's (Redis serves both)
    backend_url_env: str | None = None
    #: the celery queue the runs send their steps to and the workers listen on
    queue: str = Field(default="dagster", pattern=r"^[A-Za-z0-9_.-]{1,64}$")

    _check_env = field_validator("broker_url_env", "backend_url_env")(
        lambda cls, v, info: v if v is None else env_var_name(v, info))

    @model_validator(mode="before")
    @classmethod
    def _no_plain_url(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            for field in ("broker_url", "backend_url"):
                if field in data:  # its value is not shown: it may hold a password
                    raise ValueError(
                        f"{field} is not read from the file (a URL may hold a password): put"
                        f" the URL in an environment variable and give its NAME as"
                        f" {field}_env (like SHOPSYNC_CELERY_BROKER_URL)")
        return data

    @model_validator(mode="after")
    def _celery_needs_broker(self) -> Execution:
        if self.executor == "celery" and self.broker_url_env is None:
            raise ValueError(
                "executor celery needs broker_url_env: the NAME of the environment variable"
                " holding the broker's URL (like SHOPSYNC_CELERY_BROKER_URL, set to"
                " redis://:PASSWORD@HOST:6379/0 for the run and the workers)")
        if self.executor != "celery" and (self.broker_url_env or self.backend_url_env):
            raise ValueError("broker_url_env and backend_url_env are for `executor: celery`"
                             " only: set it, or remove them")
        return self


class Config(_Model):
    destination: Destination = Destination()
    state_url: str | None = None
    #: the environment variable holding ``state_url`` instead (a URL with a password)
    state_url_env: str | None = None
    reconciliation: Reconciliation = Reconciliation()
    alerts: Alerts = Alerts()
    #: whether the schedules (syncs, reconciliation) and the alert sensors run as soon as
    #: the code location loads (on, as the README promises), or start stopped (off: a
    #: person turns them on in the UI — for a staging copy of a production configuration)
    automation: bool = True
    execution: Execution = Execution()
    #: how the Dagster code location shows the sources (the README's "Many shops"):
    #: ``shop_groups``, a group of assets with its own jobs and schedules per shop; or
    #: ``shop_partitions``, the shops of a platform as the partitions of one set of assets,
    #: for a location of hundreds of shops that must load in seconds
    layout: Literal["shop_groups", "shop_partitions"] = "shop_groups"
    sources: list[Source] = Field(min_length=1)

    _check_state_url = field_validator("state_url")(lambda cls, v: v if v is None else database_url(v))
    _check_state_env = field_validator("state_url_env")(
        lambda cls, v, info: v if v is None else env_var_name(v, info))
    _one_state_url = model_validator(mode="after")(lambda self: at_most_one(self, "state_url"))

    @model_validator(mode="after")
    def _unique(self) -> Config:
        names = [s.name for s in self.sources]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"source names must be unique; repeated: {', '.join(dupes)}")
        return self

    @model_validator(mode="after")
    def _own_data_source(self) -> Config:
        """Two sources writing the same resources into one data source of one account would
        overwrite each other's items of the same id (two shops' order 1001): refused, unless
        they name resources that do not overlap (one shop split over two sources)."""
        seen: dict[tuple[str, str, int | str | None], list[Source]] = {}
        for source in self.sources:
            destination = self.destination_for(source)
            ref = source.data_source
            seen.setdefault((destination.base_url, destination.api_key_env,
                             ref.id if ref.id is not None else ref.label), []).append(source)
        for sharing in seen.values():
            for i, later in enumerate(sharing[1:], start=1):
                for earlier in sharing[:i]:
                    both = set(earlier.resources) & set(later.resources)
                    if both or "all" in earlier.resources or "all" in later.resources:
                        raise ValueError(
                            f"sources {earlier.name} and {later.name} write into the same data"
                            f" source ({later.data_source.model_dump(exclude_none=True)}) of"
                            " the same destination: their items of the same id would overwrite"
                            f" each other; give each its own, like `data_source: {{label:"
                            f" {later.name}}}` under {later.name}")
        return self

    def state_url_in(self, env: Mapping[str, str]) -> str | None:
        """The state database's URL: from the variable ``state_url_env`` names, else
        ``state_url`` (None: the default)."""
        if self.state_url_env is None:
            return self.state_url
        value = env.get(self.state_url_env)
        if not value:
            raise ConfigError([f"state_url_env: the environment variable {self.state_url_env}"
                               " is not set — export it"])
        try:
            return database_url(value)
        except ValueError as exc:
            raise ConfigError([f"state_url_env: {self.state_url_env}: {exc}"]) from None

    def schedule_for(self, source: Source) -> str | None:
        """When ``source`` syncs: its ``schedule`` as written, or, when it names none, the
        default period at a minute of its own (hundreds of sources do not start at once)."""
        if "schedule" in source.model_fields_set:
            return source.schedule
        names = tuple(s.name for s in self.sources if "schedule" not in s.model_fields_set)
        return spread_cron(Source.model_fields["schedule"].default, names, source.name)

    def reconciliation_schedule_for(self, source: Source) -> str:
        """When ``source`` is reconciled: ``reconciliation.schedule`` as written, or the
        default period at a minute of the source's own."""
        cron = self.reconciliation.schedule
        if "schedule" in self.reconciliation.model_fields_set:
            return cron
        return spread_cron(cron, tuple(s.name for s in self.sources), source.name)

    def destination_for(self, source: Source) -> Destination:
        """The destination ``source`` syncs into: its own ``destination`` over the global
        one, field by field (a source naming only ``api_key_env`` writes to the global
        ``base_url`` with its own key)."""
        if source.destination is None:
            return self.destination
        given = source.destination.model_dump(exclude_unset=True)
        return self.destination.model_copy(update=given) if given else self.destination

    def destination_field(self, source: Source, name: str) -> str:
        """Where the value of the destination's field ``name`` for ``source`` is written,
        for a message that names it."""
        if source.destination is None or name not in source.destination.model_fields_set:
            return f"destination.{name}"
        index = next(i for i, s in enumerate(self.sources) if s.name == source.name)
        return f"sources[{index}].destination.{name}"

    def source(self, name: str) -> Source:
        for source in self.sources:
            if source.name == name:
                return source
        raise ConfigError([f"no source named {name!r}; known: "
                           + ", ".join(s.name for s in self.sources)])

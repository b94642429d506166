"""``shops.yaml``: where data comes from, where it goes, and how — validated by pydantic.

Secrets are never in the file: it names the environment variables that hold them. A bad
file gets one message per problem, each naming the field and how to fix it.
"""

from __future__ import annotations

import os
import re
import reprlib
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from connectors.http.urls import secure_url

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


def shown(value: Any) -> str:
    """A value for a message: quoted, escaped, and short (a file may hold anything)."""
    return reprlib.repr(value)


def _env_name(value: str, info: ValidationInfo) -> str:
    """The name of an environment variable. The value is never echoed: a key pasted here
    by mistake must not end up in a terminal or a log."""
    if _ENV_NAME.fullmatch(value):
        return value
    field = info.field_name
    if (not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value) or len(value) >= 24
            or sum(c.isdigit() for c in value) >= 4):
        raise ValueError(
            f"the value of {field} looks like a key, not a variable name (it is not shown):"
            " put the secret in an environment variable and give the variable's NAME here"
            " (like SHOPSYNC_API_KEY)"
        )
    raise ValueError(
        f"the value of {field} is not an environment variable name: give the NAME of the"
        " variable that holds the secret, in capitals, digits and _ (like SHOPSYNC_API_KEY)"
    )


def _url(value: str, *, carrying: str, label: str) -> str:
    """``value`` if it passes the one secure-address check (https, or http on loopback)."""
    secure_url(value, carrying=carrying, label=label, invalid="must be an http(s) URL")
    return value


def _cron(value: str | None) -> str | None:
    """A schedule Dagster can run, checked with Dagster's own validator (the engine's one
    use of Dagster, imported only here): a file that passes never stops the code location
    from loading."""
    if value is None:
        return value
    from dagster._utils.schedules import is_valid_cron_string

    try:
        valid = is_valid_cron_string(value)
    except Exception:  # noqa: BLE001 - the parser's own errors on odd input mean "not valid"
        valid = False
    if not valid:
        raise ValueError(f'{shown(value)} is not a cron expression; e.g. "*/15 * * * *"'
                         " (minute hour day-of-month month day-of-week)")
    return value


def _callable_problem(dotted: str) -> str | None:
    """Why ``dotted`` cannot be a mapping callable ``fn(item, record) -> item``; None when
    it can. Found when the file is read, not at the first record of a run."""
    import inspect

    from pipelines.engine.mappings.base import load_callable

    try:
        fn = load_callable(dotted)
    except Exception as exc:  # noqa: BLE001 - whatever importing the user's module raises
        return (f"cannot import {dotted} ({type(exc).__name__}: {exc}) — check the module is"
                " installed or on PYTHONPATH, and the function's name")
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # no signature to read (some builtins): trust it
        return None
    try:
        signature.bind(None, None)  # (item, record)
    except TypeError:
        return (f"{dotted}{signature} must take two arguments, (item, record), and return"
                " the item")
    return None


class Destination(_Model):
    base_url: str = "http://127.0.0.1:8787/v1"
    api_key_env: str = "SHOPSYNC_API_KEY"
    kpi_api_key_env: str | None = None
    #: the spec lets clients write carts; a deployment whose service exposes carts read-only
    #: turns this off (orders still carry cart_id and cart_updated_at)
    write_carts: bool = True
    #: a sync stops when the API has answered no request (network errors, 5xx) for this
    #: long: it is taken as down, and the run ends saying so instead of retrying on and on
    down_after_seconds: float = Field(default=60.0, gt=0, le=3600)

    _check_key_env = field_validator("api_key_env", "kpi_api_key_env")(
        lambda cls, v, info: v if v is None else _env_name(v, info)
    )

    @field_validator("base_url")
    @classmethod
    def _v1(cls, value: str) -> str:
        _url(value, carrying="the API key travels", label="base_url")
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
        lambda cls, v, info: v if v is None else _env_name(v, info)
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
        why = _callable_problem(value)
        if why:
            raise ValueError(why)
        return value


class Tuning(_Model):
    concurrency: int = Field(default=8, ge=1, le=64)
    min_concurrency: int = Field(default=1, ge=1)
    page_size: int = Field(default=100, ge=1, le=100)
    #: items gathered before a push and a checkpoint: the most a crash makes re-read
    chunk_items: int = Field(default=2000, ge=1, le=100_000)
    #: sends of an item the API keeps rejecting before it is parked for a person
    max_rejected_attempts: int = Field(default=3, ge=1, le=100)
    #: seconds a sync reads each chunk's accepted items back (beside the sync; the last chunk's
    #: read-backs add up to this to the run) to measure their visibility lag finely; 0: off
    probe_seconds: float = Field(default=0, ge=0, le=60)


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

    _check_schedule = field_validator("schedule")(lambda cls, v: _cron(v))

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
    _check_schedule = field_validator("schedule")(lambda cls, v: _cron(v))
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
        return _url(value, carrying="the alerts, which name your sources and items, travel",
                    label="webhook_url")

    _check_env = field_validator("webhook_url_env")(
        lambda cls, v, info: v if v is None else _env_name(v, info))
    _one = model_validator(mode="after")(lambda self: _at_most_one(self, "webhook_url"))


def _database(value: str) -> str:
    """A state database the store can open: a SQLAlchemy URL of SQLite or PostgreSQL whose
    driver is installed (whether it answers is check-config's to try)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    try:
        url = make_url(value)
    except (ArgumentError, ValueError):
        raise ValueError("not a SQLAlchemy URL; like sqlite:////var/lib/shopsync/state.db or"
                         " postgresql+psycopg://user@host/shopsync") from None
    if url.get_backend_name() not in ("sqlite", "postgresql"):
        raise ValueError(f"the state store runs on SQLite or PostgreSQL, not"
                         f" {shown(url.get_backend_name())}; like sqlite:////var/lib/shopsync/"
                         "state.db or postgresql+psycopg://user@host/shopsync")
    try:
        url.get_dialect().import_dbapi()
    except NoSuchModuleError:
        raise ValueError(f"no driver {shown(url.drivername)}; use sqlite:// or"
                         " postgresql+psycopg://") from None
    except ImportError as exc:
        raise ValueError(f"the driver of {url.drivername} is not installed ({exc}) — install"
                         " it, or use postgresql+psycopg:// (pip install 'shopsync[postgres]')"
                         ) from None
    return value


def _at_most_one(model: _Model, field: str) -> Any:
    """``field`` or ``field_env`` (the variable holding it), not both."""
    if getattr(model, field) is not None and getattr(model, f"{field}_env") is not None:
        raise ValueError(f"give {field} or {field}_env (the variable that holds it), not both")
    return model


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
    sources: list[Source] = Field(min_length=1)

    _check_state_url = field_validator("state_url")(lambda cls, v: v if v is None else _database(v))
    _check_state_env = field_validator("state_url_env")(
        lambda cls, v, info: v if v is None else _env_name(v, info))
    _one_state_url = model_validator(mode="after")(lambda self: _at_most_one(self, "state_url"))

    @model_validator(mode="after")
    def _unique(self) -> Config:
        names = [s.name for s in self.sources]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"source names must be unique; repeated: {', '.join(dupes)}")
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
            return _database(value)
        except ValueError as exc:
            raise ConfigError([f"state_url_env: {self.state_url_env}: {exc}"]) from None

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
            message = f"{message} (got {shown(err.get('input'))})"
        lines.append(f"{where or 'file'}: {message}" + (f" — {hint}" if hint else ""))
    return lines


def config_path(given: str | Path | None = None) -> Path:
    return Path(given or os.environ.get(CONFIG_ENV) or DEFAULT_CONFIG)


class _Loader(yaml.SafeLoader):
    """YAML as a person types it: a scalar that looks like a date or a number but is none
    (``2024-13-01``, ``!!int x``, 5 000 digits) stays text, for its field to name."""


def _scalar_or_text(construct: Any) -> Any:
    def build(loader: _Loader, node: yaml.ScalarNode) -> Any:
        try:
            return construct(loader, node)
        except (ValueError, TypeError, AttributeError, OverflowError):
            return loader.construct_scalar(node)

    return build


for _tag, _construct in (("timestamp", yaml.SafeLoader.construct_yaml_timestamp),
                         ("int", yaml.SafeLoader.construct_yaml_int),
                         ("float", yaml.SafeLoader.construct_yaml_float)):
    _Loader.add_constructor(f"tag:yaml.org,2002:{_tag}", _scalar_or_text(_construct))


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """Where and what, without the snippet of the line (which may hold a secret)."""
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        mark = exc.problem_mark
        context = f" ({exc.context})" if exc.context else ""
        return (f"file: not valid YAML at line {mark.line + 1}, column {mark.column + 1}:"
                f" {exc.problem}{context}")
    return f"file: not valid YAML: {exc}"


def read_config(file: Path) -> Any:
    """The YAML document of ``file``; ConfigError naming the file when it cannot be read."""
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError([f"no configuration file at {file}: pass --config PATH or set"
                           f" {CONFIG_ENV}"]) from None
    except UnicodeDecodeError as exc:
        raise ConfigError([f"file: not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset"
                           f" {exc.start}) — save it as UTF-8"], file) from None
    except OSError as exc:
        raise ConfigError([f"file: cannot read {file}: {exc.strerror or exc}"], file) from None
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - _Loader is a SafeLoader
    except yaml.YAMLError as exc:
        raise ConfigError([_yaml_problem(exc)], file) from None
    except RecursionError:
        raise ConfigError(["file: nested too deeply to read"], file) from None


def load_config(path: str | Path | None = None) -> Config:
    """Read and validate the configuration; raise ConfigError listing every problem."""
    file = config_path(path)
    return parse_config(read_config(file), file)


def parse_config(raw: Any, path: Path | None = None) -> Config:
    if not isinstance(raw, dict):
        raise ConfigError(["file: must be a mapping with `sources:` (and `destination:`)"],
                          path)
    try:
        config = Config.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(describe(exc), path) from None
    from pipelines.engine.platforms import platform

    problems = []
    for index, source in enumerate(config.sources):
        try:
            found = platform(source.platform).check(source)
        # a platform's check that trips on a value it did not foresee still names the field
        except Exception as exc:  # noqa: BLE001
            found = [f"connection: cannot be checked ({type(exc).__name__}: {exc}) — see the"
                     f" {source.platform} README for what it takes"]
        problems += [f"sources[{index}].{problem}" for problem in found]
    if problems:
        raise ConfigError(problems, path)
    return config

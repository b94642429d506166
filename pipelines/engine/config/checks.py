"""The checks of single values that the configuration's models share: names of environment
variables (a secret pasted instead is never echoed), secure addresses, mapping callables, the
state database's URL, and a value given two ways."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ValidationInfo

from connectors.http.urls import secure_url
from pipelines.engine.config.errors import shown

_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")


def env_var_name(value: str, info: ValidationInfo) -> str:
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


def secure_address(value: str, *, carrying: str, label: str) -> str:
    """``value`` if it passes the one secure-address check (https, or http on loopback)."""
    secure_url(value, carrying=carrying, label=label, invalid="must be an http(s) URL")
    return value



def callable_problem(dotted: str) -> str | None:
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


def database_url(value: str) -> str:
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


def at_most_one(model: BaseModel, field: str) -> Any:
    """``field`` or ``field_env`` (the variable holding it), not both."""
    if getattr(model, field) is not None and getattr(model, f"{field}_env") is not None:
        raise ValueError(f"give {field} or {field}_env (the variable that holds it), not both")
    return model

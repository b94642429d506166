"""Secrets reach the engine through Dagster's environment-variable mechanism.

The configuration names environment variables; each source gets a resource whose fields
are ``EnvVar``s of those names, so the UI shows which variable is used, never its value.
Each source has its own resource key, so that a run needs only its own source's variables.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import dagster as dg

from pipelines.engine.config import Config, Source


class SourceSecrets(dg.ConfigurableResource):
    """The key of the source's destination and the source's credentials."""

    api_key: str
    kpi_api_key: str | None = None
    key: str | None = None
    secret: str | None = None
    token: str | None = None
    url: str | None = None

    def env(self, config: Config, source: Source) -> dict[str, str]:
        """The environment the engine reads its secrets from (names from the configuration)."""
        destination = config.destination_for(source)
        pairs = {
            destination.api_key_env: self.api_key,
            destination.kpi_api_key_env: self.kpi_api_key,
            source.connection.key_env: self.key,
            source.connection.secret_env: self.secret,
            source.connection.token_env: self.token,
            source.connection.url_env: self.url,
        }
        return {name: value for name, value in pairs.items() if name and value}


def secrets_key(source: Source) -> str:
    return f"{source.name}_secrets"


def secrets_for(config: Config, source: Source) -> SourceSecrets:
    def var(name: str | None) -> dg.EnvVar | None:
        return dg.EnvVar(name) if name else None

    destination = config.destination_for(source)
    return SourceSecrets(
        api_key=dg.EnvVar(destination.api_key_env),
        kpi_api_key=var(destination.kpi_api_key_env),
        key=var(source.connection.key_env),
        secret=var(source.connection.secret_env),
        token=var(source.connection.token_env),
        url=var(source.connection.url_env),
    )


T = TypeVar("T")


def taking_secrets(source: Source) -> Callable[[Callable[..., Iterator[T]]],
                                                Callable[..., Iterator[T]]]:
    """A decorator: the function's ``secrets`` parameter takes the resource of ``source``.

    Dagster gives a resource to the parameter of the same name, and the key differs per
    source: the signature Dagster reads (an explicit ``__signature__``, which it honours)
    names the key, and the call hands that resource on as ``secrets``."""
    key = secrets_key(source)

    def bind(fn: Callable[..., Iterator[T]]) -> Callable[..., Iterator[T]]:
        signature = inspect.signature(fn, eval_str=True)
        assert "secrets" in signature.parameters, f"{fn.__name__} takes no secrets"

        @functools.wraps(fn)
        def bound(*args: Any, **kwargs: Any) -> Iterator[T]:
            kwargs["secrets"] = kwargs.pop(key)
            yield from fn(*args, **kwargs)

        bound.__signature__ = signature.replace(parameters=[  # type: ignore[attr-defined]
            p.replace(name=key) if p.name == "secrets" else p
            for p in signature.parameters.values()])
        return bound

    return bind

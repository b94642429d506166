"""Secrets come from environment variables that the configuration names."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import SecretStr

from pipelines.engine.config import ConfigError


def secret_from(env: Mapping[str, str], name: str | None, field: str) -> SecretStr:
    """The secret held by the environment variable ``name`` (named by config ``field``)."""
    if not name:
        raise ConfigError([f"{field}: not set — name the environment variable that holds it"])
    value = env.get(name)
    if not value:
        raise ConfigError([f"{field}: the environment variable {name} is not set — export it"])
    return SecretStr(value)

"""Secrets reach the engine through Dagster's environment-variable mechanism.

The configuration names environment variables; each source gets a resource whose fields
are ``EnvVar``s of those names, so the UI shows which variable is used, never its value.
"""

from __future__ import annotations

import dagster as dg

from pipelines.engine.config import Config, Source


class SourceSecrets(dg.ConfigurableResource):
    """The destination key and one source's credentials."""

    api_key: str
    kpi_api_key: str | None = None
    key: str | None = None
    secret: str | None = None
    token: str | None = None
    url: str | None = None

    def env(self, config: Config, source: Source) -> dict[str, str]:
        """The environment the engine reads its secrets from (names from the configuration)."""
        pairs = {
            config.destination.api_key_env: self.api_key,
            config.destination.kpi_api_key_env: self.kpi_api_key,
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

    return SourceSecrets(
        api_key=dg.EnvVar(config.destination.api_key_env),
        kpi_api_key=var(config.destination.kpi_api_key_env),
        key=var(source.connection.key_env),
        secret=var(source.connection.secret_env),
        token=var(source.connection.token_env),
        url=var(source.connection.url_env),
    )

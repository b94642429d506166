"""The resources the assets and sensors share: the ledger's database and the alerts' webhook.

An address that may carry a credential (a database password, a webhook's token) reaches
Dagster as an ``EnvVar`` when the configuration names its variable (``state_url_env``,
``alerts.webhook_url_env``): the UI shows the variable's name, never its value. An address
written in the file stays out of the resources' configuration (the UI shows that
configuration) and is the fallback the assets pass in from the file they were built from.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg

from pipelines.engine.config import Config
from pipelines.engine.state import StateStore

#: the resource keys, which are also the names of the parameters that take them
STATE_KEY = "state_database"
WEBHOOK_KEY = "alerts_webhook"


class StateDatabase(dg.ConfigurableResource):
    """The ledger: items' states, cursors and runs (SQLite or PostgreSQL)."""

    url: str | None = None

    @contextmanager
    def open(self, config: Config) -> Iterator[StateStore]:
        """The state store, closed when done: at ``url`` (the variable ``state_url_env``
        names), else the file's ``state_url``, else the default SQLite file."""
        store = StateStore(self.url or config.state_url or StateStore.default_url())
        try:
            yield store
        finally:
            store.close()


class AlertsWebhook(dg.ConfigurableResource):
    """Where alerts are posted besides the logs."""

    url: str | None = None

    def address(self, config: Config) -> str | None:
        """``url`` (the variable ``alerts.webhook_url_env`` names), else the file's
        ``alerts.webhook_url``; None: the logs only."""
        return self.url or config.alerts.webhook_url


def _var(name: str | None) -> dg.EnvVar | None:
    return dg.EnvVar(name) if name else None


def shared_resources(config: Config) -> dict[str, dg.ConfigurableResource]:
    """The resources every source's assets and the sensors take, by key."""
    return {STATE_KEY: StateDatabase(url=_var(config.state_url_env)),
            WEBHOOK_KEY: AlertsWebhook(url=_var(config.alerts.webhook_url_env))}

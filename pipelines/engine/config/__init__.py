"""``shops.yaml``: where data comes from, where it goes, and how — validated by pydantic.

Secrets are never in the file: it names the environment variables that hold them. A bad
file gets one message per problem, each naming the field and how to fix it.

``models.py`` holds the models, ``checks.py`` and ``cron.py`` the checks of single values
they share, ``errors.py`` the messages, ``load.py`` the reading of the file.
"""

from __future__ import annotations

from pipelines.engine.config.errors import ConfigError, describe, shown
from pipelines.engine.config.load import (
    CONFIG_ENV,
    DEFAULT_CONFIG,
    config_path,
    load_config,
    parse_config,
    read_config,
)
from pipelines.engine.config.models import (
    Alerts,
    Config,
    Connection,
    DataSourceRef,
    Destination,
    Execution,
    Reconciliation,
    ResourceMapping,
    Source,
    Tuning,
)

__all__ = [
    "CONFIG_ENV",
    "DEFAULT_CONFIG",
    "Alerts",
    "Config",
    "ConfigError",
    "Connection",
    "DataSourceRef",
    "Destination",
    "Execution",
    "Reconciliation",
    "ResourceMapping",
    "Source",
    "Tuning",
    "config_path",
    "describe",
    "load_config",
    "parse_config",
    "read_config",
    "shown",
]

"""``shopsync check-config``."""

from __future__ import annotations

import asyncio
import sys

import click

from pipelines.cli.common import config_option, friendly_errors, load


@click.command("check-config")
@config_option
@friendly_errors
def check_config(config_path: str | None) -> None:
    """Validate the configuration and try every connection's credentials."""
    import os

    from pipelines.engine.config import ConfigError
    from pipelines.engine.runner import open_client, open_connector, selected_resources

    config = load(config_path)
    problems: list[str] = []

    async def probe() -> None:
        try:
            async with open_client(config, os.environ) as client:
                await client.list_data_sources()
            click.echo(f"ok    destination {config.destination.base_url}")
        # any failure (address, key, network, the API's answer) is reported as one line,
        # and the sources are still probed
        except Exception as exc:  # noqa: BLE001
            problems.append(f"destination {config.destination.base_url}: {exc}")
        for source in config.sources:
            try:
                selected_resources(source)
                connector = open_connector(source, os.environ)
                try:
                    await connector.check()
                finally:
                    await connector.aclose()
                click.echo(f"ok    source {source.name} ({source.platform} {source.connection.url})")
            except ConfigError as exc:
                problems.extend(f"source {source.name}: {p}" for p in exc.problems)
            # any other failure (connection, credentials, the platform's answer) is reported
            # as one line, and the remaining sources are still probed
            except Exception as exc:  # noqa: BLE001
                problems.append(f"source {source.name}: {exc}")

    asyncio.run(probe())
    for problem in problems:
        click.echo(f"FAIL  {problem}", err=True)
    if problems:
        sys.exit(1)

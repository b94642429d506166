"""The ``shopsync`` command line: one group, a module per family of commands."""

from __future__ import annotations

import click

from pipelines.cli.check import check_config
from pipelines.cli.demo import demo, dev
from pipelines.cli.reconcile import reconcile
from pipelines.cli.rejections import rejections
from pipelines.cli.resync import resync
from pipelines.cli.servers import fake_shop, sandbox
from pipelines.cli.status import status
from pipelines.cli.sync import backfill, sync
from pipelines.cli.trace import trace


@click.group()
@click.version_option(package_name="shopsync")
def main() -> None:
    """Sync shop platforms' data into the Marketing Automation Data API."""


for command in (demo, dev, sync, backfill, resync, reconcile, rejections, trace, status,
                check_config, sandbox, fake_shop):
    main.add_command(command)

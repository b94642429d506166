"""The demo: a whole sync on embedded defaults, with nothing to set up.

``shopsync demo`` starts the Marketing API sandbox and a fake WooCommerce shop on free local
ports, writes a configuration for them, runs the full sync through Dagster, waits until the
sandbox shows what was accepted, and reports per resource. ``shopsync dev`` starts the same
two servers (on 8787 and 8788 unless told otherwise) and serves the Dagster UI on the demo
configuration.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipelines.demo_specs import demo_spec
from pipelines.engine.config import Config, parse_config
from sandbox import process
from sandbox.marketing.settings import DEFAULT_KEY

if TYPE_CHECKING:
    from dagster import MetadataValue

DEMO_SOURCE = "demo_shop"
API_KEY_ENV = "SHOPSYNC_DEMO_API_KEY"
SANDBOX_PORT = 8787
SHOP_PORT = 8788
DEFAULT_PLATFORM = "woocommerce"
#: set by ``shopsync dev`` for the code location it serves: where its servers and ledger are
SANDBOX_URL_ENV = "SHOPSYNC_DEMO_SANDBOX_URL"
SHOP_URL_ENV = "SHOPSYNC_DEMO_SHOP_URL"
STATE_URL_ENV = "SHOPSYNC_DEMO_STATE_URL"
#: "off": the demo's schedules and sensors start stopped (``shopsync dev --no-automation``)
AUTOMATION_ENV = "SHOPSYNC_DEMO_AUTOMATION"


def demo_config(
    base_url: str | None = None,
    shop_url: str | None = None,
    state_url: str | None = None,
    platform_name: str = DEFAULT_PLATFORM,
) -> Config:
    """The demo's one source. What is not given comes from the variables ``shopsync dev``
    sets (its servers may be on other ports), else the default ports and ledger."""
    base_url = base_url or os.environ.get(SANDBOX_URL_ENV) or f"http://127.0.0.1:{SANDBOX_PORT}/v1"
    shop_url = shop_url or os.environ.get(SHOP_URL_ENV) or f"http://127.0.0.1:{SHOP_PORT}"
    state_url = state_url or os.environ.get(STATE_URL_ENV)
    return parse_config({
        "destination": {"base_url": base_url, "api_key_env": API_KEY_ENV},
        "state_url": state_url,
        "automation": os.environ.get(AUTOMATION_ENV) != "off",
        "sources": [{
            "name": DEMO_SOURCE,
            "platform": platform_name,
            "connection": demo_spec(platform_name).connection(shop_url),
            "data_source": {"label": f"{platform_name} demo shop"},
            "lookback_seconds": 0,
        }],
    })


def demo_env(platform_name: str = DEFAULT_PLATFORM) -> dict[str, str]:
    return {API_KEY_ENV: DEFAULT_KEY, **demo_spec(platform_name).env}


@dataclass
class Server:
    process: subprocess.Popen[str]
    url: str

    def stop(self) -> None:
        process.stop(self.process)


def start_servers(*commands: tuple[list[str], str]) -> list[Server]:
    """Start each ``shopsync ARGS`` at once and read its address (the first group of its
    ``PATTERN``) from its first line: each pays an interpreter and its imports, which need not
    wait for the others. If one does not start, all are stopped."""
    launched = [subprocess.Popen([sys.executable, "-m", "pipelines.cli", *args],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                for args, _ in commands]
    try:
        return [Server(started, process.read_banner(started, pattern,
                                                    f"`shopsync {' '.join(args)}`"))
                for started, (args, pattern) in zip(launched, commands, strict=True)]
    except BaseException:
        for started in launched:
            process.stop(started)
        raise


@contextmanager
def demo_servers(
    orders: int = 200, customers: int = 50, products: int = 30, sandbox_port: int = 0,
    shop_port: int = 0, visibility_delay: float = 0.5, platform_name: str = DEFAULT_PLATFORM,
    sandbox_args: list[str] | None = None,
) -> Iterator[tuple[Server, Server]]:
    """The sandbox and a fake shop of ``platform_name``, started at once, stopped on the way
    out."""
    spec = demo_spec(platform_name)
    sandbox, shop = start_servers(
        (["sandbox", "--port", str(sandbox_port), "--visibility-delay", str(visibility_delay),
          *(sandbox_args or [])], r"Marketing API at (http://\S+/v1)"),
        ([*spec.command, "--port", str(shop_port), *spec.sizes(orders, customers, products)],
         spec.banner),
    )
    try:
        yield sandbox, shop
    finally:
        shop.stop()
        sandbox.stop()


RESOURCE_COLUMNS = ("extracted", "pushed", "accepted", "rejected", "quarantined", "visible")


def confirm_visible(config: Config, env: dict[str, str], state_url: str,
                    timeout: float = 30.0) -> tuple[dict[str, int], dict[str, Any]]:
    """Reconcile until nothing accepted is still unconfirmed (or the time runs out): the
    ledger's visible counts per resource, and the last reconciliation report."""
    import asyncio

    from pipelines.engine.runner import SourceRunner
    from pipelines.engine.state import ItemStatus, StateStore

    state = StateStore(state_url)
    try:
        runner = SourceRunner(config, config.sources[0], state, env)
        deadline = time.monotonic() + timeout
        while True:
            report = asyncio.run(runner.reconcile(deadline_seconds=timeout))
            counts = state.counts(DEMO_SOURCE)
            waiting = sum(c.get(ItemStatus.ACCEPTED.value, 0) for c in counts.values())
            if not waiting or time.monotonic() > deadline:
                visible = {r: c.get(ItemStatus.VISIBLE.value, 0) for r, c in counts.items()}
                return visible, report.as_dict()
            time.sleep(0.25)
    finally:
        state.close()


def held_back(state_url: str) -> list[dict[str, Any]]:
    """Quarantined and rejected items grouped by reason: what a person has to look at."""
    from pipelines.engine.state import ItemStatus, StateStore

    state = StateStore(state_url)
    try:
        groups: dict[tuple[str, str, str], list[str]] = {}
        for resource in state.counts(DEMO_SOURCE):
            entries = state.entries(DEMO_SOURCE, resource,
                                    {ItemStatus.QUARANTINED, ItemStatus.REJECTED})
            for entry in entries:
                for reason in entry.errors or ["(no reason given)"]:
                    key = (resource, entry.status.value, reason)
                    groups.setdefault(key, []).append(entry.source_record_id or entry.key)
        return [
            {"resource": r, "status": s, "reason": why, "count": len(ids),
             "records": sorted(set(ids))[:5]}
            for (r, s, why), ids in sorted(groups.items())
        ]
    finally:
        state.close()


def _count(metadata: MetadataValue) -> int:
    """A count the sync assets put in their metadata (``MetadataValue.int``)."""
    value = metadata.value
    if not isinstance(value, int | float | str):
        raise TypeError(f"int() argument must be a string or a number, not {value!r}")
    return int(value)


def run_demo(orders: int = 200, customers: int = 50, products: int = 30,
             platform_name: str = DEFAULT_PLATFORM) -> dict[str, Any]:
    """Run the whole demo; return the per-resource table (and where things ran)."""
    import dagster as dg

    from pipelines.definitions import build_definitions

    with tempfile.TemporaryDirectory(prefix="shopsync-demo-") as tmp, demo_servers(
        orders, customers, products, platform_name=platform_name
    ) as (sandbox, shop):
        config = demo_config(sandbox.url, shop.url, f"sqlite:///{Path(tmp) / 'state.db'}",
                             platform_name)
        env = demo_env(platform_name)
        os.environ.update(env)
        defs = build_definitions(config)
        started = time.perf_counter()
        # build_definitions makes only AssetsDefinitions; the report asset runs in
        # confirm_visible
        synced = [a for a in defs.assets or [] if isinstance(a, dg.AssetsDefinition)
                  and not any(k.path[-1] == "reconciliation" for k in a.keys)]
        result = dg.materialize(
            synced,
            resources=dict(defs.resources or {}),
            instance=dg.DagsterInstance.ephemeral(),
            raise_on_error=False,
            run_config={"loggers": {"console": {"config": {"log_level": "WARNING"}}}},
        )
        seconds = time.perf_counter() - started
        table: dict[str, dict[str, int]] = {}
        for event in result.get_asset_materialization_events():
            materialization = event.materialization
            resource = materialization.asset_key.path[-1]
            table[resource] = {
                column: _count(materialization.metadata[f"run: {column}"])
                for column in RESOURCE_COLUMNS if f"run: {column}" in materialization.metadata
            }
        state_url = config.state_url or ""
        visible, reconciliation = confirm_visible(config, env, state_url)
        for resource, row in table.items():
            row["visible"] = visible.get(resource, 0)
        return {
            "success": result.success,
            "seconds": round(seconds, 2),
            "held_back": held_back(state_url),
            "visibility_lag_seconds": {r: v["visibility_lag_seconds"]
                                       for r, v in reconciliation.items()},
            "platform": platform_name,
            "sandbox": sandbox.url,
            "shop": shop.url,
            "resources": table,
        }


def format_table(summary: dict[str, Any]) -> str:
    rows = summary["resources"]
    width = max([len("resource"), *(len(r) for r in rows)])
    header = "resource".ljust(width) + "".join(c.rjust(12) for c in RESOURCE_COLUMNS)
    lines = [header, "-" * len(header)]
    for resource, row in rows.items():
        lines.append(resource.ljust(width)
                     + "".join(str(row.get(c, 0)).rjust(12) for c in RESOURCE_COLUMNS))
    if summary.get("held_back"):
        lines += ["", "held back (quarantined: never sent; rejected: refused by the API):"]
        for group in summary["held_back"]:
            lines.append(f"  {group['resource']:<{width}} {group['status']:<11} x{group['count']}"
                         f"  {group['reason']}  (records {', '.join(group['records'])})")
    return "\n".join(lines)

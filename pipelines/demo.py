"""The demo: a whole sync on embedded defaults, with nothing to set up.

``shopsync demo`` starts the Marketing API sandbox and a fake WooCommerce shop on free local
ports, writes a configuration for them, runs the full sync through Dagster, waits until the
sandbox shows what was accepted, and reports per resource. ``shopsync dev`` starts the same
two servers on fixed ports and opens the Dagster UI on the demo configuration.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sandbox.marketing.settings import DEFAULT_KEY
from pipelines.engine.config import Config, parse_config
from pipelines.engine.platforms import DemoSpec, platform

DEMO_SOURCE = "demo_shop"
API_KEY_ENV = "SHOPSYNC_DEMO_API_KEY"
SANDBOX_PORT = 8787
SHOP_PORT = 8788
DEFAULT_PLATFORM = "woocommerce"


def _demo(platform_name: str) -> DemoSpec:
    spec = platform(platform_name).demo
    if spec is None:
        raise ValueError(f"the {platform_name} platform has no demo")
    return spec


def demo_config(
    base_url: str = f"http://127.0.0.1:{SANDBOX_PORT}/v1",
    shop_url: str = f"http://127.0.0.1:{SHOP_PORT}",
    state_url: str | None = None,
    platform_name: str = DEFAULT_PLATFORM,
) -> Config:
    return parse_config({
        "destination": {"base_url": base_url, "api_key_env": API_KEY_ENV},
        "state_url": state_url,
        "sources": [{
            "name": DEMO_SOURCE,
            "platform": platform_name,
            "connection": _demo(platform_name).connection(shop_url),
            "data_source": {"label": f"{platform_name} demo shop"},
            "lookback_seconds": 0,
        }],
    })


def demo_env(platform_name: str = DEFAULT_PLATFORM) -> dict[str, str]:
    return {API_KEY_ENV: DEFAULT_KEY, **_demo(platform_name).env}


@dataclass
class Server:
    process: subprocess.Popen[str]
    url: str

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def start_server(args: list[str], pattern: str) -> Server:
    """Start ``shopsync ARGS`` and read its address from its first line."""
    process = subprocess.Popen(
        [sys.executable, "-m", "pipelines.cli", *args],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    assert process.stdout is not None
    first = process.stdout.readline()
    match = re.search(pattern, first)
    if not match:
        process.kill()
        raise RuntimeError(f"could not start `shopsync {' '.join(args)}`: {first.strip()}")
    return Server(process, match.group(1))


@contextmanager
def demo_servers(
    orders: int = 200, customers: int = 50, products: int = 30, sandbox_port: int = 0,
    shop_port: int = 0, visibility_delay: float = 0.5, platform_name: str = DEFAULT_PLATFORM,
) -> Iterator[tuple[Server, Server]]:
    """The sandbox and a fake shop of ``platform_name``, stopped on the way out."""
    spec = _demo(platform_name)
    sandbox = start_server(
        ["sandbox", "--port", str(sandbox_port), "--visibility-delay", str(visibility_delay)],
        r"Marketing API at (http://\S+/v1)",
    )
    try:
        shop = start_server(
            [*spec.command, "--port", str(shop_port), *spec.sizes(orders, customers, products)],
            spec.banner,
        )
    except BaseException:
        sandbox.stop()
        raise
    try:
        yield sandbox, shop
    finally:
        shop.stop()
        sandbox.stop()


RESOURCE_COLUMNS = ("extracted", "pushed", "accepted", "rejected", "quarantined", "visible")


def visible_counts(sandbox_url: str, key: str, expected: dict[str, int],
                   timeout: float = 30.0) -> dict[str, int]:
    """Items of each resource the sandbox holds (readable), polled until its queue of writes
    waiting for the visibility delay is empty and the counts reach what was accepted."""
    import httpx

    root = sandbox_url.removesuffix("/v1")
    deadline = time.monotonic() + timeout
    while True:
        stats = httpx.get(f"{root}/_sandbox/stats", headers={"spm-api-key": key}).json()["data"]
        seen = {resource: int(stats["stored"].get(resource, 0)) for resource in expected}
        settled = stats["pending"] == 0 and all(seen[r] >= n for r, n in expected.items())
        if settled or time.monotonic() > deadline:
            return seen
        time.sleep(0.2)


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
        today = datetime.now(UTC).strftime("%Y-%m-%d")
        started = time.perf_counter()
        result = dg.materialize(
            list(defs.assets or []),
            resources=dict(defs.resources or {}),
            partition_key=today,
            instance=dg.DagsterInstance.ephemeral(),
            raise_on_error=False,
            run_config={"loggers": {"console": {"config": {"log_level": "WARNING"}}}},
        )
        seconds = time.perf_counter() - started
        table: dict[str, dict[str, int]] = {}
        for event in result.get_asset_materialization_events():
            materialization = event.event_specific_data.materialization  # type: ignore[union-attr]
            resource = materialization.asset_key.path[-1]
            table[resource] = {
                column: int(materialization.metadata[column].value)  # type: ignore[arg-type]
                for column in RESOURCE_COLUMNS if column in materialization.metadata
            }
        expected = {r: row.get("accepted", 0) for r, row in table.items()}
        visible = visible_counts(sandbox.url, env[API_KEY_ENV], expected)
        for resource, row in table.items():
            row["visible"] = visible.get(resource, 0)
        return {
            "success": result.success,
            "seconds": round(seconds, 2),
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
    return "\n".join(lines)

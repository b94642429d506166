"""``shopsync demo`` and ``shopsync dev``: the whole thing on embedded defaults."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType

import click
import httpx

from pipelines.demo import SANDBOX_PORT, SHOP_PORT
from pipelines.demo_specs import demo_platforms

#: the code location's name, as in ``workspace.yaml``: runs and links name it
LOCATION = "shopsync"
DEFINITIONS_MODULE = "pipelines.definitions"
UI_PORT = 3000
#: Dagster stops its webserver and daemon within 60 s each after Ctrl-C; past this, we kill
STOP_SECONDS = 150.0


platform_option = click.option(
    "--platform", "platform_name", default="woocommerce", show_default=True,
    type=click.Choice(demo_platforms()), help="Which fake shop platform to sync from.",
)


@click.command()
@platform_option
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--orders", default=200, show_default=True, help="Orders in the fake shop.")
@click.option("--customers", default=50, show_default=True, help="Customers in the fake shop.")
@click.option("--products", default=30, show_default=True, help="Products in the fake shop.")
def demo(platform_name: str, as_json: bool, orders: int, customers: int, products: int) -> None:
    """Sync a fake shop into the sandbox through Dagster, and report."""
    from pipelines.demo import format_table, run_demo

    if not as_json:
        click.echo(f"starting the sandbox and a fake {platform_name} shop; syncing through"
                   " Dagster…", err=True)
    summary = run_demo(orders=orders, customers=customers, products=products,
                       platform_name=platform_name)
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    else:
        click.echo(format_table(summary))
        click.echo(f"\n{'synced' if summary['success'] else 'FAILED'} in {summary['seconds']}s;"
                   " 'visible': confirmed by reading the items back from the API (reconciliation).")
    if not summary["success"]:
        sys.exit(1)


def dev_home(platform_name: str, shopsync_home: Path | None = None) -> Path:
    """``$SHOPSYNC_HOME/dev/PLATFORM`` (``~/.shopsync/dev/…``): the demo's ledger, the
    sandbox's data and Dagster's instance, kept across restarts, apart from a real ledger and
    from the other platforms' demos (each its own shop behind the same source name).
    ``shopsync_home``: in place of ``$SHOPSYNC_HOME`` (a benchmark reading a dev's instance)."""
    home = shopsync_home or Path(os.environ.get("SHOPSYNC_HOME") or "~/.shopsync")
    return home.expanduser().absolute() / "dev" / platform_name


def dev_instance_home(platform_name: str, shopsync_home: Path | None = None) -> Path:
    """Dagster's instance of ``shopsync dev`` (its ``DAGSTER_HOME``), in ``dev_home``."""
    return dev_home(platform_name, shopsync_home) / "dagster"


def write_instance(dagster_home: Path) -> Path:
    """Write Dagster's ``dagster.yaml`` in ``dagster_home`` (its ``DAGSTER_HOME``: the run
    history, logs and artifacts go there too) and a workspace file naming the location as
    ``workspace.yaml`` does; return the workspace file."""
    import yaml

    dagster_home.mkdir(parents=True, exist_ok=True)
    instance = {
        "telemetry": {"enabled": False},
        "nux": {"enabled": False},  # no newsletter sign-up over the first page
        # a run launched from the UI starts at once: no queue for one person's demo (the
        # production deployment queues runs; op pools are enforced by the run either way)
        "run_coordinator": {"module": "dagster._core.run_coordinator",
                            "class": "DefaultRunCoordinator"},
        "storage": {"sqlite": {"base_dir": str(dagster_home / "storage")}},
    }
    workspace = {"load_from": [{"python_module": {"module_name": DEFINITIONS_MODULE,
                                                  "location_name": LOCATION}}]}
    header = "# written by `shopsync dev` at each start\n"
    (dagster_home / "dagster.yaml").write_text(header + yaml.safe_dump(instance))
    path = dagster_home / "workspace.yaml"
    path.write_text(header + yaml.safe_dump(workspace))
    return path


#: where the kernel picks the local ports of outgoing connections (Linux's default range)
EPHEMERAL = (32768, 60999)


def ephemeral_ports() -> tuple[int, int]:
    """The range the kernel takes outgoing connections' local ports from."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return EPHEMERAL


def free_port(host: str) -> int:
    """A port nothing listens on, for a server another process binds later (the Dagster
    UI). Not one the kernel would pick (``bind(0)``): in the seconds before that process
    binds it, any outgoing connection on the machine may take it as its own local port
    (the UI then failed with "address already in use"). Chosen below the ephemeral range,
    at random, so that two starts at once seldom pick the same."""
    low, _ = ephemeral_ports()
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    candidates = random.sample(range(max(1024, low - 12_000), low), 200) if low > 2048 else []
    for port in candidates:
        with socket.socket(family) as probe:
            try:
                probe.bind((host, port))
            except OSError:
                continue
            return port
    with socket.socket(family) as probe:  # no range below it: the kernel's choice
        probe.bind((host, 0))
        chosen: int = probe.getsockname()[1]
        return chosen


def wait_serving(url: str, dagster: subprocess.Popen[bytes], timeout: float = 300) -> None:
    """Wait until the UI answers; fail when Dagster exits first or after ``timeout``."""
    deadline = time.monotonic() + timeout
    while dagster.poll() is None:
        try:
            if httpx.get(f"{url}/server_info", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise click.ClickException(f"the Dagster UI did not answer at {url} in {timeout:.0f} s")
        time.sleep(0.2)
    raise click.ClickException(f"Dagster exited ({dagster.returncode}) before serving: see above")


def stop_dagster(dagster: subprocess.Popen[bytes]) -> None:
    """Ctrl-C for Dagster (it stops its webserver, daemon and code server), then whatever of
    its session is left; killed when it takes too long or on a second Ctrl-C."""
    try:
        if dagster.poll() is None:
            dagster.send_signal(signal.SIGINT)
            dagster.wait(timeout=STOP_SECONDS)
        os.killpg(dagster.pid, signal.SIGTERM)  # a run still going: its worker
    except ProcessLookupError:
        pass
    except (subprocess.TimeoutExpired, KeyboardInterrupt):
        click.echo("killing Dagster", err=True)
        os.killpg(dagster.pid, signal.SIGKILL)
        dagster.wait()


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@click.command()
@platform_option
@click.option("--orders", default=200, show_default=True, help="Orders in the fake shop.")
@click.option("--port", default=UI_PORT, show_default=True, type=click.IntRange(0, 65535),
              help="Port of the Dagster UI; 0: a free one.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address the Dagster UI listens on (the servers stay on 127.0.0.1).")
@click.option("--sandbox-port", default=SANDBOX_PORT, show_default=True,
              type=click.IntRange(0, 65535),
              help="Port of the Marketing API sandbox; 0: a free one.")
@click.option("--shop-port", default=SHOP_PORT, show_default=True, type=click.IntRange(0, 65535),
              help="Port of the fake shop; 0: a free one.")
@click.option("--automation/--no-automation", default=True, show_default=True,
              help="Whether the demo's schedules and sensors run from the start (off: only the"
              " runs launched from the UI).")
def dev(platform_name: str, orders: int, port: int, host: str, sandbox_port: int,
        shop_port: int, automation: bool) -> None:
    """Start the sandbox and a fake shop, then the Dagster UI (`dg dev`) on the demo.

    Dagster's instance, the ledger and the sandbox's data live in
    $SHOPSYNC_HOME/dev/PLATFORM (default ~/.shopsync/dev/woocommerce) and are kept across
    restarts. Ctrl-C stops everything.
    """
    from pipelines.definitions import DEMO_ENV
    from pipelines.demo import (
        AUTOMATION_ENV,
        SANDBOX_URL_ENV,
        SHOP_URL_ENV,
        STATE_URL_ENV,
        demo_env,
        demo_servers,
    )

    home = dev_home(platform_name)
    instance_home = dev_instance_home(platform_name)
    workspace = write_instance(instance_home)
    local = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    ui_port = port or free_port(local)
    url = f"http://{local if ':' not in local else f'[{local}]'}:{ui_port}"
    # Ctrl-C (and a supervisor's SIGTERM) stop everything, even where the shell started us
    # with SIGINT ignored (a background job of a script): Dagster inherits the handling
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        with demo_servers(orders=orders, sandbox_port=sandbox_port, shop_port=shop_port,
                          platform_name=platform_name,
                          sandbox_args=["--data", str(home / "sandbox.db")]) as (sandbox, shop):
            env = {**os.environ, **demo_env(platform_name), DEMO_ENV: platform_name,
                   SANDBOX_URL_ENV: sandbox.url, SHOP_URL_ENV: shop.url,
                   STATE_URL_ENV: f"sqlite:///{home / 'state.db'}",
                   AUTOMATION_ENV: "on" if automation else "off",
                   "DAGSTER_HOME": str(instance_home)}
            env.pop("SHOPSYNC_CONFIG", None)
            click.echo(f"sandbox {sandbox.url}, fake {platform_name} shop {shop.url};"
                       f" starting Dagster in {instance_home}", err=True)
            # its own session: Ctrl-C reaches it once, from us, and it stops in its own order
            dagster = subprocess.Popen(
                [sys.executable, "-m", "dagster_dg_cli.cli", "dev", "-w", str(workspace),
                 "--host", host, "--port", str(ui_port)],
                env=env, start_new_session=True,
            )
            try:
                wait_serving(url, dagster)
                click.echo(f"Dagster UI at {url} (Ctrl-C stops everything)")
                code = dagster.wait()
                if code:
                    raise click.ClickException(f"Dagster exited ({code}): see above")
            finally:
                stop_dagster(dagster)
    except KeyboardInterrupt:
        click.echo("stopped", err=True)

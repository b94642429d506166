"""Running the sandbox with uvicorn, and telling the person at the terminal how to use it."""

from __future__ import annotations

import socket
import sys

import click
import uvicorn

from sandbox.marketing.app import OPENAPI_PATH, create_app
from sandbox.marketing.settings import DEFAULT_KEY, DEFAULT_KPI_KEY, SandboxSettings


def banner(settings: SandboxSettings, port: int) -> str:
    base = f"http://{settings.host}:{port}"
    lines = [f"shopsync sandbox: Marketing API at {base}/v1 (OpenAPI at {base}{OPENAPI_PATH})"]
    default = [s.key for s in settings.shops] == [DEFAULT_KEY]
    if default:
        lines.append(f"  spm-api-key: {DEFAULT_KEY}   (custom KPI endpoints: {DEFAULT_KPI_KEY})")
    else:
        lines.append(f"  shops: {len(settings.shops)} (keys as given with --key)")
    if settings.accept_any_key:
        lines.append("  any well-formed key opens a new empty shop")
    lines.append(
        f"  visibility delay {settings.visibility_delay}s, fault rate {settings.fault_rate},"
        f" drop rate {settings.drop_rate}, latency {settings.latency_ms} ms,"
        f" state {'in ' + str(settings.data) if settings.data else 'in memory'}"
    )
    lines.append(f'  try: curl -H "spm-api-key: <key>" {base}/v1/data-sources')
    return "\n".join(lines)


def serve(settings: SandboxSettings) -> None:
    """Bind first (so ``--port 0`` picks a free port we can print), then serve until stopped."""
    family = socket.AF_INET6 if ":" in settings.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((settings.host, settings.port))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        create_app(settings), log_level="warning", access_log=False, timeout_graceful_shutdown=5
    )
    click.echo(banner(settings, port))
    sys.stdout.flush()
    uvicorn.Server(config).run(sockets=[sock])

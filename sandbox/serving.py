"""Serving a local server of the sandbox: bind first, so that ``--port 0`` picks a free port
that the banner can name, print one banner line (tests and the demo read the address from
it), then serve with uvicorn until stopped."""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable

import click
import uvicorn
from starlette.types import ASGIApp


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    return sock


def serve_app(app: Callable[[], ASGIApp], host: str, port: int, banner: Callable[[int], str]) -> None:
    """Bind, build the app (which may take a while: the port is already held), print
    ``banner(bound_port)``, serve."""
    sock = bind(host, port)
    bound = sock.getsockname()[1]
    config = uvicorn.Config(app(), log_level="warning", access_log=False,
                            timeout_graceful_shutdown=5)
    click.echo(banner(bound))
    sys.stdout.flush()
    uvicorn.Server(config).run(sockets=[sock])

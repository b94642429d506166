"""Serving a local server of the sandbox: bind first, so that ``--port 0`` picks a free port
that the banner can name, print one banner line (tests and the demo read the address from
it), then serve with uvicorn until stopped.

Or, where the process is not the point (most tests), serve the same app with the same
uvicorn options in a thread of the calling process (``serve_in_thread``): real HTTP on a
real socket, without a process's start-up."""

from __future__ import annotations

import errno
import socket
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import click
import uvicorn
from starlette.types import ASGIApp


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def cannot_listen(host: str, port: int, exc: OSError) -> str:
    """One line for a server that cannot listen, with the option that changes it."""
    if exc.errno == errno.EADDRINUSE:
        return (f"port {port} on {host} is already in use: pick another with --port"
                " (0: any free port), or stop what listens there")
    return f"cannot listen on {host}:{port}: {exc.strerror or exc} — check --host and --port"


def serve_app(app: Callable[[], ASGIApp], host: str, port: int, banner: Callable[[int], str]) -> None:
    """Bind, build the app (which may take a while: the port is already held), print
    ``banner(bound_port)``, serve. A port that cannot be had ends the command with one line."""
    try:
        sock = bind(host, port)
    except OSError as exc:
        raise click.ClickException(cannot_listen(host, port, exc)) from None
    bound = sock.getsockname()[1]
    config = _config(app())
    click.echo(banner(bound))
    sys.stdout.flush()
    uvicorn.Server(config).run(sockets=[sock])


#: how long a server keeps an idle connection open (uvicorn's default: 5 s). A client must
#: always give up an idle connection before the server does: otherwise, when both wait about
#: as long, a request the client sends on its idle connection can cross the server closing
#: it, and the client sees the connection reset (httpx: ``ReadError``) with no answer. httpx,
#: which every client here uses, keeps one 5 s; nginx keeps them 75 s by default.
KEEP_ALIVE_SECONDS = 75


def _config(app: ASGIApp, **options: Any) -> uvicorn.Config:
    """How every server of the sandbox runs, in its own process or in a thread."""
    return uvicorn.Config(app, log_level="warning", access_log=False,
                          timeout_keep_alive=KEEP_ALIVE_SECONDS,
                          timeout_graceful_shutdown=5, **options)


class Served:
    """An app served by uvicorn in a daemon thread of this process (``serve_in_thread``)."""

    def __init__(self, server: uvicorn.Server, thread: threading.Thread, port: int) -> None:
        self.server = server
        self.thread = thread
        #: the port it listens on
        self.port = port

    def stop(self, timeout: float = 10) -> None:
        """Stop accepting, finish the answers under way (as on SIGTERM), wait for the thread."""
        self.server.should_exit = True
        self.thread.join(timeout)


def serve_in_thread(app: Callable[[], ASGIApp], host: str, port: int = 0,
                    timeout: float = 30) -> Served:
    """Bind, build the app, serve it in a daemon thread; return once it listens.

    uvicorn installs no signal handlers off the main thread. Its loggers keep no handlers of
    their own here (``log_config=None``): what it logs goes to this process's logging (in a
    test, the test's captured log), not to a stream fixed when the server started."""
    sock = bind(host, port)
    try:
        server = uvicorn.Server(_config(app(), log_config=None))
    except BaseException:
        sock.close()
        raise
    failed: list[BaseException] = []

    def run() -> None:
        try:
            server.run(sockets=[sock])
        except BaseException as exc:  # SystemExit when the app's startup fails
            failed.append(exc)
        finally:
            sock.close()

    bound = sock.getsockname()[1]
    thread = threading.Thread(target=run, name=f"uvicorn {host}:{bound}", daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError(f"the server on port {bound} did not start: {failed}")
        if time.monotonic() > deadline:
            Served(server, thread, bound).stop()
            raise RuntimeError(f"the server on port {bound} did not start within {timeout} s")
        time.sleep(0.002)
    return Served(server, thread, bound)

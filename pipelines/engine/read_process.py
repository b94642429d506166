"""A run's streams read and mapped in a process of its own, beside the sync
(``tuning.read_process``).

One Python process runs one core at a time, and a sync's reading and mapping are about
half of its CPU: in a second process they run beside the checking, pushing and recording
of the pages before. The process opens its own connector (with the shop's shared budget,
when the source sets one) and maps each page with the same ``RecordMapper`` as a run that
maps in its own process; it is started at the run's first read, reads the run's streams one
after another as the run asks for them, and is sent away when the run ends. A page travels
pickled over a pipe (as plain tuples: ``mapped_pages.pack``), and the process works as far
ahead of the sync as the pipe has room (``_widen``): its memory stays a few pages.

What the connector raises in there is raised here, as it was when it can be pickled (else
as a ``SourceError`` with its message). A stream the run stops reading before its end (the
run failed, or stopped) stops the process; the next stream starts another.
"""

from __future__ import annotations

import asyncio
import fcntl
import multiprocessing
import pickle
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from connectors.sources.base import SourceError
from pipelines.engine.config import Source
from pipelines.engine.mapped_pages import Mapped, RecordMapper, mapping_context, pack, unpack
from pipelines.engine.mappings import mapping_for
from pipelines.engine.mappings.base import Overrides
from pipelines.engine.plan import ReadPlan

#: seconds a process that was asked to end is given before it is killed
STOP_SECONDS = 5.0


@dataclass(frozen=True)
class ReadSpec:
    """What the process needs to open the connector and map: the source, the secrets it
    reads (``env``), the data source items are attributed to, and the state database of
    the shop's shared budget (None: the source sets no budget)."""

    source: Source
    env: dict[str, str]
    id_data_source: int | None
    state_url: str | None


def can_start() -> bool:
    """Whether this process may start one: a daemonic process (a celery worker's pool)
    may not have children."""
    return not multiprocessing.current_process().daemon


class ReadProcess:
    """The process reading a run's streams, started when first asked for a stream."""

    def __init__(self, spec: ReadSpec) -> None:
        self.spec = spec
        self._process: BaseProcess | None = None
        #: where streams are asked for, and where their pages come
        self._ask: Connection | None = None
        self._pages: Connection | None = None

    def _start(self) -> tuple[Connection, Connection]:
        if self._process is None:
            context = multiprocessing.get_context("spawn")
            requests, ask = context.Pipe(duplex=False)
            pages, give = context.Pipe(duplex=False)
            _widen(give)
            self._process = context.Process(target=_serve, args=(requests, give, self.spec),
                                            name=f"shopsync-read-{self.spec.source.name}",
                                            daemon=True)
            self._process.start()
            requests.close()
            give.close()
            self._ask, self._pages = ask, pages
        assert self._ask is not None and self._pages is not None
        return self._ask, self._pages

    async def pages(self, stream: str, plan: ReadPlan) -> AsyncGenerator[list[Mapped], None]:
        """``stream``'s pages as ``plan`` reads them, mapped in the process."""
        ask, pages = self._start()
        ask.send((stream, plan))
        ended = False
        try:
            while True:
                kind, value = await asyncio.to_thread(_receive, pages)
                if kind == "page":
                    yield unpack(value)
                elif kind == "end":
                    ended = True
                    return
                else:
                    ended = True
                    raise value
        finally:
            if not ended:  # the run stopped reading it: so does the process
                self.stop(wait=False)

    def stop(self, *, wait: bool = True) -> None:
        """End the process: asked to when it is between streams (``wait``), else killed."""
        process, ask, pages = self._process, self._ask, self._pages
        self._process = self._ask = self._pages = None
        if process is None or ask is None or pages is None:
            return
        try:
            if wait:
                ask.send(None)
                process.join(STOP_SECONDS)
        except OSError:
            pass
        finally:
            if process.is_alive():
                process.kill()
                process.join(STOP_SECONDS)
            ask.close()
            pages.close()

    async def aclose(self) -> None:
        await asyncio.to_thread(self.stop)


def _receive(conn: Connection) -> tuple[str, Any]:
    try:
        message: tuple[str, Any] = conn.recv()
    except EOFError:
        return "error", SourceError("the process reading the source ended unexpectedly")
    return message


def _widen(pipe: Connection) -> None:
    """Give the pipe the room an unprivileged process may (``fs.pipe-max-size``, 1 MiB by
    default, against 64 KiB): the process reads that far ahead — a few pages — while the
    sync works, instead of waiting for each page to be taken."""
    try:
        size = int(Path("/proc/sys/fs/pipe-max-size").read_text())
        fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, size)
    except (OSError, ValueError, AttributeError):
        pass  # not Linux: the pipe's own room


def _serve(requests: Connection, conn: Connection, spec: ReadSpec) -> None:
    """The process: read and map each stream asked for, until asked to end."""
    asyncio.run(_serve_streams(requests, conn, spec))


async def _serve_streams(requests: Connection, conn: Connection, spec: ReadSpec) -> None:
    from pipelines.engine.budgets import shop_pacer
    from pipelines.engine.platforms import platform
    from pipelines.engine.state import StateStore

    source = spec.source
    state = StateStore(spec.state_url) if spec.state_url is not None else None
    try:
        connector = platform(source.platform).open_connector(
            source, spec.env, pacer=shop_pacer(state, source) if state is not None else None)
    except Exception as exc:  # noqa: BLE001 - said where the run reads
        await _fail_all(requests, conn, exc)
        return
    mapper = RecordMapper(mapping_for(source.platform), Overrides(source.mapping),
                          mapping_context(source, spec.id_data_source))
    try:
        while (request := requests.recv()) is not None:
            stream, plan = request
            try:
                async for records in connector.read(stream, after=plan.after,
                                                    until=plan.until):
                    conn.send(("page", pack(mapper.page(stream, plan, records,
                                                        connector.position))))
            except Exception as exc:  # noqa: BLE001 - raised where the run reads
                conn.send(("error", _portable(exc)))
                continue
            conn.send(("end", None))
    except (EOFError, BrokenPipeError):
        pass  # the run is gone
    finally:
        await connector.aclose()
        if state is not None:
            state.close()


async def _fail_all(requests: Connection, conn: Connection, exc: Exception) -> None:
    """Every stream asked for fails with ``exc`` (the connector could not be opened)."""
    try:
        while requests.recv() is not None:
            conn.send(("error", _portable(exc)))
    except (EOFError, BrokenPipeError):
        pass


def _portable(exc: Exception) -> Exception:
    """``exc`` if it survives pickling as itself, else a ``SourceError`` saying the same."""
    try:
        back = pickle.loads(pickle.dumps(exc))
    except Exception:  # noqa: BLE001 - any exception may refuse pickling
        back = None
    if type(back) is type(exc) and str(back) == str(exc):
        return exc
    return SourceError(str(exc) or type(exc).__name__)


def state_url_for(source: Source, url: str) -> str | None:
    """The state database's URL when the process needs it (the source sets a shop budget,
    shared through it), else None."""
    return url if source.connection.options.get("requests_per_second") else None

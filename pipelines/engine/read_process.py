"""A run's streams read and mapped in a process of its own, beside the sync
(``tuning.read_process``).

One Python process runs one core at a time, and a sync's reading and mapping are about
half of its CPU: in a second process they run beside the checking, pushing and recording
of the pages before. The process (``child.py``) opens its own connector (with the shop's
shared budget, when the source sets one) and maps each page with the same ``RecordMapper``
as a run that maps in its own process, the next page asked for as one is mapped
(``prefetched``). It is started at the run's first read, sends the run's streams one after
another as the run asks for them — the next asked for as soon as one is read (``then``) —
and is sent away when the run ends. Each request also names the stream after it, which the
process opens once the first page of the one it sends is out (``OpenedAhead``): that
stream's first page — a drop folder's waits for its whole file, parsed and put in key order
(4.3 of the 7.1 CPU s a read of 300 000 orders takes) — is read beside the stream
before, not after it. A page travels pickled over a pipe, as plain tuples
(``mapped_pages.pack``), and the process works as far ahead of the sync as the pipe has
room: its memory stays a few pages.

The process counts its own CPU by stage and hands the counts over with each stream's end
(``ReadCosts``): reading (its worker threads: a database's rows, a file's lines), mapping,
checking (``pack``: hashes, bounds, item models, quality rows, JSON) and sending (pickling
and writing), timed a page at a time. A run with a ``StageTimer`` adds them to it.

What the connector raises in there is raised here, as it was when it can be pickled (else
as a ``SourceError`` with its message). A stream the run stops reading before its end (the
run failed, or stopped) stops the process; the next stream starts another.
"""

from __future__ import annotations

import asyncio
import pickle
import resource
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from connectors.sources.base import Position, RawRecord, SourceConnector, SourceError
from pipelines.engine.child import Answers, Child, pipes
from pipelines.engine.collector import paced_for_sync
from pipelines.engine.config import Source
from pipelines.engine.mapped_pages import Mapped, RecordMapper, mapping_context, pack, unpack
from pipelines.engine.mappings import mapping_for
from pipelines.engine.mappings.base import Overrides
from pipelines.engine.plan import ReadPlan
from pipelines.engine.read_ahead import OpenedPages
from pipelines.engine.stages import StageTimer

#: what asks the process for a stream: its name, its plan, and the stream after it with its
#: plan (None: the last), opened while this one is sent (``OpenedAhead``)
Request = tuple[str, ReadPlan, tuple[str, ReadPlan] | None]
#: what the process's CPU was spent on, in seconds, by stage (``ReadCosts``)
READ_STAGES = ("read", "map", "check", "send", "other")


@dataclass(frozen=True)
class ReadSpec:
    """What the process needs to open the connector and map: the source, the secrets it
    reads (``env``), the data source items are attributed to, and the state database of
    the shop's shared budget (None: the source sets no budget)."""

    source: Source
    env: dict[str, str]
    id_data_source: int | None
    state_url: str | None


class ReadCosts:
    """The CPU one stream's read took in the process, by stage (``READ_STAGES``): its worker
    threads' and the connector's own processes' (``read``: a drop folder's large files are
    parsed apart), and the main thread's, timed a page at a time — mapping, checking,
    sending, and the rest (``other``: the event loop, the connector's own work there). The
    next stream's first read (``OpenedAhead``) counts with the stream it ran beside."""

    def __init__(self) -> None:
        self.seconds = dict.fromkeys(READ_STAGES, 0.0)
        self._process = time.process_time()
        self._thread = time.thread_time()
        self._children = _children_cpu()

    def page(self, mapped: float, checked: float, sent: float, ended: float) -> None:
        """One page's steps, as ``time.thread_time`` read at their starts and the end."""
        self.seconds["map"] += checked - mapped
        self.seconds["check"] += sent - checked
        self.seconds["send"] += ended - sent

    def ended(self) -> dict[str, float]:
        """The stream's costs: the worker threads' are the process's not spent here."""
        thread = time.thread_time() - self._thread
        own = self.seconds["map"] + self.seconds["check"] + self.seconds["send"]
        self.seconds["other"] = max(thread - own, 0.0)
        self.seconds["read"] = max(time.process_time() - self._process - thread, 0.0) \
            + _children_cpu() - self._children
        return self.seconds


def _children_cpu() -> float:
    """CPU seconds of this process's children that ended: a connector's own (a drop
    folder's large files parsed apart)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class ReadProcess:
    """The process reading a run's streams, started when first asked for a stream; a
    ``stages`` timer is given the process's CPU by stage as each stream ends."""

    def __init__(self, spec: ReadSpec, stages: StageTimer | None = None) -> None:
        self.spec = spec
        self.stages = stages
        #: the stream to read after a given one, with its plan (None: none): named with the
        #: request for the one before it (opened in the process beside it), and asked for
        #: as soon as that one is read
        self.then: Callable[[str], tuple[str, ReadPlan] | None] | None = None
        #: the stream asked for ahead of the run, and its plan
        self._asked: tuple[str, ReadPlan] | None = None
        self._child = Child(__name__)

    def _start(self) -> tuple[Connection, Answers]:
        """The process's pipes; a process started now is first given the spec."""
        fresh = not self._child.started
        ask, pages = self._child.start()
        if fresh:
            ask.send(self.spec)
        return ask, pages

    def _request(self, stream: str, plan: ReadPlan) -> Request:
        """What asks the process for ``stream``: with the stream after it, which the process
        opens while it still sends this one's pages."""
        return stream, plan, self.then(stream) if self.then is not None else None

    async def pages(self, stream: str, plan: ReadPlan) -> AsyncGenerator[list[Mapped], None]:
        """``stream``'s pages as ``plan`` reads them, mapped in the process."""
        asked, self._asked = self._asked, None
        if asked is not None and (asked[0] != stream or asked[1] is not plan):
            self.stop(wait=False)  # reading another stream than the run wants: a new one
            asked = None
        ask, pages = self._start()
        if asked is None:
            ask.send(self._request(stream, plan))
        ended = False
        try:
            while True:
                kind, value = await _receive(pages)
                if kind == "page":
                    yield unpack(value)
                elif kind == "end":
                    ended = True
                    if self.stages is not None and value is not None:
                        self.stages.add_read_process(value)
                    following = self.then(stream) if self.then is not None else None
                    if following is not None:
                        ask.send(self._request(*following))
                        self._asked = following
                    return
                else:
                    ended = True
                    raise value
        finally:
            if not ended:  # the run stopped reading it: so does the process
                self.stop(wait=False)

    def stop(self, *, wait: bool = True) -> None:
        """End the process: asked to when it is between streams (``wait``), else killed."""
        self._child.stop(wait=wait)

    async def aclose(self) -> None:
        await asyncio.to_thread(self.stop)


async def _receive(answers: Answers) -> tuple[str, Any]:
    try:
        message: tuple[str, Any] = await answers.receive()
    except EOFError:
        return "error", SourceError("the process reading the source ended unexpectedly")
    return message


def main() -> None:
    """The process (``python -m pipelines.engine.read_process``, ``child.py``): read and
    map each stream asked for, until asked to end."""
    requests, pages = pipes()
    spec: ReadSpec = requests.recv()
    asyncio.run(_serve_streams(requests, pages, spec))


async def _serve_streams(requests: Connection, conn: Connection, spec: ReadSpec) -> None:
    from pipelines.engine.budgets import shop_pacer
    from pipelines.engine.platforms import platform
    from pipelines.engine.state import StateStore

    source = spec.source
    state = None
    try:
        state = StateStore(spec.state_url) if spec.state_url is not None else None
        connector = platform(source.platform).open_connector(
            source, spec.env, pacer=shop_pacer(state, source) if state is not None else None)
    except Exception as exc:  # noqa: BLE001 - said where the run reads
        if state is not None:
            state.close()
        await _fail_all(requests, conn, exc)
        return
    mapper = RecordMapper(mapping_for(source.platform), Overrides(source.mapping),
                          mapping_context(source, spec.id_data_source))
    try:
        # collected as the run's own process is while it syncs: what is held long is
        # frozen, the youngest objects are collected every 50 000 allocations
        with paced_for_sync():
            opened: OpenedAhead | None = None
            while (request := requests.recv()) is not None:
                stream, plan, after = request
                costs = ReadCosts()
                if opened is not None and not opened.opens(stream, plan):
                    await opened.aclose()  # the run asked for another stream than the next
                    opened = None
                pages = opened if opened is not None else OpenedAhead(stream, plan, connector)
                opened = None
                try:
                    async for records in pages:
                        _send_page(conn, costs, mapper, stream, plan, records,
                                   connector.position)
                        if after is not None and opened is None:
                            # its first page read beside this stream's (after this one's first)
                            opened = OpenedAhead(after[0], after[1], connector)
                except Exception as exc:  # noqa: BLE001 - raised where the run reads
                    conn.send(("error", _portable(exc)))
                    continue
                finally:
                    await pages.aclose()
                conn.send(("end", costs.ended()))
            if opened is not None:
                await opened.aclose()
    except (EOFError, BrokenPipeError):
        pass  # the run is gone
    finally:
        await connector.aclose()
        if state is not None:
            state.close()


class OpenedAhead:
    """A stream's read in the process, its first page asked for at once (``OpenedPages``:
    each next one as a page is handed over). Opened for the stream after the one being
    sent, so that its first page — a drop folder's waits for its whole file, parsed and put
    in key order — is read while the sync still works on the stream before: the connector
    sees the same reads, only sooner, and at most one stream ahead."""

    def __init__(self, stream: str, plan: ReadPlan, connector: SourceConnector) -> None:
        self.stream = stream
        self.plan = plan
        self._pages = OpenedPages(plan.pages(connector, stream))

    def opens(self, stream: str, plan: ReadPlan) -> bool:
        """Whether this is the read the run now asks for (its plan arrives pickled)."""
        return stream == self.stream and plan == self.plan

    def __aiter__(self) -> AsyncIterator[list[RawRecord]]:
        return self._pages

    async def aclose(self) -> None:
        """Stop it where it is (``OpenedPages.aclose``)."""
        await self._pages.aclose()


def _send_page(conn: Connection, costs: ReadCosts, mapper: RecordMapper, stream: str,
               plan: ReadPlan, records: list[RawRecord],
               position_of: Callable[[str, RawRecord], Position]) -> None:
    """One page mapped, checked (``pack``) and sent, each step's CPU counted in ``costs``;
    the page's objects are let go as it returns, before the next page is read."""
    mapping = time.thread_time()
    mapped = mapper.page(stream, plan, records, position_of)
    checking = time.thread_time()
    packed = pack(mapped)
    sending = time.thread_time()
    conn.send(("page", packed))
    costs.page(mapping, checking, sending, time.thread_time())


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


if __name__ == "__main__":
    main()

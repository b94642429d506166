"""A large file of a drop folder parsed and put in key order by a process of its own.

A file's first row can go only once the whole file is parsed and taken apart into runs
(``ordering.py``): a row near its end may hold the smallest key. In the process reading
the stream, that parse takes the interpreter in turns with everything else the process
does (in a read process, mapping and checking the stream before it), so it runs on a
fraction of one core. A file of ``parse_apart_bytes`` or more is parsed instead by a fresh
interpreter (``python -m connectors.sources.files.apart``), on a core of its own where one
is free. It writes the runs into a folder the reading process made, and answers with
their ``Runs``; the reading process then only merges them, a page at a time.

Not multiprocessing's ``spawn``: that re-runs the caller's main module in the child, and a
script without a ``__main__`` guard would start itself again. The request goes pickled on
the child's stdin, the answer comes pickled on its stdout: the ``Runs``, or the message of
a configuration mistake found in the rows (a ``SourceError``, raised here again). A child
that fails otherwise stops the read with one message: its last line on stderr. The child
ignores Ctrl-C (a terminal sends it to the whole group): the reading process ends it when
the read stops, whether the read was finished, failed or cancelled.
"""

from __future__ import annotations

import asyncio
import os
import pickle
import signal
import subprocess
import sys
from pathlib import Path
from tempfile import TemporaryDirectory

from connectors.sources.base import SourceError
from connectors.sources.files import ordering
from connectors.sources.files.config import FilesStreamSpec
from connectors.sources.files.memory import Arrived
from connectors.sources.files.rows import file_rows
from connectors.sources.sql.columns import zone

#: what the child is asked: the stream, its spec, the source's time zone, the file, the
#: folder to write the runs into, and the rows held in memory at most
Request = tuple[str, FilesStreamSpec, str, Arrived, str, int]


class ParsedAhead:
    """The large files of one read, each taken apart by a process of its own (``taken_apart``),
    the next one started as soon as the one before is handed over (``start``): while the
    reading process merges and sends a file, the next is parsed beside it. One file ahead at
    most; its runs wait on disk, in a folder of its own, removed once the file is read (or
    when the read ends without it, ``aclose``)."""

    def __init__(self, stream: str, spec: FilesStreamSpec, timezone: str,
                 spill_rows: int) -> None:
        self.stream, self.spec, self.timezone, self.spill_rows = stream, spec, timezone, spill_rows
        self._started: dict[str, tuple[asyncio.Task[ordering.Runs], TemporaryDirectory[str]]] = {}

    def start(self, file: Arrived) -> None:
        """``file`` parsed in its process from now on, unless it already is."""
        if file.name not in self._started:
            folder = TemporaryDirectory(prefix="shopsync-files-")
            parse = asyncio.create_task(taken_apart(self.stream, self.spec, self.timezone, file,
                                                    Path(folder.name), self.spill_rows))
            self._started[file.name] = (parse, folder)

    async def runs(self, file: Arrived) -> tuple[ordering.Runs, TemporaryDirectory[str]]:
        """``file``'s runs, and the folder they are in (the caller's to remove)."""
        self.start(file)
        parse, folder = self._started.pop(file.name)
        try:
            return await parse, folder
        except BaseException:
            folder.cleanup()
            raise

    async def aclose(self) -> None:
        """The parses started for files the read did not reach: ended, their runs removed."""
        started, self._started = list(self._started.values()), {}
        try:
            for parse, _ in started:
                parse.cancel()
            # unread: their outcomes are moot, whatever they were
            await asyncio.gather(*(parse for parse, _ in started), return_exceptions=True)
        finally:
            for _, folder in started:
                folder.cleanup()


async def taken_apart(stream: str, spec: FilesStreamSpec, timezone: str, file: Arrived,
                      folder: Path, spill_rows: int) -> ordering.Runs:
    """``file``'s rows taken apart into runs in ``folder`` by a process of its own."""
    request: Request = (stream, spec, timezone, file, str(folder), spill_rows)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    process = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        out, err = await asyncio.to_thread(process.communicate,
                                           pickle.dumps(request, pickle.HIGHEST_PROTOCOL))
    finally:
        if process.poll() is None:  # the read stopped while the file was parsed
            process.kill()
            process.wait()
    where = f"{stream}/{file.name}"
    if process.returncode != 0 or not out:
        lines = err.decode("utf-8", "replace").strip().splitlines()
        why = lines[-1] if lines else f"it ended with code {process.returncode}"
        raise SourceError(f"{where}: the process parsing the file failed: {why}")
    try:
        answer = pickle.loads(out)  # noqa: S301 - the answer of the child this process started
    except Exception as exc:  # noqa: BLE001 - whatever else it wrote on its stdout
        raise SourceError(f"{where}: the process parsing the file answered what cannot be"
                          f" read: {type(exc).__name__}") from None
    if isinstance(answer, str):
        raise SourceError(answer)
    if not isinstance(answer, ordering.Runs):
        raise SourceError(f"{where}: the process parsing the file answered a"
                          f" {type(answer).__name__}, not its runs")
    return answer


def _answer(request: Request) -> ordering.Runs | str:
    stream, spec, timezone, file, folder, spill_rows = request
    rows = file_rows(stream, spec, zone(timezone), file)
    try:
        runs, _, _ = ordering.taken_apart(rows, Path(folder), spill_rows, all_on_disk=True)
    except SourceError as exc:
        return str(exc)
    return runs


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    request = pickle.load(sys.stdin.buffer)  # noqa: S301 - from the process that started this one
    answer = _answer(request)
    sys.stdout.buffer.write(pickle.dumps(answer, pickle.HIGHEST_PROTOCOL))
    sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()

"""``shopsync check-config``: the file first (exit 2 when it is invalid), then everything it
points at — the state database, the destination and the data source of each source, every
source's credentials — each tried at once and bounded in time (exit 1 when one fails),
and within the request budgets a run keeps (``pipelines/engine/budgets.py``).

Every line names its field: ``FAIL  source woo: sources[0].connection (…): why``."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import sys
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING

import click

from pipelines.cli.common import config_option, friendly_errors, load

if TYPE_CHECKING:
    from pipelines.engine.config import Config, Source
    from pipelines.engine.state import StateStore

#: (passed, line): one result of one probe
Result = tuple[bool, str]
Probe = Callable[[], Awaitable[list[Result]]]

#: the retries of the probe running in this task, kept with it instead of on the terminal
_retries: ContextVar[list[str] | None] = ContextVar("shopsync_check_retries", default=None)


class _KeepRetries(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        seen = _retries.get()
        if seen is not None:
            seen.append(str(record.args[0]) if isinstance(record.args, tuple) and record.args
                        else record.getMessage())


def _reason(exc: BaseException) -> str:
    """An error as one line: a database error's own message, without SQLAlchemy's link."""
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc) or type(exc).__name__
    return " ".join(text.split())


async def _bounded(what: str, field: str, timeout: float, probe: Probe) -> list[Result]:
    """``probe``'s results, or one FAIL line naming ``field`` when it fails or is not done
    within ``timeout`` seconds."""
    from pipelines.engine.config import ConfigError

    retries: list[str] = []
    _retries.set(retries)
    try:
        return await asyncio.wait_for(probe(), timeout)
    except TimeoutError:
        last = f" (retried {len(retries)} times after {retries[-1]})" if retries else ""
        return [(False, f"{what}: {field}: no answer within {timeout:g} s{last}")]
    except ConfigError as exc:  # an environment variable the file names is not set …
        return [(False, f"{what}: {problem}") for problem in exc.problems]
    # … and any other failure (address, credentials, network, the answer) is one line
    except Exception as exc:  # noqa: BLE001
        reason = _reason(exc)
        # a connector that names the field itself (``connection.path: …``) is taken at its word
        head, _, last = field.rpartition(".")
        if head and reason.startswith(f"{last}."):
            return [(False, f"{what}: {head}.{reason}")]
        return [(False, f"{what}: {field}: {reason}")]


def _open_state(config: Config, timeout: float) -> tuple[Result, StateStore | None]:
    """Open the state database as a run would (creating it, or its schema, when missing);
    the store stays open for the probes, whose requests it paces where a budget is set."""
    from sqlalchemy.engine import make_url

    from pipelines.engine.config import ConfigError
    from pipelines.engine.state import StateStore

    try:
        given = config.state_url_in(os.environ)
    except ConfigError as exc:
        return (False, f"state database: {exc.problems[0]}"), None
    url = make_url(given or StateStore.default_url())
    if url.get_backend_name() == "postgresql" and "connect_timeout" not in url.query:
        url = url.update_query_dict({"connect_timeout": str(max(2, round(timeout)))})
    shown = url.render_as_string(hide_password=True)
    field = ("state_url_env" if config.state_url_env else "state_url" if given
             else "state_url (not set: the default)")
    try:
        store = StateStore(url.render_as_string(hide_password=False))
    except Exception as exc:  # noqa: BLE001 - the driver's errors, whatever they are
        return (False, f"state database: {field} {shown}: {_reason(exc)}"), None
    return (True, f"state database {shown}"), store


def _probe_destination(config: Config, sources: list[tuple[int, Source]],
                       env: Mapping[str, str], state: StateStore | None) -> Probe:
    """One destination, and the data source of each of ``sources`` (index, source) there;
    within its key's shared budget, as a run is (unpaced when ``state`` did not open)."""
    async def probe() -> list[Result]:
        from pipelines.engine.budgets import destination_pacer
        from pipelines.engine.config import ConfigError
        from pipelines.engine.destination import resolve_data_source
        from pipelines.engine.runner import open_client

        results: list[Result] = []
        first = sources[0][1]
        pacer = destination_pacer(state, config.destination_for(first)) if state else None
        async with open_client(config, first, env, pacer=pacer) as client:
            await client.list_data_sources()
            results.append((True, f"destination {config.destination_for(first).base_url}"))
            for index, source in sources:
                ref = source.data_source
                try:
                    found = await resolve_data_source(client, ref, create=False)
                except ConfigError as exc:
                    results += [(False, f"source {source.name}: sources[{index}].{problem}")
                                for problem in exc.problems]
                    continue
                if found is None:
                    results.append((True, f"source {source.name}: data source {ref.label!r}"
                                          " is created on the first sync"))
        return results

    return probe


def _destinations(config: Config) -> list[list[tuple[int, Source]]]:
    """The sources grouped by the destination (address and key) they write to, in order."""
    groups: dict[tuple[str, str], list[tuple[int, Source]]] = {}
    for index, source in enumerate(config.sources):
        destination = config.destination_for(source)
        groups.setdefault((destination.base_url, destination.api_key_env), []).append(
            (index, source))
    return list(groups.values())


def _probe_source(source: Source, env: Mapping[str, str], state: StateStore | None) -> Probe:
    """The source's credentials, within its shop's shared budget as a run is (unpaced when
    ``state`` did not open)."""
    async def probe() -> list[Result]:
        from pipelines.engine.budgets import shop_pacer
        from pipelines.engine.runner import open_connector, selected_resources

        selected_resources(source)
        connector = open_connector(source, env, shop_pacer(state, source) if state else None)
        try:
            await connector.check()
        finally:
            await connector.aclose()
        where = source.connection.url or source.connection.path or source.connection.url_env
        where = re.sub(r"//([^/@:]*):[^/@]*@", r"//\1:***@", str(where))  # no password shown
        return [(True, f"source {source.name} ({source.platform} {where})")]

    return probe


async def _probe_connections(config: Config, env: Mapping[str, str], timeout: float,
                             state: StateStore | None = None) -> list[Result]:
    """The destination and every source, tried at the same time."""
    probes = [_bounded("destination",
                       f"{config.destination_field(group[0][1], 'base_url')}"
                       f" ({config.destination_for(group[0][1]).base_url})",
                       timeout, _probe_destination(config, group, env, state))
              for group in _destinations(config)]
    probes += [_bounded(f"source {source.name}", f"sources[{index}].connection", timeout,
                        _probe_source(source, env, state))
               for index, source in enumerate(config.sources)]
    http = logging.getLogger("shopsync.http")
    keep = _KeepRetries()
    http.addHandler(keep)
    try:
        done = await asyncio.gather(*probes)
    finally:
        http.removeHandler(keep)
    return [result for results in done for result in results]


@click.command("check-config")
@config_option
@click.option("--timeout", default=30.0, show_default=True, metavar="SECONDS",
              type=click.FloatRange(min=0, min_open=True),
              help="How long each connection may take to answer.")
@friendly_errors
def check_config(config_path: str | None, timeout: float) -> None:
    """Validate the configuration (exit 2 when invalid), then open the state database and
    try the destination, each source's data source and every connection's credentials
    (exit 1 when one fails)."""
    config = load(config_path)
    opened, state = _open_state(config, timeout)
    try:
        results = [opened, *asyncio.run(_probe_connections(config, os.environ, timeout, state))]
    finally:
        if state is not None:
            state.close()
    for passed, line in results:
        if passed:
            click.echo(f"ok    {line}")
    failed = [line for passed, line in results if not passed]
    for line in failed:
        click.echo(f"FAIL  {line}", err=True)
    if failed:
        sys.exit(1)

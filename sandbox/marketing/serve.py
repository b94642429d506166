"""Running the sandbox with uvicorn, and telling the person at the terminal how to use it."""

from __future__ import annotations

import gc

from sandbox import serving
from sandbox.marketing.app import OPENAPI_PATH, create_app
from sandbox.marketing.settings import DEFAULT_KEY, DEFAULT_KPI_KEY, SandboxSettings
from sandbox.serving import Served, serve_app


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
        f" drop rate {settings.drop_rate}, disconnect rate {settings.disconnect_rate},"
        f" latency {settings.latency_ms} ms,"
        f" state {'in ' + str(settings.data) if settings.data else 'in memory'}"
    )
    if settings.manual_clock:
        lines.append("  manual clock: writes become readable as POST /_sandbox/clock advances it")
    lines.append(f'  try: curl -H "spm-api-key: <key>" {base}/v1/data-sources')
    return "\n".join(lines)


#: the cyclic garbage collector's thresholds in the sandbox's own process (Python's: 700, 10,
#: 10). What the sandbox keeps grows with every write, and each full collection walks all of
#: it: with Python's thresholds 300 000 items of a sync cost the sandbox 14 full walks of a
#: growing heap, 37 % of its CPU. Young collections a fourteenth as often and full ones a
#: tenth as often leave a quarter of that (3-4 CPU-µs an item); garbage that is no cycle is
#: freed at once as ever, and the store's documents form none.
COLLECTOR_THRESHOLDS = (10_000, 10, 100)


def serve(settings: SandboxSettings) -> None:
    gc.set_threshold(*COLLECTOR_THRESHOLDS)
    serve_app(lambda: create_app(settings), settings.host, settings.port,
              lambda port: banner(settings, port))


def serve_in_thread(settings: SandboxSettings) -> tuple[Served, str]:
    """The same sandbox served in a thread of this process (tests whose subject is not the
    process): the server and the banner ``serve`` would print."""
    served = serving.serve_in_thread(lambda: create_app(settings), settings.host, settings.port)
    return served, banner(settings, served.port)

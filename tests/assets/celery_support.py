"""What the celery executor's test sets up: Redis, celery workers as processes of their own
(``python -m pipelines.worker``), a Dagster instance every process shares, and the readings
the test compares — the destination's items and the ledger."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from connectors.marketing.resources import SYNC_RESOURCES
from pipelines.engine.state import StateStore
from sandbox.marketing.views import READ_META_FIELDS

REDIS_ENV = "SHOPSYNC_TEST_REDIS_URL"
ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def redis_url(tmp: Path) -> Iterator[str]:
    """``$SHOPSYNC_TEST_REDIS_URL`` (``.ci/run`` sets it); else a server of this test's own,
    started by ``.ci/redis.sh`` in ``tmp`` and stopped after; skipped, saying so, only where
    neither is there."""
    given = os.environ.get(REDIS_ENV)
    if given:
        yield given
        return
    if shutil.which("redis-server") is None:
        pytest.skip(f"{REDIS_ENV} is not set and redis-server is not installed: start one"
                    f" with `export {REDIS_ENV}=$(.ci/redis.sh)` (installs it from Debian's"
                    " packages)")
    env = {**os.environ, "SHOPSYNC_REDIS_DIR": str(tmp)}
    script = str(ROOT / ".ci" / "redis.sh")
    url = subprocess.run([script], env=env, check=True, capture_output=True, text=True,
                         timeout=60).stdout.strip()
    try:
        yield url
    finally:
        subprocess.run([script, "stop"], env=env, check=False, timeout=60)


def dagster_home(path: Path) -> Path:
    """A Dagster instance on SQLite in ``path``, which the run and the workers share."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    return path


@dataclass
class Workers:
    processes: dict[str, subprocess.Popen[bytes]]
    log: Path

    @property
    def pids(self) -> dict[int, str]:
        return {p.pid: name for name, p in self.processes.items()}

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]


def wait_ready(workers: Workers, broker: str, timeout: float) -> None:
    """Until every worker answers celery's ping through the broker: none is still starting
    when the run sends its first step. Fails naming the worker that does not answer."""
    from dagster_celery.make_app import make_app

    app = make_app({"broker": broker, "backend": broker})
    try:
        deadline = time.monotonic() + timeout
        names = set(workers.processes)
        while True:
            for name, worker in workers.processes.items():
                assert worker.poll() is None, f"worker {name} exited:\n{workers.output()}"
            answered = {node.split("@")[0] for reply in app.control.ping(timeout=0.5)
                        for node in reply}
            if names <= answered:
                return
            assert time.monotonic() < deadline, (
                f"workers {sorted(names - answered)} did not answer within {timeout} s:\n"
                f"{workers.output()}")
    finally:
        app.close()


@contextmanager
def celery_workers(names: list[str], env: Mapping[str, str], broker: str, log: Path,
                   timeout: float = 180) -> Iterator[Workers]:
    """Workers (``python -m pipelines.worker``, the solo pool: each runs its steps in its
    own process, one at a time), ready when this yields; stopped after by SIGTERM, celery's
    warm shutdown, within a bound — and killed, failing the test, past it."""
    processes: dict[str, subprocess.Popen[bytes]] = {}
    workers = Workers(processes, log)
    with log.open("ab") as out:
        try:
            for name in names:
                processes[name] = subprocess.Popen(
                    [sys.executable, "-m", "pipelines.worker", "--name", name,
                     "--pool", "solo"],
                    env=dict(env), cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
            wait_ready(workers, broker, timeout)
            yield workers
        finally:
            for worker in processes.values():
                worker.send_signal(signal.SIGTERM)
            stuck = []
            for name, worker in processes.items():
                try:
                    worker.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    worker.kill()
                    worker.wait()
                    stuck.append(name)
            assert not stuck, f"workers {stuck} did not stop on SIGTERM:\n{workers.output()}"


def destination(client: httpx.Client) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Every item of the shop ``client`` writes to, per (data source label, resource), in
    a fixed order, without the sandbox's own fields (its row ids and data source ids follow
    the order of the writes, which differs from run to run). A contact's id is numbered in
    the order the contacts were made too — steps on two workers make them in another — so
    an item says only whether it has one (its customer's email says which)."""
    labels = {row["id_data_source"]: row["label"] for row in _listed(client, "data-sources")}
    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    rows = {name: _listed(client, r.route) for name, r in SYNC_RESOURCES.items()
            if r.parent_field is None}
    for name, resource in SYNC_RESOURCES.items():
        if resource.parent_field is None:
            continue
        # a nested resource is listed under each of its parents (of every data source)
        [parent] = [n for n, r in SYNC_RESOURCES.items() if r.id_field == resource.parent_field]
        parents = sorted({str(row[resource.parent_field]) for row in rows[parent]})
        rows[name] = [row for parent_id in parents
                      for row in _listed(client, resource.item_route(parent_id))]
    for name, listed in rows.items():
        for row in listed:
            label = labels[row["data_source_id"]]
            item = {k: v for k, v in row.items() if k not in READ_META_FIELDS}
            if "contact_id" in item:
                item["contact_id"] = item["contact_id"] is not None
            out.setdefault((label, name), []).append(item)
    return {k: sorted(v, key=repr) for k, v in out.items()}


def _listed(client: httpx.Client, route: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    while True:
        answer = client.get(route, params={"limit": 1000, "offset": len(rows)})
        answer.raise_for_status()
        page = answer.json()["data"]
        rows += page
        if len(page) < 1000:
            return rows


def ledger(state_url: str, sources: list[str]) -> dict[str, Any]:
    """Per source: items per state and resource, and each item's (key, state, hash)."""
    state = StateStore(state_url)
    try:
        return {source: {
            "counts": state.counts(source),
            "items": {resource: sorted((e.key, e.status.value, e.content_hash)
                                       for e in state.entries(source, resource))
                      for resource in state.counts(source)},
        } for source in sources}
    finally:
        state.close()

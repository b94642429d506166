"""A Dagster deployment for a benchmark, as production runs it: a DAGSTER_HOME with
``deploy/dagster.yaml`` (PostgreSQL storage, the queued run coordinator and its limits), the
daemon that dequeues runs, the webserver whose GraphQL API submits them, and — for the celery
executor — worker processes. Each is its own process, started here and stopped on the way out.

It also samples the peak memory of the processes that do the work (run workers and celery
workers) from ``/proc``, since they come and go during the runs.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from dagster import DagsterRunStatus
from dagster_graphql import DagsterGraphQLClient

from pipelines.cli.demo import free_port

ROOT = Path(__file__).resolve().parents[1]
#: the location name workspace.yaml gives the code location
LOCATION = "shopsync"
DONE = {DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED}


@dataclass
class PeakMemory:
    """The highest resident memory seen per process whose command line matches ``kinds``."""

    kinds: Mapping[str, re.Pattern[str]]
    peaks: dict[tuple[str, int], float] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)

    def start(self) -> None:
        threading.Thread(target=self._sample, daemon=True).start()

    def stop(self) -> None:
        self._stop.set()

    def _sample(self) -> None:
        while not self._stop.wait(0.25):
            for proc in Path("/proc").iterdir():
                if not proc.name.isdigit():
                    continue
                try:
                    cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                    status = (proc / "status").read_text()
                except OSError:
                    continue
                for kind, pattern in self.kinds.items():
                    if pattern.search(cmdline):
                        match = re.search(r"VmHWM:\s+(\d+)", status)
                        if match:
                            key = (kind, int(proc.name))
                            self.peaks[key] = max(self.peaks.get(key, 0.0),
                                                  int(match.group(1)) / 1024)

    def summary(self, kind: str) -> tuple[int, float]:
        """How many processes of ``kind`` were seen, and the highest peak among them (MiB)."""
        values = [v for (k, _), v in self.peaks.items() if k == kind]
        return len(values), max(values, default=0.0)


@dataclass(frozen=True)
class Launch:
    """A run to submit: its job, a label to report it by, and the assets it selects (all of
    the job's when empty)."""

    job: str
    label: str
    assets: tuple[tuple[str, ...], ...] = ()


class DagsterStack:
    """The daemon and webserver (and celery workers) of one DAGSTER_HOME."""

    def __init__(self, home: Path, env: Mapping[str, str], dagster_yaml: Path) -> None:
        home.mkdir(parents=True, exist_ok=True)
        shutil.copy(dagster_yaml, home / "dagster.yaml")
        self.home = home
        self.env = {**os.environ, **env, "DAGSTER_HOME": str(home)}
        self.port = free_port("127.0.0.1")
        self.processes: list[subprocess.Popen[bytes]] = []

    def _start(self, name: str, *command: str) -> subprocess.Popen[bytes]:
        log = (self.home / f"{name}.log").open("wb")
        process = subprocess.Popen(list(command), cwd=ROOT, env=self.env, stdout=log,
                                   stderr=subprocess.STDOUT)
        self.processes.append(process)
        return process

    def start(self, celery_workers: int = 0) -> None:
        """The daemon, the webserver and ``celery_workers`` workers (``python -m
        pipelines.worker``, one step at a time each); until the code location is served."""
        bindir = Path(sys.executable).parent
        self._start("daemon", str(bindir / "dagster-daemon"), "run", "-w", "workspace.yaml")
        self._start("webserver", str(bindir / "dagster-webserver"), "-w", "workspace.yaml",
                    "-h", "127.0.0.1", "-p", str(self.port))
        for n in range(celery_workers):
            self._start(f"celery-{n}", sys.executable, "-m", "pipelines.worker", "--name",
                        f"bench{n}", "--concurrency", "1")
        self._wait_loaded()

    def _wait_loaded(self, bound: float = 600.0) -> None:
        """Until the webserver answers and serves the code location."""
        deadline = time.monotonic() + bound
        query = {"query": "{ workspaceOrError { ... on Workspace { locationEntries {"
                          " name locationOrLoadError { __typename } } } } }"}
        while time.monotonic() < deadline:
            try:
                answer = httpx.post(f"http://127.0.0.1:{self.port}/graphql", json=query,
                                    timeout=10).json()
                entries = answer["data"]["workspaceOrError"]["locationEntries"]
                kinds = [e["locationOrLoadError"]["__typename"] for e in entries
                         if e["locationOrLoadError"]]
                if kinds == ["RepositoryLocation"]:
                    return
                if "PythonError" in kinds:
                    raise SystemExit(f"the code location failed to load: {answer}")
            except (httpx.TransportError, KeyError, TypeError, ValueError):
                pass
            time.sleep(0.5)
        raise SystemExit(f"the code location was not loaded within {bound:.0f} s;"
                         f" see {self.home}/webserver.log")

    def client(self) -> DagsterGraphQLClient:
        return DagsterGraphQLClient("127.0.0.1", port_number=self.port, timeout=120)

    def run_all(self, launches: list[Launch], bound: float = 3600.0
                ) -> dict[str, DagsterRunStatus]:
        """Submit every run at once (the coordinator queues them), wait until all end; each
        run's status by its label."""
        client = self.client()
        runs = {client.submit_job_execution(
            launch.job, repository_location_name=LOCATION,
            asset_selection=[list(key) for key in launch.assets] or None): launch.label
            for launch in launches}
        deadline = time.monotonic() + bound
        statuses: dict[str, DagsterRunStatus] = {}
        while len(statuses) < len(runs):
            if time.monotonic() > deadline:
                raise SystemExit(f"{len(runs) - len(statuses)} runs still going after"
                                 f" {bound:.0f} s")
            for run_id, job in runs.items():
                if job not in statuses:
                    status = client.get_run_status(run_id)
                    if status in DONE:
                        statuses[job] = status
            time.sleep(1.0)
        return statuses

    def stop(self) -> None:
        for process in reversed(self.processes):
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

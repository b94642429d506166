"""A celery worker for the code location's ``sync_all_sources`` job with ``executor: celery``.

``python -m pipelines.worker [--name NAME] [CELERY WORKER OPTIONS…]`` reads the configuration
(``$SHOPSYNC_CONFIG``, else ``./shops.yaml``, as the code location does), takes the broker's and
result backend's URLs from the variables its ``execution`` section names, and becomes
``celery -A dagster_celery.app worker`` on the configured queue. The URLs reach celery through
its own variables (``CELERY_BROKER_URL``, ``CELERY_RESULT_BACKEND``), never a command line
that ``ps`` shows or a file. A worker runs a step by loading the job from the code location,
so it needs what the run needs: the project installed, ``$SHOPSYNC_CONFIG`` and the secrets'
variables; it writes the step's events to the run's Dagster instance (the run passes it
along: ``$DAGSTER_HOME`` with storage every process reaches, like ``deploy/dagster.yaml``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

from pipelines.engine.config import ConfigError, Execution, load_config


def worker_command(execution: Execution, name: str, extra: Sequence[str]) -> list[str]:
    """The celery command line: one step at a time per child process, none prefetched."""
    return [sys.executable, "-m", "celery", "-A", "dagster_celery.app", "worker",
            "--loglevel", "INFO", "--prefetch-multiplier", "1", "-Q", execution.queue,
            "-n", f"{name}@%h", *extra]


def celery_env(execution: Execution, env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with celery's broker and backend variables set from the configured ones."""
    if execution.executor != "celery":
        raise ConfigError(["execution.executor: workers serve `executor: celery` only; set it"
                           " (with broker_url_env) in the configuration"])
    names = {"CELERY_BROKER_URL": execution.broker_url_env,
             "CELERY_RESULT_BACKEND": execution.backend_url_env or execution.broker_url_env}
    out = dict(env)
    for celery_name, variable in names.items():
        value = env.get(variable or "")
        if not value:
            raise ConfigError([f"execution: the environment variable {variable} (the broker's"
                               " or result backend's URL) is not set — export it"])
        out[celery_name] = value
    return out


def main(argv: Sequence[str] = sys.argv[1:]) -> None:
    args = list(argv)
    name = "shopsync"
    if args[:1] == ["--name"] and len(args) > 1:
        name, args = args[1], args[2:]
    try:
        execution = load_config().execution
        env = celery_env(execution, os.environ)
    except ConfigError as exc:
        sys.exit(f"shopsync worker: {exc}")
    command = worker_command(execution, name, args)
    # this process becomes the worker: its pid is the worker's, signals reach celery
    os.execve(command[0], command, env)


if __name__ == "__main__":
    main()

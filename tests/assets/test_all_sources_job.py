"""The job syncing every source: what it selects, its tag, the executor the configuration
chooses, and how a celery worker is started from the same configuration."""

from __future__ import annotations

import subprocess
import sys

import dagster as dg
import pytest

from assets.execution import ALL_SOURCES_JOB, SOURCES_TAG, executor_for
from pipelines.definitions import build_definitions
from pipelines.engine.config import ConfigError, Execution, parse_config
from pipelines.worker import celery_env, worker_command

CELERY = Execution(executor="celery", broker_url_env="T_BROKER", queue="shops")


def config_for(execution: dict[str, str] | None = None):
    return parse_config({
        "destination": {"base_url": "http://127.0.0.1:9/v1", "api_key_env": "T_ALL_KEY"},
        "execution": execution or {},
        "sources": [{"name": name, "platform": "woocommerce",
                     "connection": {"url": "http://127.0.0.1:9", "key_env": "T_WC_KEY",
                                    "secret_env": "T_WC_SECRET"},
                     "data_source": {"label": name}}
                    for name in ("eu_shop", "us_shop")],
    })


def test_one_job_syncs_every_source_in_process_by_default():
    defs = build_definitions(config_for())
    job = defs.resolve_job_def(ALL_SOURCES_JOB)
    synced = {node.name for name in ("eu_shop", "us_shop")
              for node in defs.resolve_job_def(f"{name}_sync").nodes}

    assert {node.name for node in job.nodes} == synced
    assert job.executor_def is dg.in_process_executor
    assert job.tags == {SOURCES_TAG: "all"}
    assert "in its run's process" in (job.description or "")


def test_celery_reads_the_broker_from_the_variable_when_a_run_starts(monkeypatch):
    pytest.importorskip("dagster_celery")
    defs = build_definitions(config_for({"executor": "celery", "broker_url_env": "T_BROKER",
                                         "queue": "shops"}))
    job = defs.resolve_job_def(ALL_SOURCES_JOB)
    schema = job.executor_def.config_schema

    assert job.executor_def.name == "celery"
    assert "on celery workers (queue shops)" in (job.description or "")
    # the job holds the variable's name; its value is read when a run resolves the config
    unset = schema.resolve_config({})
    assert not unset.success and "T_BROKER" in unset.errors[0].message
    monkeypatch.setenv("T_BROKER", "redis://:pw@127.0.0.1:1/0")
    resolved = schema.resolve_config({}).value["config"]
    assert resolved["broker"] == resolved["backend"] == "redis://:pw@127.0.0.1:1/0"
    assert resolved["config_source"] == {"task_default_queue": "shops"}


def test_a_worker_gets_the_urls_from_the_configured_variables_through_celerys_own():
    env = celery_env(CELERY, {"T_BROKER": "redis://:pw@127.0.0.1:1/0", "PATH": "/bin"})

    assert env["CELERY_BROKER_URL"] == env["CELERY_RESULT_BACKEND"] == "redis://:pw@127.0.0.1:1/0"
    command = worker_command(CELERY, "w1", ["--pool", "solo"])
    assert command[1:6] == ["-m", "celery", "-A", "dagster_celery.app", "worker"]
    assert ["-Q", "shops"] == command[command.index("-Q"):command.index("-Q") + 2]
    assert command[-2:] == ["--pool", "solo"] and "w1@%h" in command
    assert not any("pw@" in part for part in command)  # never on a command line


def test_a_worker_without_its_variable_or_celery_says_what_to_do():
    with pytest.raises(ConfigError, match="T_BROKER .* is not set — export it"):
        celery_env(CELERY, {})
    with pytest.raises(ConfigError, match="workers serve `executor: celery` only"):
        celery_env(Execution(), {"T_BROKER": "redis://127.0.0.1:1/0"})


def test_the_worker_command_fails_in_one_line_on_a_bad_configuration(tmp_path):
    path = tmp_path / "shops.yaml"
    path.write_text("sources: []\n")

    done = subprocess.run([sys.executable, "-m", "pipelines.worker"], capture_output=True,
                          text=True, env={"SHOPSYNC_CONFIG": str(path), "PATH": "/usr/bin"},
                          timeout=120)

    assert done.returncode == 1
    assert done.stderr.startswith("shopsync worker:") and "sources" in done.stderr


def test_celery_without_dagster_celery_says_which_extra_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "dagster_celery", None)  # an import of it fails

    with pytest.raises(ConfigError, match=r"pip install 'shopsync\[deploy\]'"):
        executor_for(CELERY)

"""The configuration's ``execution`` section: in process unless it says celery, and the
broker's URL only ever by the name of the variable holding it."""

from __future__ import annotations

import pytest
import yaml

from pipelines.engine.config import ConfigError, Execution, parse_config
from tests.engine.config_support import GOOD

SECRET = "redis://:s3cret-pass@broker.example.com:6379/0"


def problems(execution: object) -> list[str]:
    raw = {**yaml.safe_load(GOOD), "execution": execution}
    with pytest.raises(ConfigError) as caught:
        parse_config(raw)
    return caught.value.problems


def test_steps_run_in_process_unless_the_file_says_celery():
    config = parse_config(yaml.safe_load(GOOD))

    assert config.execution == Execution(executor="in_process")
    assert config.execution.queue == "dagster"


def test_celery_takes_the_broker_and_backend_by_variable_name():
    raw = {**yaml.safe_load(GOOD), "execution": {
        "executor": "celery", "broker_url_env": "SHOPSYNC_CELERY_BROKER_URL",
        "backend_url_env": "SHOPSYNC_CELERY_BACKEND_URL", "queue": "shopsync"}}

    execution = parse_config(raw).execution

    assert (execution.broker_url_env, execution.backend_url_env, execution.queue) == (
        "SHOPSYNC_CELERY_BROKER_URL", "SHOPSYNC_CELERY_BACKEND_URL", "shopsync")
    # a configuration written back and read again is the same (defaults and all)
    assert parse_config(parse_config(raw).model_dump(mode="json")).execution == execution


def test_celery_without_a_broker_says_which_field_to_add():
    [problem] = problems({"executor": "celery"})

    assert problem.startswith("execution: executor celery needs broker_url_env")
    assert "SHOPSYNC_CELERY_BROKER_URL" in problem


@pytest.mark.parametrize("field", ["broker_url", "backend_url"])
def test_a_url_in_the_file_is_refused_without_being_shown(field):
    [problem] = problems({"executor": "celery", field: SECRET})

    assert problem.startswith(f"execution: {field} is not read from the file")
    assert f"{field}_env" in problem
    assert "s3cret" not in problem


def test_a_url_given_as_the_variable_name_is_not_shown_either():
    [problem] = problems({"executor": "celery", "broker_url_env": SECRET})

    assert problem.startswith("execution.broker_url_env:")
    assert "s3cret" not in problem


def test_broker_settings_without_celery_are_a_mistake_said_so():
    [problem] = problems({"broker_url_env": "SHOPSYNC_CELERY_BROKER_URL"})

    assert "for `executor: celery` only" in problem


def test_an_unknown_executor_names_the_allowed_ones():
    [problem] = problems({"executor": "dask"})

    assert problem.startswith("execution.executor:") and "'in_process' or 'celery'" in problem

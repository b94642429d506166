"""Alerts: failed runs, rejection spikes, and items that never became visible — in the
logs always, and posted to the configured webhook when there is one."""

import json
from collections.abc import Sequence
from typing import Any

import dagster as dg
import httpx

from assets.resources import AlertsWebhook, StateDatabase
from connectors.http.tls import tls_context
from connectors.http.urls import secure_url
from pipelines.engine.config import Config
from pipelines.engine.state import ItemStatus, StateStore


def deliver(messages: list[str], webhook_url: str | None, log: Any) -> None:
    for message in messages:
        log.warning(message)
    if webhook_url and messages:
        try:
            # the config checks it too; this is the address the data actually goes to
            url = secure_url(webhook_url, carrying="the alerts travel", label="webhook_url",
                             invalid="must be an http(s) URL")
            httpx.post(url, json={"text": "\n".join(messages), "source": "shopsync"},
                       timeout=10, follow_redirects=False, verify=tls_context()).raise_for_status()
        except ValueError as exc:
            log.error(f"the alert was not posted: {exc}")
        except httpx.HTTPError as exc:  # an alert that cannot be sent must not stop the sensor
            log.error(f"could not post the alert to the webhook: {type(exc).__name__}")


def rejection_spikes(state: StateStore, source: str, after_run: int, threshold: float) -> tuple[list[str], int]:
    """Sync runs since ``after_run`` whose rejected share of pushed items is over
    ``threshold``; and the newest run id seen."""
    messages, newest = [], after_run
    for run in state.recent_runs(source, limit=100):
        if run.id <= after_run:
            continue
        newest = max(newest, run.id)
        pushed, rejected = run.counts.get("pushed", 0), run.counts.get("rejected", 0)
        if run.kind == "sync" and pushed and rejected / pushed > threshold:
            messages.append(f"{source}/{run.resource}: {rejected} of {pushed} items rejected"
                            f" ({rejected / pushed:.0%}) in run {run.id}")
    return messages, newest


def alerts_sensor(config: Config,
                  status: dg.DefaultSensorStatus = dg.DefaultSensorStatus.RUNNING
                  ) -> dg.SensorDefinition:
    @dg.sensor(name="shopsync_alerts", minimum_interval_seconds=60, default_status=status,
               description="Every minute: rejection spikes (a run's rejected share over"
                           " `alerts.max_rejection_rate`) and newly parked items, to the logs"
                           " and the webhook (`alerts.webhook_url`); on when the location loads unless"
                           " `automation: off`")
    def _alerts(context: dg.SensorEvaluationContext, state_database: StateDatabase,
                alerts_webhook: AlertsWebhook) -> dg.SkipReason:  # resources by key
        """Rejection spikes and newly parked items since the last look."""
        seen: dict[str, int] = json.loads(context.cursor or "{}")
        messages: list[str] = []
        with state_database.open(config) as state:
            for source in config.sources:
                spikes, newest = rejection_spikes(state, source.name, seen.get(f"{source.name}:run", 0),
                                                  config.alerts.max_rejection_rate)
                messages += spikes
                seen[f"{source.name}:run"] = newest
                parked = sum(c.get(ItemStatus.PARKED.value, 0)
                             for c in state.counts(source.name).values())
                before = seen.get(f"{source.name}:parked", 0)
                if parked > before:
                    messages.append(f"{source.name}: {parked - before} more items parked (not"
                                    " visible after their re-sends, or rejected too often);"
                                    " see `shopsync rejections list`")
                seen[f"{source.name}:parked"] = parked
        deliver(messages, alerts_webhook.address(config), context.log)
        context.update_cursor(json.dumps(seen))
        return dg.SkipReason(f"{len(messages)} alert(s)" if messages else "nothing to report")

    return _alerts


def failure_cause(failures: Sequence[dg.DagsterEvent]) -> str:
    """The first failing step and its error, in one line: what a person needs to act."""
    if not failures:
        return "no step failed (the run was stopped or could not start)"
    first = failures[0]
    data = first.step_failure_data
    cause = ""
    if data.user_failure_data is not None and data.user_failure_data.description:
        cause = data.user_failure_data.description
    elif data.error is not None:
        error = data.error
        while error.cause is not None and error.cls_name and error.cls_name.startswith("Dagster"):
            error = error.cause  # the user's exception, not Dagster's wrapper of it
        cause = error.message
        if error.cls_name and f"{error.cls_name}:" in cause:  # no module path before the name
            cause = error.cls_name + cause.split(f"{error.cls_name}", 1)[1]
    cause = " ".join(cause.split()) or "no message"
    cause = cause if len(cause) <= 400 else cause[:400] + "…"
    more = f" (and {len(failures) - 1} more failed steps)" if len(failures) > 1 else ""
    return f"step {first.step_key} failed: {cause}{more}"


def failed_runs_sensor(config: Config,
                       status: dg.DefaultSensorStatus = dg.DefaultSensorStatus.RUNNING
                       ) -> dg.SensorDefinition:
    @dg.run_failure_sensor(name="shopsync_failed_runs", minimum_interval_seconds=30,
                           default_status=status,
                           description="Each failed run, with its first failing step and that"
                                       " step's error, to the logs and the webhook; on when the"
                                       " location loads unless `automation: off`")
    def _failed(context: dg.RunFailureSensorContext,
                alerts_webhook: AlertsWebhook) -> None:  # the resource by its key
        """Says which run failed and why."""
        cause = failure_cause(context.get_step_failure_events())
        deliver([f"shopsync run {context.dagster_run.run_id} ({context.dagster_run.job_name})"
                 f" failed — {cause}"],
                alerts_webhook.address(config), context.log)

    return _failed

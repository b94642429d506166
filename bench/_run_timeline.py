"""Where a run launched from the UI spent its time, from the run's own event log.

The UI's figure (launch clicked -> Success shown) is the sum of parts that have different
owners: the webserver creating the run and writing its planned events, the code server
starting the run worker (a fresh interpreter importing Dagster and the definitions), the
first step (which waits for the great-expectations import), the other steps (their sync and
Dagster's events: a step output and an evaluation per asset check) and the browser noticing
the end. Each event carries its wall-clock time, so the parts are read from ``shopsync dev``'s
Dagster instance after it stopped.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import dagster as dg
from dagster import DagsterEventType as Type


@dataclass(frozen=True)
class Timeline:
    """A run's parts in seconds, from the click to the UI showing its end (wall clock)."""

    launch: float  # clicked -> run starting
    worker_start: float  # starting -> started
    first_step: float
    other_steps: float
    steps: int
    noticed: float  # run's end -> shown
    events: int

    def rows(self) -> list[tuple[str, float]]:
        return [
            ("launch: clicked -> run starting (run, planned events)", self.launch),
            ("run worker: starting -> started (Python, Dagster, defs)", self.worker_start),
            ("first step (waits for the great-expectations import)", self.first_step),
            (f"the other {self.steps - 1} steps", self.other_steps),
            ("the UI shows Success: run's end -> shown", self.noticed),
        ]


def run_timeline(dagster_home: Path, run_id: str, clicked: float, shown: float) -> Timeline:
    """The parts of run ``run_id`` of the instance in ``dagster_home``; ``clicked`` and
    ``shown`` are wall-clock times (``time.time()``) of the launch click and of the UI
    showing the run's end."""
    with dg.DagsterInstance.from_config(str(dagster_home)) as instance:
        events = [e for e in instance.all_logs(run_id) if e.dagster_event is not None]

    def times(kind: Type) -> list[float]:
        return [e.timestamp for e in events
                if e.dagster_event is not None and e.dagster_event.event_type == kind]

    (starting,), (started,) = times(Type.RUN_STARTING), times(Type.RUN_START)
    (ended,) = times(Type.RUN_SUCCESS) or times(Type.RUN_FAILURE)
    step_starts, step_ends = times(Type.STEP_START), times(Type.STEP_SUCCESS)
    return Timeline(
        launch=starting - clicked, worker_start=started - starting,
        first_step=step_ends[0] - step_starts[0], other_steps=step_ends[-1] - step_ends[0],
        steps=len(step_ends), noticed=shown - ended, events=len(events),
    )

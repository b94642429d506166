"""What Dagster limits across runs, by name: the run tag naming a run's source and the pool
of a destination key. ``deploy/dagster.yaml`` sets the limits: one queued run per value of
``SOURCE_TAG`` (runs of one source wait for each other, a backfill too), and a default
limit for every pool (the steps sending with one destination key at once, over every run
and worker). The engine's own guard is the source's lease (``pipelines/engine/state/
lease.py``): it also covers runs Dagster does not start, such as the command line's."""

from __future__ import annotations

from pipelines.engine.config import Destination, Source

#: the run tag every job of a source carries; its value is the source's name
SOURCE_TAG = "shopsync/source"
#: the run tag naming the variable of a run's destination key (never the key), on the runs
#: the schedules of ``layout: shop_partitions`` ask for: a tag limit on it stands in for the
#: pool of a group whose shops send with several keys, where a step has no one pool
DESTINATION_TAG = "shopsync/destination"
#: seconds a step waits for another run of its source to end — a sibling step that a
#: parallel executor runs at the same time, or the command line's sync — before it fails
#: with the engine's message: as long as a long step takes
STEP_LEASE_WAIT = 3600.0


def source_tags(source: Source) -> dict[str, str]:
    """The run tags of a source's jobs."""
    return {SOURCE_TAG: source.name}


def destination_pool(destination: Destination) -> str:
    """The pool of the steps that send with ``destination``'s key: named after the variable
    holding it (never the key itself), so sources sharing a key share its budget."""
    return f"shopsync_destination_{destination.api_key_env.lower()}"

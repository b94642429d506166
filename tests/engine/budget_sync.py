"""One process of the destination-budget test (``test_budgets_destination.py``): a
``shopsync sync --source NAME`` as an operator runs it, started once the barrier file
appears. What a process does once, before its first request (imports, GX's plans of the
source's suites), is done before the barrier, so that both processes reach the destination
within a moment of each other however long their start took.

    python -m tests.engine.budget_sync SOURCE BARRIER READY   (config: $SHOPSYNC_CONFIG)
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pipelines.cli
from pipelines.engine.config import load_config
from pipelines.engine.quality.check import prepare
from pipelines.engine.runner import selected_resources


def warm_up(source: str) -> None:
    """Plan the source's quality suites now (the seconds of GX import a run's first step
    spends), as the run itself would, so that the run finds them planned."""
    config = load_config(os.environ["SHOPSYNC_CONFIG"])
    plan = selected_resources(config.source(source))
    thread = prepare([r for resources in plan.values() for r in resources])
    if thread is not None:
        thread.join()


def main(barrier: Path, ready: Path, source: str) -> None:
    warm_up(source)
    ready.touch()
    while not barrier.exists():
        time.sleep(0.002)
    sys.argv = ["shopsync", "sync", "--source", source]
    pipelines.cli.main()


if __name__ == "__main__":
    main(Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[1])

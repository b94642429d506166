"""One process of the shared-budget test (``test_budgets_processes.py``): reads every
stream of one source through the connector the engine opens for a sync (paced by its
shop's budget in the state database), without mapping or sending, so that the process is
bound by the budget rather than by its own work.

    python -m tests.engine.budget_reader shops.yaml <source>
"""

from __future__ import annotations

import asyncio
import sys

from pipelines.engine.config import load_config
from pipelines.engine.runner import SourceRunner


async def read_all(config_path: str, source: str) -> int:
    runner = SourceRunner.for_source(load_config(config_path), source)
    connector = runner.open_connector()
    records = 0
    try:
        for stream in connector.streams():
            records += sum([len(page) async for page in connector.read(stream)])
        return records
    finally:
        await connector.aclose()
        runner.state.close()


if __name__ == "__main__":
    print(asyncio.run(read_all(sys.argv[1], sys.argv[2])), "records")

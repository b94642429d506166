"""The Dagster code location of shopsync.

Assets per (source, resource) are built from the sources' config once the sync engine
exists; until then the location loads with no definitions, so that ``workspace.yaml`` and
``dg check defs`` already work.
"""

from __future__ import annotations

import dagster as dg

defs = dg.Definitions()

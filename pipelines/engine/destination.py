"""Resolving where a source's items go: its data source, by id or by label."""

from __future__ import annotations

from connectors.marketing.client import MarketingClient
from pipelines.engine.config import ConfigError, DataSourceRef


async def resolve_data_source(
    client: MarketingClient, ref: DataSourceRef, *, create: bool = True
) -> int | None:
    """The data source's id. A label is looked up and, when missing, created (unless
    ``create`` is False: then None, and a dry run says it would be created)."""
    sources = (await client.list_data_sources()).data
    if ref.id is not None:
        if not any(s.id_data_source == ref.id for s in sources):
            known = ", ".join(f"{s.id_data_source} ({s.label})" for s in sources)
            raise ConfigError([(f"data_source.id: no data source {ref.id} at the destination;"
                                f" it has: {known}")])
        return ref.id
    assert ref.label is not None
    for found in sources:
        if found.label == ref.label:
            return found.id_data_source
    if not create:
        return None
    return (await client.find_or_create_data_source(ref.label, ref.type)).id_data_source

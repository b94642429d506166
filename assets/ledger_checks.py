"""Checks about the state, not about a run: what the ledger still holds back.

Every sync asset has three: ``nothing_quarantined``, ``nothing_rejected`` and
``nothing_parked``, each counting the items in that state now, whatever the last run did —
a clean backfill does not turn them green while older items are still held back. They are
one multi-asset check per source, run after the sync assets in the sync job and again in the
reconciliation job (which moves items between these states).
"""


from collections.abc import Iterator

import dagster as dg

from assets.metadata import reasons_table
from assets.reconciliation import reconciliation_key
from pipelines.engine.config import Config, Source
from pipelines.engine.report import top_reasons
from pipelines.engine.state import ItemStatus, StateStore

#: check name -> (the state it counts, what it means)
STATE_CHECKS: dict[str, tuple[ItemStatus, str]] = {
    "nothing_quarantined": (
        ItemStatus.QUARANTINED,
        "State (the ledger now, not one run): items held back before sending because they"
        " failed validation — fix the source or the mapping; `shopsync rejections list"
        " --state quarantined`"),
    "nothing_rejected": (
        ItemStatus.REJECTED,
        "State (the ledger now, not one run): items the API refused and that are still"
        " refused — `shopsync rejections list`"),
    "nothing_parked": (
        ItemStatus.PARKED,
        "State (the ledger now, not one run): items given up on after their re-sends or"
        " rejections — `shopsync rejections retry` sends them again"),
}


def state_checks_name(source: Source) -> str:
    return f"{source.name}__ledger_state"


def state_checks(config: Config, source: Source,
                 keys: dict[str, dg.AssetKey]) -> dg.AssetChecksDefinition:
    """The state checks of every synced resource (``keys``: resource -> asset key)."""
    # after the reconciliation report when both run (the reconciliation job): it moves items
    # between the states these count
    specs = [dg.AssetCheckSpec(name, asset=key, description=description,
                               additional_deps=[reconciliation_key(source)])
             for key in keys.values() for name, (_, description) in STATE_CHECKS.items()]

    @dg.multi_asset_check(specs=specs, name=state_checks_name(source),
                          description=f"What the ledger of {source.name} still holds back,"
                                      " per resource (quarantined, rejected, parked)")
    def _check(context: dg.AssetCheckExecutionContext) -> Iterator[dg.AssetCheckResult]:
        state = StateStore(config.state_url or StateStore.default_url())
        try:
            by_resource = state.counts(source.name)  # one query for every resource
            for resource, key in keys.items():
                counts = by_resource.get(resource, {})
                for name, (status, _) in STATE_CHECKS.items():
                    held = int(counts.get(status, 0))
                    metadata: dict[str, dg.MetadataValue] = {
                        status.value: dg.MetadataValue.int(held)}
                    if held:
                        metadata["top reasons"] = reasons_table(
                            top_reasons(state, source.name, resource, states=(status,)))
                        (first,) = state.entries(source.name, resource, {status}, limit=1)
                        metadata["one item's story"] = dg.MetadataValue.text(
                            f"shopsync trace --source {source.name} --resource {resource}"
                            f" '{first.key}'")
                    yield dg.AssetCheckResult(
                        asset_key=key, check_name=name, passed=held == 0,
                        severity=dg.AssetCheckSeverity.WARN, metadata=metadata,
                        description=f"{held} {resource} {status.value} in the ledger"
                                    if held else f"no {resource} {status.value}",
                    )
        finally:
            state.close()

    return _check

"""Checks about the state, not about a run: what the ledger still holds back.

Every sync asset has three: ``nothing_quarantined``, ``nothing_rejected`` and
``nothing_parked``, each counting the items of its resource in that state in the ledger, whatever
the last run did — a clean backfill does not turn them green while older items are still held
back. The step that syncs an asset evaluates them as it ends, so that a failed step leaves
the checks of every other asset true: a check in a step of its own, after all of them, would
not run once one failed, and Dagster would show every asset's state checks as failed.

The reconciliation report has the same three over every resource of its source: a
reconciliation moves items between these states (it parks what never arrived), and says so
there at once rather than at the next sync.
"""

from collections.abc import Iterator, Mapping

import dagster as dg

from assets.metadata import reasons_table
from pipelines.engine.report import top_reasons
from pipelines.engine.state import ItemStatus, StateStore

#: check name -> (the state it counts, what it means)
STATE_CHECKS: dict[str, tuple[ItemStatus, str]] = {
    "nothing_quarantined": (
        ItemStatus.QUARANTINED,
        "items held back before sending because they failed validation — fix the source or"
        " the mapping; `shopsync rejections list --state quarantined`"),
    "nothing_rejected": (
        ItemStatus.REJECTED,
        "items the API refused and that are still refused — `shopsync rejections list`"),
    "nothing_parked": (
        ItemStatus.PARKED,
        "items given up on after their re-sends or rejections — `shopsync rejections retry`"
        " sends them again"),
}
#: when the checks of a sync asset and of the reconciliation report are evaluated
_OF_ASSET = "State (the ledger when this asset's sync step ended, not what the run did): "
_OF_SOURCE = ("State (the ledger when this reconciliation ended, every resource of the"
              " source): ")


def state_check_specs(key: dg.AssetKey, *, whole_source: bool = False
                      ) -> list[dg.AssetCheckSpec]:
    """The three state checks of the asset ``key``: a sync asset's, or with ``whole_source``
    the reconciliation report's."""
    when = _OF_SOURCE if whole_source else _OF_ASSET
    return [dg.AssetCheckSpec(name, asset=key, description=when + meaning)
            for name, (_, meaning) in STATE_CHECKS.items()]


def state_check_results(state: StateStore, source: str, keys: Mapping[str, dg.AssetKey]
                        ) -> dict[str, list[dg.AssetCheckResult]]:
    """Resource -> its three state checks evaluated now (``keys``: resource -> asset key):
    the counts, and for what is held back its top reasons and one item to trace."""
    counts = state.counts(source)  # one query for every resource
    return {resource: list(_results(state, source, resource, key, counts.get(resource, {})))
            for resource, key in keys.items()}


def source_state_results(counts: Mapping[str, Mapping[str, int]], key: dg.AssetKey
                         ) -> list[dg.AssetCheckResult]:
    """The three state checks of the reconciliation report ``key``, from the ledger's
    ``counts`` of every resource of its source (resource -> state -> items), with the counts
    per resource."""
    results = []
    for name, (status, _) in STATE_CHECKS.items():
        held = {resource: n for resource, by in sorted(counts.items())
                if (n := int(by.get(status, 0)))}
        metadata: dict[str, dg.MetadataValue] = {status.value: dg.MetadataValue.int(
            sum(held.values()))}
        description = f"nothing {status.value}"
        if held:
            metadata[f"{status.value} by resource"] = dg.MetadataValue.table(
                records=[dg.TableRecord({"resource": r, "items": n}) for r, n in held.items()],
                schema=dg.TableSchema(columns=[dg.TableColumn("resource", "string"),
                                               dg.TableColumn("items", "int")]))
            description = (", ".join(f"{n} {r}" for r, n in held.items())
                           + f" {status.value} in the ledger")
        results.append(dg.AssetCheckResult(
            asset_key=key, check_name=name, passed=not held,
            severity=dg.AssetCheckSeverity.WARN, metadata=metadata, description=description))
    return results


def _results(state: StateStore, source: str, resource: str, key: dg.AssetKey,
             counts: Mapping[str, int]) -> Iterator[dg.AssetCheckResult]:
    for name, (status, _) in STATE_CHECKS.items():
        held = int(counts.get(status, 0))
        metadata: dict[str, dg.MetadataValue] = {status.value: dg.MetadataValue.int(held)}
        if held:
            metadata["top reasons"] = reasons_table(
                top_reasons(state, source, resource, states=(status,)))
            (first,) = state.entries(source, resource, {status}, limit=1)
            metadata["one item's story"] = dg.MetadataValue.text(
                f"shopsync trace --source {source} --resource {resource} '{first.key}'")
        yield dg.AssetCheckResult(
            asset_key=key, check_name=name, passed=held == 0,
            severity=dg.AssetCheckSeverity.WARN, metadata=metadata,
            description=f"{held} {resource} {status.value} in the ledger"
                        if held else f"no {resource} {status.value}",
        )

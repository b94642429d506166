"""What a person reads about a source: items by state, the reasons items were held back,
and reconciliation over recent runs — as data, and as Markdown for the Dagster UI and the
terminal."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from pipelines.engine.lag import describe_lag
from pipelines.engine.state import ItemStatus, StateStore

STATES = ("accepted", "visible", "rejected", "quarantined", "failed", "parked", "deleted")
HELD_BACK = (ItemStatus.REJECTED, ItemStatus.PARKED, ItemStatus.QUARANTINED)
_BARS = "▁▂▃▄▅▆▇█"


#: fewer points than this make no chart: one bar of one run says nothing
MIN_POINTS = 3


def sparkline(values: list[float]) -> str:
    """A small chart in one line of text, or what it waits for when there are too few
    points to draw one."""
    if len(values) < MIN_POINTS:
        return f"(a chart from {MIN_POINTS} runs on; {len(values)} so far)"
    top = max(values) or 1
    return "".join(_BARS[min(len(_BARS) - 1, int(v / top * (len(_BARS) - 1)))] for v in values)


def chart(values: list[float]) -> str:
    """A sparkline as Markdown code, or the note of why there is none yet."""
    line = sparkline(values)
    return line if line.startswith("(") else f"`{line}`"


def top_reasons(state: StateStore, source: str, resource: str, limit: int = 5,
                scan: int = 5000, states: Collection[ItemStatus] = HELD_BACK
                ) -> list[tuple[str, int]]:
    """The most frequent reasons items of ``resource`` in ``states`` (held back, unless told)
    were held back, over the first ``scan`` such items."""
    reasons: Counter[str] = Counter()
    for entry in state.entries(source, resource, set(states), limit=scan):
        reasons.update(entry.errors or ["(no reason given)"])
    return reasons.most_common(limit)


@dataclass
class SourceSummary:
    source: str
    items: dict[str, dict[str, int]]
    reasons: dict[str, list[tuple[str, int]]]
    reconciliations: list[dict[str, Any]] = field(default_factory=list)
    #: resource -> the last audit of the destination: when, and what it found
    audits: dict[str, dict[str, Any]] = field(default_factory=dict)

    def markdown(self) -> str:
        lines = [f"### {self.source}", "",
                 "| resource | " + " | ".join(STATES) + " |",
                 "|---|" + "---:|" * len(STATES)]
        for resource, counts in sorted(self.items.items()):
            lines.append(f"| {resource} | "
                         + " | ".join(str(counts.get(s, 0)) for s in STATES) + " |")
        if any(self.reasons.values()):
            lines += ["", "**Held back** (top reasons)", "", "| resource | reason | items |",
                      "|---|---|---:|"]
            for resource, reasons in sorted(self.reasons.items()):
                for reason, n in reasons:
                    lines.append(f"| {resource} | {reason.replace('|', '/')} | {n} |")
        runs = list(reversed(self.reconciliations))  # oldest first
        if runs:
            pending = [float(r.get("pending", 0)) for r in runs]
            last = runs[-1]
            lines += ["", f"**Reconciliation**, last {len(runs)} runs (oldest → newest)", "",
                      (f"- pending (accepted, not yet seen): {chart(pending)} now"
                       f" {int(pending[-1])}"),
                      *lag_lines(runs),
                      (f"- last run: {last.get('visible', 0)} confirmed, {last.get('resent', 0)}"
                       f" re-sent, {last.get('parked', 0)} parked, {last.get('deleted', 0)}"
                       " deleted")]
        if self.audits:
            lines += ["", "**Last audit** (items the ledger holds as visible, read again from"
                      " the destination)", "",
                      "| resource | when | checked | missing | different | re-sent |"
                      " not checked |", "|---|---|---:|---:|---:|---:|---:|"]
            for resource, audit in sorted(self.audits.items()):
                lines.append(f"| {resource} | {audit_line(audit)} |")
        return "\n".join(lines)


def lag_lines(runs: list[dict[str, Any]]) -> list[str]:
    """The visibility lag and the time to confirmation over the reconciliation runs that
    confirmed items (oldest first): p95 each, the lag as an upper bound with its resolution."""
    confirming = [r for r in runs if r.get("visibility_lag_p95") is not None]
    if not confirming:
        return []
    lag = [float(r["visibility_lag_p95"]) for r in confirming]
    confirmation = [float(r.get("time_to_confirmation_p95") or 0) for r in confirming]
    last = confirming[-1]
    now = describe_lag(last["visibility_lag_p95"], last.get("visibility_lag_resolution"))
    return [f"- visibility lag p95 (s, acceptance → first seen): {chart(lag)} now {now}",
            (f"- time to confirmation p95 (s, acceptance → confirmed here):"
             f" {chart(confirmation)} now {confirmation[-1]:.1f} s")]


def audit_line(audit: dict[str, Any]) -> str:
    """One audit's figures as the cells of a Markdown row (from ``when`` on)."""
    sample = " (sample)" if audit.get("sample") else ""
    failed = " (failed)" if audit.get("status") != "succeeded" else ""
    return " | ".join([f"{audit['at']}{sample}{failed}",
                       *(str(audit.get(n, 0)) for n in
                         ("checked", "missing", "different", "resent", "unchecked"))])


def summarize(state: StateStore, source: str, history: int = 20) -> SourceSummary:
    items = state.counts(source)
    reasons = {r: top_reasons(state, source, r) for r in items}
    runs = [r.counts | {"started_at": r.started_at.isoformat()}
            for r in state.recent_runs(source, limit=200)
            if r.kind == "reconcile" and r.status == "succeeded"][:history]
    audits = {resource: run.counts | {"at": f"{(run.finished_at or run.started_at):%Y-%m-%d %H:%M}"
                                       " UTC", "status": run.status}
              for resource, run in state.latest_runs(source, "audit").items()}
    return SourceSummary(source, items, {r: v for r, v in reasons.items() if v}, runs, audits)

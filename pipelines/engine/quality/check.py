"""Run a resource's quality suite on a batch of mapped items; say which items to hold back.

The engine calls ``check_items`` once per resource and chunk, after the item models and
before diffing. Items breaking a blocking rule are quarantined with the rule's name; the
rest flow on. ``summarize`` folds a run's reports into what the Dagster asset check shows.

Cost (GX imports about 3 s, so it is imported on the first call only): each expectation
costs GX a few ms per batch whatever its size, so a batch is validated twice at most: the
whole suite with ``BOOLEAN_ONLY`` (cheap, and all a clean batch needs), then only the
failed expectations again with ``COMPLETE`` and ``unexpected_index_column_names=["_key"]``
to learn which items broke them.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pipelines.engine.quality.suites import AMOUNTS, LINES, Rule, Suite, rules_for

if TYPE_CHECKING:
    import pandas as pd
    from great_expectations.core.batch_definition import BatchDefinition
    from great_expectations.core.expectation_suite import ExpectationSuite

#: failing item keys kept per rule in ``results`` (and in Dagster metadata)
SAMPLE = 20
_COMPLETE: dict[str, Any] = {
    "result_format": "COMPLETE",
    "unexpected_index_column_names": ["_key"],
    "return_unexpected_index_query": False,
    "partial_unexpected_count": 0,
    "exclude_unexpected_values": True,
}


@dataclass(frozen=True)
class QualityReport:
    """What one batch's checks found; ``results`` is JSON-safe (for Dagster metadata)."""

    resource: str
    rows: int
    failures: dict[str, list[str]]  # item key -> names of the blocking rules it broke
    warnings: dict[str, int]  # rule name -> items breaking that non-blocking rule
    results: list[dict[str, Any]]  # per rule: name, blocking, success, unexpected_count, ...
    seconds: float

    def reasons(self, key: str) -> list[str]:
        """Quarantine reasons for ``key``: ``quality: <rule name> — <what it expects>``."""
        described = {r["name"]: r["description"] for r in self.results}
        return [f"quality: {name} — {described[name]}" for name in self.failures.get(key, ())]


@dataclass
class _Compiled:
    """A resource's GX objects, built once per process: suites and batch definitions."""

    suite: Suite
    batches: dict[str, BatchDefinition]
    gx_suites: dict[str, ExpectationSuite]
    rules_by_id: dict[str, Rule]


_lock = threading.Lock()
_context: Any = None
_compiled: dict[str, _Compiled] = {}


def _gx_context() -> Any:
    """The process's ephemeral GX context: no files, no progress bars, no analytics."""
    global _context
    if _context is None:
        import os

        os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
        import great_expectations as gx
        from great_expectations.data_context.types.base import ProgressBarsConfig

        context = gx.get_context(mode="ephemeral")
        context.variables.progress_bars = ProgressBarsConfig(globally=False)
        context.data_sources.add_pandas("shopsync")
        _context = context
    return _context


def _compile(resource: str) -> _Compiled | None:
    with _lock:
        if resource in _compiled:
            return _compiled[resource]
        suite = rules_for(resource)
        if suite is None:
            return None
        import great_expectations as gx

        context = _gx_context()
        source = context.data_sources.get("shopsync")
        batches, gx_suites, by_id = {}, {}, {}
        for frame in ("items", "lines"):
            rules = suite.on(frame)
            if not rules:
                continue
            name = f"{resource}.{frame}"
            batches[frame] = source.add_dataframe_asset(name).add_batch_definition_whole_dataframe(
                "batch")
            gx_suite = context.suites.add(gx.ExpectationSuite(
                name=name, expectations=[r.expectation for r in rules]))
            # the stored suite's expectations carry ids: results map back to rules by them
            for rule, stored in zip(rules, gx_suite.expectations, strict=True):
                by_id[str(stored.id)] = rule
            gx_suites[frame] = gx_suite
        _compiled[resource] = _Compiled(suite, batches, gx_suites, by_id)
        return _compiled[resource]


def _get(item: Mapping[str, Any], path: str) -> Any:
    value: Any = item
    for part in path.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def _lines(item: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    lines = item.get(LINES)
    return [line for line in lines if isinstance(line, Mapping)] if isinstance(lines, list) else []


def _amounts_min(item: Mapping[str, Any], fields: Sequence[str]) -> float | None:
    numbers = []
    for path in fields:
        if path.startswith(f"{LINES}[]."):
            sub = path.removeprefix(f"{LINES}[].")
            numbers += [_number(line.get(sub)) for line in _lines(item)]
        else:
            numbers.append(_number(_get(item, path)))
    present = [n for n in numbers if n is not None]
    return min(present) if present else None


def item_frame(suite: Suite, items: Sequence[tuple[str, Mapping[str, Any]]]) -> pd.DataFrame:
    """One row per item: ``_key`` and the columns the suite's rules read."""
    import pandas as pd

    data: dict[str, Any] = {"_key": [key for key, _ in items]}
    for column, kind in suite.shape.columns.items():
        values = [_get(item, column) for _, item in items]
        if kind == "id":
            data[column] = [None if v is None or v == "" else v for v in values]
        elif kind == "text":
            data[column] = ["" if v is None else str(v) for v in values]
        elif kind == "num":
            data[column] = pd.Series([_number(v) for v in values], dtype="float64")
        elif kind == "ts":
            texts = pd.Series([v if isinstance(v, str) else None for v in values], dtype=object)
            data[column] = pd.to_datetime(texts, utc=True, errors="coerce", format="ISO8601")
        else:
            data[column] = values
    if suite.shape.amounts:
        data[AMOUNTS] = pd.Series([_amounts_min(item, suite.shape.amounts) for _, item in items],
                                  dtype="float64")
    return pd.DataFrame(data)


def line_frame(items: Sequence[tuple[str, Mapping[str, Any]]]) -> pd.DataFrame:
    """One row per order line: ``_key`` (its item's) and ``product_id`` as text."""
    import pandas as pd

    keys, products = [], []
    for key, item in items:
        for line in _lines(item):
            keys.append(key)
            product = line.get("product_id")
            products.append(None if product is None else str(product))
    return pd.DataFrame({"_key": keys, "product_id": products})


def _keys(index_list: Iterable[Mapping[str, Any]]) -> list[str]:
    """Distinct item keys of an ``unexpected_index_list``: with ``exclude_unexpected_values``
    it is one ``{"_key": [k1, k2, ...]}``, otherwise one ``{"_key": k, <column>: v}`` a row."""
    keys: dict[str, None] = {}
    for row in index_list:
        value = row.get("_key")
        for key in value if isinstance(value, list) else [value]:
            keys[str(key)] = None
    return list(keys)


def _validate(compiled: _Compiled, frame: str, df: pd.DataFrame,
              parameters: dict[str, Any] | None) -> list[tuple[Rule, int, list[str], str | None]]:
    """(rule, items failing, their keys, error) for each rule of ``frame`` on ``df``."""
    batch = compiled.batches[frame].get_batch(batch_parameters={"dataframe": df})
    first = batch.validate(compiled.gx_suites[frame], result_format="BOOLEAN_ONLY",
                           expectation_parameters=parameters)
    found = []
    for result in first.results:
        rule = compiled.rules_by_id[str(result.expectation_config.id)]
        if result.success:
            found.append((rule, 0, [], None))
            continue
        detail = batch.validate(rule.expectation, result_format=_COMPLETE,
                                expectation_parameters=parameters)
        error = detail.exception_info or {}
        if error.get("raised_exception"):
            found.append((rule, 0, [], str(error.get("exception_message"))))
            continue
        keys = _keys(detail.result.get("unexpected_index_list") or ())
        found.append((rule, len(keys), keys, None))
    return found


def check_items(
    resource: str,
    items: Sequence[tuple[str, Mapping[str, Any]]],
    *,
    known: Mapping[str, set[str]] | None = None,
) -> QualityReport:
    """Validate ``(key, item)`` pairs of ``resource`` with its suite.

    ``known["products"]`` holds the product ids (as text, without the lang part of ledger
    keys) that order and cart lines may refer to; without it that rule is skipped.
    """
    started = time.perf_counter()
    compiled = _compile(resource) if items else None
    if compiled is None:
        return QualityReport(resource, len(items), {}, {}, [], time.perf_counter() - started)
    outcomes = _validate(compiled, "items", item_frame(compiled.suite, items), None)
    skipped: list[Rule] = []
    if "lines" in compiled.batches:
        products = None if known is None else known.get("products")
        lines = line_frame(items) if products is not None else None
        if lines is None or lines.empty:
            skipped = list(compiled.suite.on("lines"))
        else:
            outcomes += _validate(compiled, "lines", lines,
                                  {"known_products": sorted(map(str, products))})
    failures: dict[str, list[str]] = {}
    warnings: dict[str, int] = {}
    results: list[dict[str, Any]] = []
    for rule, count, keys, error in outcomes:
        if rule.blocking:
            for key in keys:
                failures.setdefault(key, []).append(rule.name)
        elif count:
            warnings[rule.name] = count
        results.append(_result(rule, success=count == 0 and error is None,
                               unexpected=count, keys=keys, error=error))
    results += [_result(rule, success=True, unexpected=0, keys=[],
                        skipped="no order lines or no known product ids given")
                for rule in skipped]
    return QualityReport(resource, len(items), failures, warnings, results,
                         time.perf_counter() - started)


def _result(rule: Rule, *, success: bool, unexpected: int, keys: list[str],
            error: str | None = None, skipped: str | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {
        "name": rule.name, "blocking": rule.blocking, "success": success,
        "unexpected_count": unexpected, "sample": keys[:SAMPLE],
        "description": rule.description,
    }
    if error is not None:
        result["error"] = error
    if skipped is not None:
        result["skipped"] = skipped
    return result


def summarize(reports: Iterable[QualityReport]) -> dict[str, Any]:
    """A run's reports of one resource folded into one JSON-safe summary, rule by rule."""
    rows = blocked = 0
    seconds = 0.0
    rules: dict[str, dict[str, Any]] = {}
    for report in reports:
        rows += report.rows
        blocked += len(report.failures)
        seconds += report.seconds
        for result in report.results:
            into = rules.setdefault(result["name"], {
                "name": result["name"], "blocking": result["blocking"], "success": True,
                "unexpected_count": 0, "sample": [], "description": result["description"],
            })
            into["success"] = into["success"] and result["success"]
            into["unexpected_count"] += result["unexpected_count"]
            room = SAMPLE - len(into["sample"])
            into["sample"] += result["sample"][:room]
            for extra in ("error", "skipped"):
                if extra in result:
                    into[extra] = result[extra]
    return {"rows": rows, "blocked": blocked, "seconds": round(seconds, 4),
            "rules": list(rules.values())}


def rules_markdown(summary: Mapping[str, Any]) -> str:
    """The summary's rules as a Markdown table (for ``MetadataValue.md``)."""
    lines = ["| rule | blocking | failing items | sample keys | expects |",
             "|---|---|---|---|---|"]
    for rule in summary["rules"]:
        status = rule.get("error") and f"error: {rule['error']}" or rule.get("skipped")
        sample = ", ".join(f"`{k}`" for k in rule["sample"][:5])
        lines.append(f"| `{rule['name']}` | {'yes' if rule['blocking'] else 'no'} | "
                     f"{status or rule['unexpected_count']} | {sample} | {rule['description']} |")
    return "\n".join(lines)

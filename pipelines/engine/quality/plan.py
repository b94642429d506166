"""A suite's great-expectations validation, planned once per process and run on each batch.

``batch.validate`` redoes, for every batch, work that depends only on the suite: it builds a
batch and a validator, turns each expectation into its domain object (whose ``configuration``
GX then rebuilds from the pydantic model ~90 times per expectation and batch), derives the
graph of metrics each one needs, and serialises every result. On the engine's batches — a
resource's changed items in one chunk, often a few dozen — that is three quarters of its
cost, paid per expectation whatever the batch's size.

A plan does that work once per rule and result format (a ``_Step``). For each batch it loads
the frame under the plan's batch id, has GX resolve the union of the chosen steps' metric
graphs (one pass over the data, metrics shared between rules computed once), and has each
expectation judge its metrics with ``Expectation._validate`` — what GX's own validator calls.
These are the building blocks of GX's ``Validator.graph_validate`` (GX 1.x, pinned below 2);
``tests/engine/test_quality_plan.py`` compares a plan's findings with ``batch.validate``'s rule by
rule on every suite, so a GX release that changes them fails there. A metric that raises is
reported on the rules that need it, as GX does, with its message.

GX classes are imported inside the functions: loading this module is free.
"""

from __future__ import annotations

import copy
import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import pandas as pd
    from great_expectations.core.batch_definition import BatchDefinition
    from great_expectations.execution_engine import PandasExecutionEngine
    from great_expectations.expectations import Expectation
    from great_expectations.validator.metrics_calculator import MetricsCalculator
    from great_expectations.validator.validation_graph import (
        ExpectationValidationGraph,
        MetricEdge,
    )

#: "boolean": pass or fail only (about half the cost); "complete": also the keys of the items
#: breaking the rule (the frame's ``_key`` column)
Format = Literal["boolean", "complete"]
_RESULT_FORMATS: dict[Format, Any] = {
    "boolean": "BOOLEAN_ONLY",
    "complete": {
        "result_format": "COMPLETE",
        "unexpected_index_column_names": ["_key"],
        "return_unexpected_index_query": False,
        "partial_unexpected_count": 0,
        "exclude_unexpected_values": True,
    },
}


@dataclass(frozen=True)
class Finding:
    """One rule on one batch: whether it held, the keys of the items breaking it (complete
    format only), or why GX could not evaluate it."""

    success: bool
    keys: list[str]
    error: str | None = None


@dataclass(frozen=True)
class _Step:
    """One expectation in one result format, as GX's validator would prepare it."""

    expectation: Expectation
    metrics: dict[str, Any]  # the metric configurations it judges, by metric name
    result_format: Any  # as ``get_validation_dependencies`` parsed it
    graph: ExpectationValidationGraph
    edges: list[MetricEdge]


class Plan:
    """The expectations of one suite, by rule name, ready to run on any frame of its columns.

    Its runs take turns (a lock): each loads its frame under the plan's one batch id.
    """

    def __init__(self, name: str, expectations: Mapping[str, Expectation]) -> None:
        from great_expectations.execution_engine import PandasExecutionEngine
        from great_expectations.validator.metrics_calculator import MetricsCalculator

        self.batch_id = f"shopsync-{name}"
        # its own engine: no metric cache to go stale under the fixed batch id, and no other
        # suite's frame beside this one's
        self._engine: PandasExecutionEngine = PandasExecutionEngine(caching=False)
        self._calculator: MetricsCalculator = MetricsCalculator(self._engine,
                                                                show_progress_bars=False)
        self._expectations = dict(expectations)
        self._steps: dict[tuple[str, Format], _Step] = {}
        #: runs take turns, and a step is made between them, once, by whichever thread
        #: needs it first (``ready`` or a run)
        self._lock = threading.Lock()

    def ready(self, formats: Mapping[str, Iterable[Format]]) -> None:
        """Prepare the steps of each rule in each of its formats now, not at its first run
        (about 25 ms each): for a thread that plans ahead of the batches, while they may
        already run (a step is made once, whichever thread comes first)."""
        for rule, wanted in formats.items():
            for fmt in wanted:
                try:
                    self._step(rule, fmt)
                except Exception:  # noqa: BLE001 - its run reports it, as it always has
                    continue

    def _step(self, rule: str, fmt: Format) -> _Step:
        step = self._steps.get((rule, fmt))
        if step is None:
            with self._lock:
                step = self._steps.get((rule, fmt))
                if step is None:
                    step = self._steps[rule, fmt] = self._prepare(rule, fmt)
        return step

    def _prepare(self, rule: str, fmt: Format) -> _Step:
        from great_expectations.validator.validation_graph import ExpectationValidationGraph

        config = copy.deepcopy(self._expectations[rule].configuration)
        config.kwargs["batch_id"] = self.batch_id
        expectation = config.to_domain_obj()
        runtime = {"result_format": copy.deepcopy(_RESULT_FORMATS[fmt])}
        dependencies = expectation.get_validation_dependencies(
            execution_engine=self._engine, runtime_configuration=runtime)
        graph = self._calculator.build_metric_dependency_graph(
            metric_configurations=dependencies.get_metric_configurations(),
            runtime_configuration=runtime)
        return _Step(expectation, dict(dependencies.metric_configurations),
                     dependencies.result_format, ExpectationValidationGraph(config, graph),
                     list(graph.edges))

    def run(self, frame: pd.DataFrame, formats: Mapping[str, Format]) -> dict[str, Finding]:
        """Each rule of ``formats`` (by name) on ``frame``, in the format given."""
        from great_expectations.execution_engine.pandas_batch_data import PandasBatchData
        from great_expectations.validator.validation_graph import ValidationGraph

        found: dict[str, Finding] = {}
        steps: dict[str, _Step] = {}
        for rule, fmt in formats.items():
            try:
                steps[rule] = self._step(rule, fmt)
            except Exception as exc:  # noqa: BLE001 - as GX reports an expectation it cannot plan
                found[rule] = Finding(False, [], _why(exc))
        if steps:
            graph = ValidationGraph(self._engine, edges=[
                edge for step in steps.values() for edge in step.edges])
            with self._lock:
                cache = self._engine.batch_manager.batch_data_cache
                self._engine.load_batch_data(self.batch_id, PandasBatchData(self._engine, frame))
                try:
                    resolved, aborted = self._calculator.resolve_validation_graph(
                        graph=graph, runtime_configuration={}, min_graph_edges_pbar_enable=0)
                finally:
                    cache.pop(self.batch_id, None)  # the frame is not kept past its batch
            found.update((rule, self._judge(step, resolved, aborted))
                         for rule, step in steps.items())
        return {rule: found[rule] for rule in formats}

    def _judge(self, step: _Step, resolved: Mapping[Any, Any], aborted: Mapping[Any, Any]
               ) -> Finding:
        failed = step.graph.get_exception_info(metric_info=dict(aborted)) if aborted else {}
        if failed:  # a metric it needs raised (GX retried it): the rule cannot be judged
            return Finding(False, [], _message(failed.values()))
        try:
            metrics = {name: resolved[config.id] for name, config in step.metrics.items()}
            outcome = step.expectation._validate(
                metrics=metrics,
                runtime_configuration={"result_format": copy.deepcopy(step.result_format)},
                execution_engine=self._engine)
        except Exception as exc:  # noqa: BLE001 - GX reports a raising expectation as an error
            return Finding(False, [], _why(exc))
        if not isinstance(outcome, Mapping):  # an ExpectationValidationResult
            outcome = {"success": outcome.success, "result": outcome.result}
        result = outcome.get("result") or {}
        return Finding(bool(outcome["success"]), keys(result.get("unexpected_index_list") or ()))


def _why(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def _message(infos: Iterable[Any]) -> str:
    for info in infos:
        message = info.get("exception_message") if isinstance(info, Mapping) else None
        if message:
            return str(message)
    return "a metric could not be computed"


def keys(index_list: Iterable[Mapping[str, Any]]) -> list[str]:
    """Distinct item keys of an ``unexpected_index_list``: with ``exclude_unexpected_values``
    it is one ``{"_key": [k1, k2, ...]}``, otherwise one ``{"_key": k, <column>: v}`` a row."""
    found: dict[str, None] = {}
    for row in index_list:
        value = row.get("_key")
        for key in value if isinstance(value, list) else [value]:
            found[str(key)] = None
    return list(found)


def reference(frame: pd.DataFrame, expectations: Mapping[str, Expectation], fmt: Format
              ) -> dict[str, Finding]:
    """The same findings through GX's public route, ``batch.validate``: what a plan is
    compared with (tests, ``bench/quality.py``), never the engine's path."""
    import great_expectations as gx

    suite = gx.ExpectationSuite(name="reference", expectations=[
        copy.copy(e) for e in expectations.values()])  # an expectation belongs to one suite
    batch = _reference_batches().get_batch(batch_parameters={"dataframe": frame})
    found: dict[str, Finding] = {}
    for result in batch.validate(suite, result_format=copy.deepcopy(_RESULT_FORMATS[fmt])).results:
        config = result.expectation_config
        assert config is not None and config.meta, "GX results carry their expectation's meta"
        info = result.exception_info or {}
        error = None
        if info.get("raised_exception"):
            error = str(info.get("exception_message"))
        elif info and not isinstance(info.get("raised_exception"), bool):
            error = _message(info.values())  # a metric's error, keyed by the metric's id
        found[config.meta["rule"]] = Finding(
            bool(result.success) and error is None, [] if error else keys(
                (result.result or {}).get("unexpected_index_list") or ()), error)
    return found


@cache
def _reference_batches() -> BatchDefinition:
    """A whole-dataframe batch definition on an ephemeral context: no files, no progress
    bars, no analytics."""
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    return context.data_sources.add_pandas("shopsync").add_dataframe_asset(
        "frame").add_batch_definition_whole_dataframe("batch")

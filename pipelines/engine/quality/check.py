"""Run a resource's quality suite on a batch of mapped items; say which items to hold back.

The engine calls ``check_items`` once per resource and chunk, after the item models and
before diffing. Items breaking a blocking rule are quarantined with the rule's name; the
rest flow on. ``summarize`` folds a run's reports — these, and those of the rows held back
before the suite (``held.py``) — into what the Dagster asset check shows.

Cost: GX and the packages it shares take ~1.5 CPU-s to import (``deferred.py`` leaves out
the half our rules never use). A sync starts that import in a thread (``prepare``) when a
chunk first has items to check — a source's first sync at its start, as it will send
everything — and it overlaps the reading: a stream whose suite is not planned yet reads
ahead (``suite_pending``, ``engine/read_ahead.py``) instead of stalling on that chunk; a
sync that finds nothing changed never pays it. Each suite is planned once per process
(``plan.py``), the first step of each rule too: per batch GX then only resolves the
metrics of the rules and judges them, about a quarter of what ``batch.validate`` costs.
That cost is per rule and batch more than per row, so:

- the engine checks only the items it would send (unchanged ones never reach the suite),
  and skips the rules the item models already guarantee (``after_models``);
- each field a chunk's rules need is read once (``frame.column_values``), its order lines
  once as a whole (``frame.ChunkLines``);
- a rule decided by one column's value (codes, emails, stock, lines to unknown products:
  ``Rule.by_value``) has GX judge only the values that neither it nor a rule deciding
  alike in another suite has judged before (``_verdicts``), and the chunk's failing items
  are found from the verdicts kept (``verdicts.py``);
- a warning decided row by row (timestamps and amounts in order: ``Rule.pooled``) is
  judged over five chunks at once in a sync (``Pool``): it holds nothing back, so no chunk
  waits for it;
- the other rules share one GX pass over the chunk's frame, first in GX's cheap
  ``BOOLEAN_ONLY`` format; only rules that fail are run again in ``COMPLETE`` with
  ``unexpected_index_column_names`` to learn which items broke them — unless the rule
  failed on the previous batch, when it goes straight to ``COMPLETE`` (bad data comes in
  runs) (``_judge_frame``).

A rule GX cannot evaluate holds nothing back; it shows as failed with its error in the
results. Calls are meant to come from one thread at a time, as the engine makes them.
"""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from pipelines.engine.collector import freeze_held
from pipelines.engine.quality.frame import ChunkLines, Row, column_values, kind_of, typed_frame
from pipelines.engine.quality.plan import Finding, Format, Plan
from pipelines.engine.quality.suites import Kind as ColumnKind
from pipelines.engine.quality.suites import Rule, Suite, rules_for
from pipelines.engine.quality.verdicts import Verdicts

if TYPE_CHECKING:
    import pandas as pd

#: failing item keys kept per rule in ``results`` (and in Dagster metadata)
SAMPLE = 20
#: the stages that hold an item back, in the order the engine runs them: bounds and
#: decoding, the mapping, the item models, this suite (``held.py``)
Kind = Literal["limit", "mapping", "model", "suite"]
KINDS: tuple[Kind, ...] = ("limit", "mapping", "model", "suite")


@dataclass(frozen=True)
class QualityReport:
    """What one batch's checks found; ``results`` is JSON-safe (for Dagster metadata)."""

    resource: str
    rows: int
    failures: dict[str, list[str]]  # item key -> names of the blocking rules it broke
    warnings: dict[str, int]  # rule name -> items breaking that non-blocking rule
    results: list[dict[str, Any]]  # per rule: name, kind, blocking, success, unexpected_count…
    seconds: float
    #: the suite judged these rows; False for rows held back before it (``held.py``)
    by_suite: bool = True

    def reasons(self, key: str) -> list[str]:
        """Quarantine reasons for ``key``: ``quality: <rule name> — <what it expects>``."""
        described = {r["name"]: r["description"] for r in self.results}
        return [f"quality: {name} — {described[name]}" for name in self.failures.get(key, ())]


@dataclass
class _Compiled:
    """A resource's suite as GX runs it, built once per process (and profile): the rules by
    name, their plan, and the frame columns they read."""

    suite: Suite
    columns: frozenset[str]
    plan: Plan
    rules: dict[str, Rule]
    #: the rules the last batch broke: the next batch likely breaks them too
    failing: set[str] = field(default_factory=set)
    #: what each rule decided by value said of the values it judged, by rule name: shared
    #: with the rules of other suites that decide alike (``_verdicts``)
    verdicts: dict[str, Verdicts] = field(default_factory=dict)


_lock = threading.Lock()
_compiled: dict[tuple[str, bool], _Compiled | None] = {}
#: the verdicts of the rules decided by value, one store per way of deciding: GX's
#: configuration of the rule without its column, and the kind of that column. The
#: customers' ``email`` and the orders' ``customer.email`` share one (a sync judges a shop's
#: customers before their orders, which then find their emails judged), and every suite's
#: language and currency rules one each
_verdicts: dict[tuple[str, ColumnKind, str], Verdicts] = {}
#: the thread ``prepare`` started last (None: none yet)
_preparing: threading.Thread | None = None
#: (wall, CPU seconds) of each ``prepare`` thread that ended: the import, then the plans
prepared: list[tuple[float, float]] = []


def _compile(resource: str, after_models: bool) -> _Compiled | None:
    with _lock:
        if (resource, after_models) not in _compiled:
            _compiled[resource, after_models] = _build(resource, after_models)
        return _compiled[resource, after_models]


def _ready(compiled: _Compiled | None) -> None:
    """The first step of each rule of ``compiled``, made now (``Plan.ready``): in the
    format it first runs in (``_validate``), so that no chunk pays for it."""
    if compiled is not None:
        compiled.plan.ready({name: ("complete",) if rule.by_value else ("boolean",)
                             for name, rule in compiled.rules.items()})


#: packages the GX import loads that the rest of the process uses from its own threads (the
#: ledger and Dagster's storage through SQLAlchemy, the file and database sources through
#: pandas and pyarrow). They are imported before the thread starts: while one thread runs a
#: package's import, another can reach its half-initialised modules — a Dagster step once
#: failed on ``sqlalchemy.orm.exc`` having no ``UnmappedClassError`` yet.
SHARED_WITH_GX = ("sqlalchemy.orm", "pandas", "pyarrow")


def prepare(resources: Iterable[str]) -> threading.Thread | None:
    """Import GX and plan the suites of ``resources`` in a thread, while the caller goes on
    reading: the import is seconds of CPU that would otherwise stall the first chunk. The
    first ``check_items`` of a resource waits for its plan (the lock), never plans it twice.
    None when every suite is planned already (every step of a run after the first)."""
    todo = [r for r in resources if (r, True) not in _compiled]
    if not todo:
        return None
    for name in SHARED_WITH_GX:  # whole before any other thread imports them
        importlib.import_module(name)

    def plan_all() -> None:
        wall, cpu = time.perf_counter(), time.thread_time()
        # every plan first: a stream waits for its suite's plan (``suite_pending``), not
        # for its steps, which a chunk makes itself when it comes first
        compiled = [_compile(resource, True) for resource in todo]
        for each in compiled:
            _ready(each)
        freeze_held()  # the import's objects live as long as the process
        prepared.append((time.perf_counter() - wall, time.thread_time() - cpu))

    global _preparing
    thread = threading.Thread(target=plan_all, name="quality-prepare", daemon=True)
    thread.start()
    _preparing = thread
    return thread


def suite_pending(resource: str) -> bool:
    """Whether the engine's suite of ``resource`` is still being planned by ``prepare``'s
    thread: its first ``check_items`` would wait for it (on a lock, the event loop with
    it). False once planned, or when no thread is left to plan it (``check_items`` then
    plans it itself)."""
    return ((resource, True) not in _compiled and _preparing is not None
            and _preparing.is_alive())


def plan_suite(resource: str) -> None:
    """Wait for the plan of ``resource``'s suite, or make it: blocks on the lock the
    planning thread holds while it plans, so a caller off the event loop waits without
    polling."""
    _compile(resource, True)


def _build(resource: str, after_models: bool) -> _Compiled | None:
    suite = rules_for(resource)
    if suite is None:
        return None
    rules = {r.name: r for r in suite.active(after_models)}
    name = f"{resource}.{'after_models' if after_models else 'all'}"
    plan = Plan(name, {r.name: r.expectation for r in rules.values()})
    columns = frozenset(c for r in rules.values() for c in r.columns)
    verdicts = {name: _verdicts_of(rule, kind_of(suite, rule.columns[0]))
                for name, rule in rules.items() if rule.by_value}
    return _Compiled(suite, columns, plan, rules, verdicts=verdicts)


def _verdicts_of(rule: Rule, kind: ColumnKind) -> Verdicts:
    """The verdicts ``rule`` keeps, shared with every rule deciding as it does
    (``_verdicts``): the same GX expectation with the same arguments, on a column of the
    same kind, says the same of a value whichever column holds it."""
    arguments = {k: v for k, v in rule.expectation.configuration.kwargs.items() if k != "column"}
    key = (rule.expectation.expectation_type, kind, repr(sorted(arguments.items())))
    return _verdicts.setdefault(key, Verdicts())


def forget_verdicts() -> None:
    """Every rule forgets the values it judged: the next chunks are judged as a process's
    first (tests and benches that compare first chunks)."""
    for verdicts in _verdicts.values():
        verdicts.passes.clear()


def _validate(compiled: _Compiled, keys: list[str], values: Mapping[str, list[Any]],
              names: Collection[str]) -> dict[str, Finding]:
    """What the rules ``names`` find in the items ``keys`` whose columns hold ``values``
    (``column_values``). A rule decided by value judges only the values it has not judged
    before (``verdicts.py``); the others share one GX pass over the chunk's frame
    (``_judge_frame``)."""
    found: dict[str, Finding] = {}
    whole: list[str] = []  # judged on the chunk's frame
    for name in names:
        rule = compiled.rules[name]
        finding = None
        if rule.by_value:
            (column,) = rule.columns
            finding = compiled.verdicts[name].judge(
                keys, values[column], kind_of(compiled.suite, column),
                partial(_judge_values, compiled, name, column))
        if finding is None:
            whole.append(name)
        else:
            found[name] = finding
    if whole:
        found.update(_judge_frame(compiled, typed_frame(compiled.suite, keys, {
            c: values[c] for c in dict.fromkeys(
                c for name in whole for c in compiled.rules[name].columns)}), whole))
    return found


def _judge_frame(compiled: _Compiled, df: pd.DataFrame, names: Collection[str]
                 ) -> dict[str, Finding]:
    """The rules ``names`` on ``df`` in one GX pass: ``BOOLEAN_ONLY`` for the rules that
    held on the last batch, ``COMPLETE`` for those that broke there; then ``COMPLETE`` for
    the rules that broke only now."""
    formats: dict[str, Format] = {
        name: "complete" if name in compiled.failing else "boolean" for name in names}
    judged = compiled.plan.run(df, formats)
    judged.update(compiled.plan.run(df, {
        name: "complete" for name, finding in judged.items()
        if formats[name] == "boolean" and not finding.success and finding.error is None}))
    compiled.failing = (compiled.failing - set(judged)) | {
        name for name, finding in judged.items() if not finding.success and finding.error is None}
    return judged


def _judge_values(compiled: _Compiled, name: str, column: str, values: list[Any]) -> Finding:
    """Rule ``name`` on a frame of distinct ``values`` of ``column``, keyed by position."""
    frame = typed_frame(compiled.suite, [str(index) for index in range(len(values))],
                        {column: values})
    return compiled.plan.run(frame, {name: "complete"})[name]


#: chunks of rows a stream's pooled warnings gather before GX judges them together
POOL_CHUNKS = 5


@dataclass
class _Gathered:
    """Rows waiting in a pool: their keys and the columns the pooled rules read."""

    compiled: _Compiled
    keys: list[str] = field(default_factory=list)
    columns: dict[str, list[Any]] = field(default_factory=dict)

    def judge(self, names: Collection[str]) -> dict[str, Finding]:
        """The rules ``names`` on the rows gathered, which are let go. Rows of other
        chunks than the caller's are among them: whatever goes wrong is each rule's error,
        never the caller's exception, so that no row is left unjudged unsaid."""
        if not self.keys:
            return {}
        keys, columns, self.keys, self.columns = self.keys, self.columns, [], {}
        try:
            return _judge_frame(self.compiled, typed_frame(self.compiled.suite, keys, columns),
                                names)
        except Exception as exc:  # noqa: BLE001 - reported on the rules, as GX's own errors
            return {name: Finding(False, [], f"the rows gathered cannot be judged: {exc!r}")
                    for name in names}


class Pool:
    """A stream's rows for its pooled warnings (``Rule.pooled``), judged ``POOL_CHUNKS``
    chunks at a time.

    GX costs about the same per rule and batch whatever the batch's size (``plan.py``). A
    warning holds no item back, so no chunk waits for its verdict: a stream gathers these
    rules' columns over a few chunks and GX judges them together. Their results come in
    the report of the chunk that filled the pool, and ``drain`` judges what is left when
    the stream ends. One pool per stream run; it keeps only the few columns those rules
    read (and the keys), never the items.
    """

    def __init__(self, chunk_items: int) -> None:
        #: rows that make the pool full
        self.rows = POOL_CHUNKS * chunk_items
        self._gathered: dict[tuple[str, tuple[str, ...]], _Gathered] = {}

    def add(self, resource: str, compiled: _Compiled, keys: list[str],
            values: Mapping[str, list[Any]], names: Sequence[str]) -> dict[str, Finding]:
        """Gather the items ``keys``, whose columns hold ``values``, for the rules ``names``;
        their findings over all the rows gathered when that fills the pool (else nothing
        yet)."""
        gathered = self._gathered.setdefault((resource, tuple(names)), _Gathered(compiled))
        gathered.keys += keys
        for column in dict.fromkeys(c for name in names for c in compiled.rules[name].columns):
            gathered.columns.setdefault(column, []).extend(values[column])
        return gathered.judge(names) if len(gathered.keys) >= self.rows else {}

    def drain(self) -> list[QualityReport]:
        """What is still gathered, judged now: a report per resource and rules, of no rows
        (the chunks' reports counted them)."""
        reports = []
        for (resource, names), gathered in self._gathered.items():
            started = time.perf_counter()
            if found := gathered.judge(names):
                reports.append(_report(gathered.compiled, resource, 0, found, {},
                                       time.perf_counter() - started, only=found))
        self._gathered.clear()
        return reports


def check_items(
    resource: str,
    items: Sequence[tuple[str, Mapping[str, Any]]],
    *,
    known: Mapping[str, set[str]] | None = None,
    after_models: bool = False,
    pool: Pool | None = None,
    lines: ChunkLines | None = None,
    rows: Sequence[Row] | None = None,
) -> QualityReport:
    """Validate ``(key, item)`` pairs of ``resource`` with its suite.

    ``known["products"]`` holds the product ids (as text, without the lang part of ledger
    keys) that order and cart lines may refer to; without it that rule is reported skipped.
    ``after_models``: the items passed the item models and are unique by key (the engine's
    case), so the rules those guarantee are skipped. ``pool``: the stream's pool, where
    its pooled warnings gather (``Pool``); without one, every rule judges ``items`` now.
    ``lines``: the items' lines (``frame.ChunkLines``), when the caller has read them already;
    ``rows``: the items' ``frame.suite_row``, when their read process took them.
    """
    return check_chunk(resource, [key for key, _ in items], [item for _, item in items],
                       known=known, after_models=after_models, pool=pool, lines=lines,
                       rows=rows)


def check_chunk(
    resource: str,
    keys: list[str],
    items: Sequence[Mapping[str, Any]],
    *,
    known: Mapping[str, set[str]] | None = None,
    after_models: bool = False,
    pool: Pool | None = None,
    lines: ChunkLines | None = None,
    rows: Sequence[Row] | None = None,
    read: Mapping[str, list[Any]] | None = None,
) -> QualityReport:
    """``check_items`` with the items' keys and fields apart, as the engine holds them: it
    makes no pair per item (``gate.check_quality``). ``read``: top-level fields of the
    items the caller has read already (``frame.column_values``)."""
    started = time.perf_counter()
    compiled = _compile(resource, after_models) if keys else None
    if compiled is None:
        return QualityReport(resource, len(keys), {}, {}, [], time.perf_counter() - started)
    runnable = [name for name, rule in compiled.rules.items()
                if rule.needs is None or (known is not None and rule.needs in known)]
    pooled = [name for name in runnable if compiled.rules[name].pooled] if pool is not None else []
    values = column_values(compiled.suite, items, {
        c for name in runnable for c in compiled.rules[name].columns}, known, lines, rows, read)
    found = _validate(compiled, keys, values, [n for n in runnable if n not in pooled])
    if pooled:
        assert pool is not None
        found.update(pool.add(resource, compiled, keys, values, pooled))
    return _report(compiled, resource, len(keys), found, {
        name: f"no known {compiled.rules[name].needs} given"
        for name in compiled.rules if name not in runnable}, time.perf_counter() - started,
        only=set(found) | set(compiled.rules) - set(pooled))


def _report(compiled: _Compiled, resource: str, rows: int, found: Mapping[str, Finding],
            skipped: Mapping[str, str], seconds: float, *, only: Collection[str]
            ) -> QualityReport:
    """The report of ``rows`` items: the rules of ``only`` in suite order, each with its
    finding or why it was skipped (a pooled rule is reported when its pool is judged)."""
    failures: dict[str, list[str]] = {}
    warnings: dict[str, int] = {}
    results: list[dict[str, Any]] = []
    for rule in compiled.suite.rules:  # in suite order, skipped ones too
        if rule.name not in compiled.rules:
            if rows:
                results.append(_result(rule, keys=[], skipped="guaranteed by the item models"))
            continue
        if rule.name not in only:
            continue
        if rule.name in skipped:
            results.append(_result(rule, keys=[], skipped=skipped[rule.name]))
            continue
        finding = found[rule.name]
        if rule.blocking:
            for key in finding.keys:
                failures.setdefault(key, []).append(rule.name)
        elif finding.keys:
            warnings[rule.name] = len(finding.keys)
        results.append(_result(rule, keys=finding.keys, error=finding.error))
    return QualityReport(resource, rows, failures, warnings, results, seconds)


def _result(rule: Rule, *, keys: list[str], error: str | None = None,
            skipped: str | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {
        "name": rule.name, "kind": "suite", "blocking": rule.blocking,
        "success": not keys and error is None,
        "unexpected_count": len(keys), "sample": keys[:SAMPLE],
        "description": rule.description,
    }
    if error is not None:
        result["error"] = error
    if skipped is not None:
        result["skipped"] = skipped
    return result


def summarize(reports: Iterable[QualityReport]) -> dict[str, Any]:
    """A run's reports of one resource folded into one JSON-safe summary: every row the run
    judged (checked by the suite, or held back before it) and every rule, of every stage,
    that held one back. ``blocked`` counts items once each, as the ledger does."""
    rows = checked = 0
    seconds = 0.0
    held: dict[str, str] = {}  # item key -> the kind of the stage that held it back
    rules: dict[str, dict[str, Any]] = {}
    ran: set[str] = set()  # rules some chunk ran: not "skipped" for the run
    for report in reports:
        rows += report.rows
        checked += report.rows if report.by_suite else 0
        seconds += report.seconds
        kinds = {r["name"]: r.get("kind", "suite") for r in report.results}
        for key, broken in report.failures.items():
            held[key] = kinds.get(broken[0], "suite") if broken else "suite"
        for result in report.results:
            into = rules.setdefault(result["name"], {
                "name": result["name"], "kind": result.get("kind", "suite"),
                "blocking": result["blocking"], "success": True,
                "unexpected_count": 0, "sample": [], "description": result["description"],
            })
            into["success"] = into["success"] and result["success"]
            into["unexpected_count"] += result["unexpected_count"]
            room = SAMPLE - len(into["sample"])
            into["sample"] += result["sample"][:room]
            if "error" in result:
                into["error"] = result["error"]
            if "skipped" not in result:
                ran.add(result["name"])
                into.pop("skipped", None)
            elif result["name"] not in ran:
                into["skipped"] = result["skipped"]
    by_kind: dict[str, int] = dict.fromkeys(KINDS, 0)
    for kind in held.values():
        by_kind[kind] = by_kind.get(kind, 0) + 1
    order = {kind: index for index, kind in enumerate(KINDS)}
    return {"rows": rows, "checked": checked, "blocked": len(held), "held": by_kind,
            "seconds": round(seconds, 4),
            "rules": sorted(rules.values(), key=lambda r: order.get(r["kind"], len(order)))}


def rules_markdown(summary: Mapping[str, Any]) -> str:
    """The summary's rules as one Markdown table (for ``MetadataValue.md``): the stage that
    held rows back (``kind``), the rule, how many rows it held back, and what it expects
    (a suite rule) or one of its reasons (the other stages)."""
    lines = ["| kind | rule | blocking | failing items | sample keys | expects, or a reason |",
             "|---|---|---|---|---|---|"]
    for rule in summary["rules"]:
        status = rule.get("error") and f"error: {rule['error']}" or rule.get("skipped")
        sample = ", ".join(f"`{k if len(k) <= 40 else k[:39] + '…'}`" for k in rule["sample"][:5])
        cells = [rule.get("kind", "suite"), f"`{rule['name']}`",
                 "yes" if rule["blocking"] else "no",
                 str(status or rule["unexpected_count"]), sample, rule["description"]]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)

"""What the quality suites cost per chunk: the planned validation against ``batch.validate``.

Builds N varied mapped items per resource from ``sample_item`` (ids, languages, currencies,
amounts, emails, timestamps and order lines vary; a share of them, ``--faults``, breaks one
rule), cuts them into chunks of 1, 10, 100 and 2000 items, and runs each resource's suite on
the same chunks, in the same order, two ways, side by side in one process:

- **before**: ``batch.validate`` (GX's public route) as the engine used it — a
  ``BOOLEAN_ONLY`` pass over the suite, then ``COMPLETE`` for the rules that failed, or
  straight to ``COMPLETE`` for the whole suite after a chunk that broke a rule;
- **after**: the engine's ``_validate`` today: the chunk's columns read in one pass; a rule
  decided by one column's value (``Rule.by_value``) has GX judge only the values it has not
  judged before (each pass starts with none kept, as a stream's first chunks do); the others
  share one GX pass over the chunk's frame with per-rule formats (``BOOLEAN_ONLY``, or
  ``COMPLETE`` for rules that broke the last chunk), then ``COMPLETE`` for the rules that
  broke only now. (A sync also pools its row-by-row warnings over five chunks,
  ``check.Pool``; both paths here judge every rule on every chunk.)

Both find the same items for every rule of every chunk (checked as it runs). It prints ms per
chunk for each and their ratio, then ``check_items`` as a whole (frame building included) per
2000-item chunk, the values of the chunk judged already and as a share of the time a sync takes for them at ``--sync-rate`` items/s
(default: the orders stream of ``bench/sync.py`` on the development machine). The cost per
chunk is nearly fixed — per rule, not per row — which is why small chunks show it best.

Each figure is the best of ``--repeat`` passes (CPU time of this process): the machine is
shared, and the fastest pass is the one least disturbed by others.

    python bench/quality.py [--items 2000] [--faults 0.01] [--chunks 10] [--repeat 3]
                            [--resources orders customers products | all] [--sync-rate 3450]
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections.abc import Callable
from typing import Any

from connectors.marketing.resources import SYNC_RESOURCES
from connectors.marketing.samples import sample_item, sample_resources
from pipelines.engine.mappings.base import item_key
from pipelines.engine.quality import check, check_items
from pipelines.engine.quality.frame import column_values, item_frame
from pipelines.engine.quality.plan import Finding, reference

LANGS = ("en", "fr", "de", "es-ES", "pt_BR", "it")
CURRENCIES = ("EUR", "USD", "GBP", "CHF", "SEK")
KNOWN = {"products": {str(n) for n in range(100, 600)}}
SIZES = (1, 10, 100, 2000)


def _ts(rng: random.Random, day: int) -> str:
    hour, minute = rng.randrange(24), rng.randrange(60)
    return f"2025-{1 + day % 12:02d}-{1 + day % 28:02d}T{hour:02d}:{minute:02d}:00Z"


def varied(resource: str, i: int, rng: random.Random) -> dict[str, Any]:
    """The sample item of ``resource`` with its id, codes, amounts and dates varied."""
    spec = SYNC_RESOURCES[resource]
    base = sample_item(resource)
    item: dict[str, Any] = dict(base)
    item[spec.id_field] = i if isinstance(base[spec.id_field], int) else f"{resource[:2]}-{i}"
    for field, value in base.items():
        if field == "lang":
            item[field] = LANGS[i % len(LANGS)]
        elif field == "currency":
            item[field] = CURRENCIES[i % len(CURRENCIES)]
        elif field == "email":
            item[field] = f"user.{i}@example{i % 7}.com"
        elif field.endswith("_at") and isinstance(value, str):
            item[field] = _ts(rng, i)
        elif isinstance(value, float):
            item[field] = round(rng.uniform(1, 500), 2)
    if "created_at" in item and "updated_at" in item:
        item["updated_at"] = item["created_at"].replace("2025-", "2026-")
    if "amount_without_tax" in item:
        item["amount_without_tax"] = round(item["amount"] / 1.2, 2)
    if "customer" in item:
        item["customer"] = {**item["customer"], "email": f"user.{i % 900}@example.com"}
    if "products" in item:
        item["products"] = [
            {"product_id": rng.randrange(100, 600), "product_variation_id": None,
             "price": round(rng.uniform(1, 99), 2), "price_without_tax": 1.0,
             "manufacturer_id": "m1", "quantity": rng.randrange(1, 4)}
            for _ in range(rng.randrange(1, 5))
        ]
    return item


def fault(item: dict[str, Any], rng: random.Random) -> None:
    """Break one rule of the item, picked among those its resource has."""
    choices: list[tuple[str, Any]] = []
    if "email" in item:
        choices.append(("email", "ada@example..com"))
    if "currency" in item:
        choices.append(("currency", "EUE"))
    if "lang" in item:
        choices.append(("lang", "xx"))
    if "created_at" in item:
        choices.append(("created_at", "2027-06-01T00:00:00Z"))
    if "quantity_remaining" in item:
        choices.append(("quantity_remaining", -3))
    if "products" in item:
        item["products"][0]["product_id"] = 999_999
    if choices:
        field, value = rng.choice(choices)
        item[field] = value


def items_of(resource: str, n: int, faults: float, seed: int = 7) -> list[tuple[str, dict]]:
    rng = random.Random(seed)
    items = []
    for i in range(n):
        item = varied(resource, i, rng)
        if rng.random() < faults:
            fault(item, rng)
        items.append((item_key(resource, item), item))
    return items


class Before:
    """The engine's validation before plans: ``batch.validate`` in two passes."""

    def __init__(self, compiled: Any) -> None:
        self.expectations = {name: rule.expectation for name, rule in compiled.rules.items()}
        self.dirty = False

    def __call__(self, frame: Any) -> dict[str, Finding]:
        found: dict[str, Finding] = {}
        again = self.expectations
        if not self.dirty:
            found = reference(frame, self.expectations, "boolean")
            failed = [name for name, f in found.items() if not f.success]
            if 3 * len(failed) < len(found):
                again = {name: self.expectations[name] for name in failed}
        complete = reference(frame, again, "complete") if again else {}
        found.update(complete)
        self.dirty = any(not f.success for f in complete.values())
        return found


def after(compiled: Any) -> Callable[[Any], dict[str, Finding]]:
    """The engine's path on a chunk of items: its columns read once, rules decided by
    value judged on the values they have not judged yet, the others on the chunk's frame."""
    def run(chunk: Any) -> dict[str, Finding]:
        values = column_values(compiled.suite, [item for _, item in chunk], compiled.columns,
                               KNOWN)
        return check._validate(compiled, [key for key, _ in chunk], values, compiled.rules)
    return run


def timed(run: Callable[[Any], dict[str, Finding]], chunks: list[Any], repeat: int
          ) -> tuple[float, list[dict[str, list[str]]]]:
    """Best CPU seconds per chunk over ``repeat`` passes, and what each chunk found. Each
    pass starts with no verdicts kept: the chunks are a stream's first ones."""
    best, found = math.inf, []
    for _ in range(repeat):
        check.forget_verdicts()
        began = time.process_time()
        found = [{name: sorted(f.keys) for name, f in run(chunk).items()} for chunk in chunks]
        best = min(best, (time.process_time() - began) / len(chunks))
    return best, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000, help="items per resource")
    parser.add_argument("--faults", type=float, default=0.01, help="share of faulty items")
    parser.add_argument("--chunks", type=int, default=10, help="chunks timed per size, at most")
    parser.add_argument("--repeat", type=int, default=3, help="passes; the best one counts")
    parser.add_argument("--resources", nargs="+", default=["orders", "customers", "products"],
                        help="resources to time, or 'all'")
    parser.add_argument("--sync-rate", type=float, default=3450.0,
                        help="a sync's items/s, to express the cost as a share of it")
    args = parser.parse_args()
    resources = sample_resources() if args.resources == ["all"] else args.resources

    began = time.process_time()
    check_items("customers", items_of("customers", 2, 0.0), after_models=True)
    print(f"first call (imports GX, plans one suite): {time.process_time() - began:.2f} CPU-s")
    print(f"{args.items} items per resource, {args.faults:.0%} faulty, the engine's profile"
          f" (after the item models); CPU ms per chunk, best of {args.repeat}")
    print(f"  {'resource':<12}{'rules':>6}{'chunk':>7}{'chunks':>7}{'before':>9}{'after':>8}"
          f"{'ratio':>8}{'blocked':>9}{'warned':>8}")
    totals: dict[int, list[float]] = {size: [0.0, 0.0] for size in SIZES}
    whole: list[tuple[str, float]] = []
    for resource in resources:
        items = items_of(resource, args.items, args.faults)
        compiled = check._compile(resource, True)
        assert compiled is not None
        for size in SIZES:
            chunks = [items[start:start + size]
                      for start in range(0, len(items), size)][:args.chunks]
            frames = [item_frame(compiled.suite, chunk, KNOWN, compiled.columns)
                      for chunk in chunks]
            old, old_found = timed(Before(compiled), frames, args.repeat)
            new, new_found = timed(after(compiled), chunks, args.repeat)
            assert new_found == old_found, f"{resource}: the two paths disagree"
            totals[size][0] += old
            totals[size][1] += new
            blocked = sum(len(keys) for found in new_found for name, keys in found.items()
                          if compiled.rules[name].blocking)
            warned = sum(len(keys) for found in new_found for name, keys in found.items()
                         if not compiled.rules[name].blocking)
            print(f"  {resource:<12}{len(compiled.rules):>6}{size:>7}{len(frames):>7}"
                  f"{old * 1000:>9.1f}{new * 1000:>8.1f}{old / new:>7.1f}x"
                  f"{blocked:>9}{warned:>8}")
        chunk = items[:2000]
        best = math.inf
        for _ in range(args.repeat):
            began = time.process_time()
            check_items(resource, chunk, known=KNOWN, after_models=True)
            best = min(best, time.process_time() - began)
        whole.append((resource, best / len(chunk) * 2000))
    print("  all of them, per chunk: " + ", ".join(
        f"{size}: {old * 1000:.0f} -> {new * 1000:.0f} ms ({old / new:.1f}x)"
        for size, (old, new) in totals.items()))
    sync_ms = 2000 / args.sync_rate * 1000
    print(f"check_items per 2000-item chunk (frame included), and its share of the {sync_ms:.0f}"
          f" ms a sync takes for them at {args.sync_rate:.0f} items/s:")
    for resource, seconds in whole:
        print(f"  {resource:<12}{seconds * 1000:>8.1f} ms {seconds * 1000 / sync_ms:>7.1%}")


if __name__ == "__main__":
    main()

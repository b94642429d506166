"""What the quality suites cost per batch, per resource, against a sync's own time.

Builds N varied mapped items per resource from ``sample_item`` (ids, languages, currencies,
amounts, emails, timestamps and order lines vary; a share of them, ``--faults``, breaks one
rule), then times ``check_items`` on batches of 50, 500 and 2000 as the engine runs it
(``after_models=True``: the rules the item models guarantee are skipped), and on 2000 with
every rule. It prints ms per batch, items/s and ms per 2000 items (the engine's chunk), and
that cost's share of the time a sync takes for them at ``--sync-rate`` items/s (default:
the orders stream of ``bench/sync.py``, 20 000 orders, on the development machine).

Each figure is the best of ``--repeat`` passes: the machine is shared, and the fastest pass
is the one least disturbed by others.

    python bench/quality.py [--items 2000] [--faults 0.01] [--sync-rate 3450] [--repeat 3]
"""

from __future__ import annotations

import argparse
import math
import random
import time
from typing import Any

from connectors.marketing.resources import SYNC_RESOURCES
from connectors.marketing.samples import sample_item, sample_resources
from pipelines.engine.mappings.base import item_key
from pipelines.engine.quality import check_items
from pipelines.engine.quality.suites import rules_for

LANGS = ("en", "fr", "de", "es-ES", "pt_BR", "it")
CURRENCIES = ("EUR", "USD", "GBP", "CHF", "SEK")
KNOWN_PRODUCTS = {str(n) for n in range(100, 600)}
#: (batch size, after_models): the engine's profile at three sizes, then every rule
RUNS = ((50, True), (500, True), (2000, True), (2000, False))


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


def fault(resource: str, item: dict[str, Any], rng: random.Random) -> None:
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
    for field in ("amount", "price", "minimum_amount"):
        if field in item:
            choices.append((field, -1.0))
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
            fault(resource, item, rng)
        items.append((item_key(resource, item), item))
    return items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000, help="items per resource")
    parser.add_argument("--repeat", type=int, default=3, help="passes; the best one counts")
    parser.add_argument("--faults", type=float, default=0.01, help="share of faulty items")
    parser.add_argument("--sync-rate", type=float, default=3450.0,
                        help="a sync's items/s, to express the cost as a share of it")
    args = parser.parse_args()

    started = time.perf_counter()
    check_items("customers", items_of("customers", 2, 0.0))
    print(f"first call (imports GX, builds the context and one suite): "
          f"{time.perf_counter() - started:.2f}s")
    sync_ms = 2000 / args.sync_rate * 1000
    print(f"{args.items} items per resource, {args.faults:.0%} faulty; a sync takes"
          f" {sync_ms:.0f} ms per 2000-item chunk at {args.sync_rate:.0f} items/s")
    print("the engine checks a resource's items once per chunk (up to 2000): the 2000 rows are"
          " its case, and their share of the sync's time is shown; 50 and 500 show the cost"
          " per call, nearly fixed")
    print(f"  {'resource':<14}{'rules':>6}{'batch':>7}{'ms/batch':>10}{'items/s':>10}"
          f"{'ms/2000':>9}{'share':>8}{'blocked':>9}{'warned':>8}")
    known = {"products": KNOWN_PRODUCTS}
    for resource in sample_resources():
        items = items_of(resource, args.items, args.faults)
        suite = rules_for(resource)
        assert suite is not None
        for size, after_models in RUNS:
            check_items(resource, items[:10], known=known, after_models=after_models)  # build
            rules = len(suite.active(after_models))
            seconds = math.inf
            for _ in range(args.repeat):
                blocked = warned = 0
                began = time.perf_counter()
                for start in range(0, len(items), size):
                    report = check_items(resource, items[start:start + size], known=known,
                                         after_models=after_models)
                    blocked += len(report.failures)
                    warned += sum(report.warnings.values())
                seconds = min(seconds, time.perf_counter() - began)
            calls = -(-len(items) // size)
            per_2000 = seconds / len(items) * 2000 * 1000
            label = f"{rules}{'' if after_models else ' all'}"
            print(f"  {resource:<14}{label:>6}{size:>7}{seconds / calls * 1000:>10.1f}"
                  f"{len(items) / seconds:>10.0f}{per_2000:>9.1f}"
                  f"{f'{per_2000 / sync_ms:.1%}' if size == 2000 else '-':>8}"
                  f"{blocked:>9}{warned:>8}")


if __name__ == "__main__":
    main()

"""Extraction speed of the PrestaShop connector from the fake shop under a rate budget.

Starts a fake PrestaShop shop (1.7, two languages) with N orders (default 20 000) whose
host-style rate limit is the budget (default 10 requests/s: PrestaShop's core has no limit,
so this is the figure we assume for a shared host's or a WAF's rule in front of it), reads
the ``orders`` stream whole — each page with its customers' emails looked up — at each page
size, with the connector pacing itself to the budget (``requests_per_second``) and, for
comparison, without pacing (429 + Retry-After). Prints records/s, the requests made, the
429s received and the share of the budget used (requests answered ÷ (seconds × budget)).

    python bench/extract_prestashop.py [--orders 20000] [--rate-limit 10] [--page-size 100 250]
"""

from __future__ import annotations

import argparse
from functools import partial

from connectors.sources.prestashop import PrestaShopConnector
from sandbox.shops.prestashop.launch import RunningFakeShop, start

try:
    from bench._extract import Run, paced_and_unpaced, parser, under_rate_limit
except ModuleNotFoundError:  # run as a script: bench/ itself is on sys.path
    from _extract import (  # type: ignore[no-redef]
        Run,
        paced_and_unpaced,
        parser,
        under_rate_limit,
    )


def runs(shop: RunningFakeShop, args: argparse.Namespace) -> list[Run]:
    return paced_and_unpaced(args, lambda size, pace: PrestaShopConnector(
        shop.root, shop.key, page_size=size, timezone="Europe/Paris", requests_per_second=pace))


def main() -> None:
    args = parser(__doc__, page_sizes=[100, 250], rate_limit=10.0).parse_args()
    under_rate_limit("PrestaShop", start, args, ["page size", "pacing"], partial(runs, args=args))


if __name__ == "__main__":
    main()

"""Extraction speed of the Magento connector from the fake shop under a rate budget.

Starts a fake Magento shop with N orders (default 20 000) whose CDN-style rate limit is the
budget (default 10 requests/s: Magento Open Source has no limit of its own, so this is the
figure we assume for a WAF/Fastly rule in front of a self-hosted or Cloud shop), reads the
``orders`` stream whole at each page size with the connector pacing itself to the budget
(``requests_per_second``) and, for comparison, without pacing (429 + Retry-After), and prints records/s, the
requests made, the 429s received, and the share of the budget used
(requests ÷ (seconds × budget)).

    python bench/extract_magento.py [--orders 20000] [--rate-limit 10] [--page-size 100 300]
"""

from __future__ import annotations

import argparse
from functools import partial

from connectors.sources.magento import MagentoConnector
from sandbox.shops.magento.launch import RunningFakeMagento, start

try:
    from bench._extract import Run, paced_and_unpaced, parser, under_rate_limit
except ModuleNotFoundError:  # run as a script: bench/ itself is on sys.path
    from _extract import (  # type: ignore[no-redef]
        Run,
        paced_and_unpaced,
        parser,
        under_rate_limit,
    )


def runs(shop: RunningFakeMagento, args: argparse.Namespace) -> list[Run]:
    return paced_and_unpaced(args, lambda size, pace: MagentoConnector(
        shop.api_url, shop.token, page_size=size, requests_per_second=pace))


def main() -> None:
    args = parser(__doc__, page_sizes=[100, 300], rate_limit=10.0).parse_args()
    under_rate_limit("Magento", start, args, ["page size", "pacing"], partial(runs, args=args))


if __name__ == "__main__":
    main()

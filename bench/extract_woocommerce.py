"""Extraction speed of the WooCommerce connector from the fake shop under a rate budget.

Starts a fake WooCommerce shop with N orders (default 20 000) whose host-style rate limit is
the budget (default 4 requests/s: WooCommerce's REST API v3 has no limit of its own, so the
one that counts is the host's; we assume Wordfence's, the most installed WordPress security
plugin, whose documentation calls 240 requests per minute for "anyone's requests" a healthy
setting, and which shared WordPress hosts' own WAF rules are of the order of), reads the
``orders`` stream whole at each page size (WooCommerce allows at most 100 per page) with the
connector pacing itself to the budget (``requests_per_second``) and, for comparison, without
pacing (429 + Retry-After), and prints records/s, the requests made, the 429s received, and the share of the
budget used (requests answered ÷ (seconds × budget)).

    python bench/extract_woocommerce.py [--orders 20000] [--rate-limit 4] [--page-size 50 100]
"""

from __future__ import annotations

import argparse
from functools import partial

from connectors.sources.woocommerce import WooCommerceConnector
from sandbox.shops.woocommerce.launch import RunningFakeShop, start

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
    return paced_and_unpaced(args, lambda size, pace: WooCommerceConnector(
        shop.api_url, shop.key, shop.secret, page_size=size, requests_per_second=pace))


def main() -> None:
    args = parser(__doc__, page_sizes=[50, 100], rate_limit=4.0).parse_args()
    under_rate_limit("WooCommerce", start, args, ["page size", "pacing"], partial(runs, args=args))


if __name__ == "__main__":
    main()

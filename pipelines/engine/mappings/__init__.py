"""Platform mappings: raw records of a platform's streams to the API's target items."""

from __future__ import annotations

from pipelines.engine.mappings.base import PlatformMapping
from pipelines.engine.mappings.woocommerce import WooCommerceMapping

MAPPINGS: dict[str, type[PlatformMapping]] = {"woocommerce": WooCommerceMapping}


def mapping_for(platform: str) -> PlatformMapping:
    return MAPPINGS[platform]()

"""Platform mappings: raw records of a platform's streams to the API's target items."""

from __future__ import annotations

from pipelines.engine.mappings.base import PlatformMapping


def mapping_for(platform_name: str) -> PlatformMapping:
    from pipelines.engine.platforms import platform

    return platform(platform_name).mapping()

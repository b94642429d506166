"""The platforms the engine can read, each in a module of its own that registers a
``Platform``: how to open its connector from a source's configuration, its mapping, what it
cannot read and which streams a source has. Modules in this package are found and loaded on
first use, so adding a platform adds a file and edits none. How the demo fakes a platform is
the demo's business (``pipelines/demo_specs.py``), not the engine's."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pydantic import BaseModel

    from connectors.http.pacing import Pacing
    from connectors.sources.base import SourceConnector
    from pipelines.engine.config import Source
    from pipelines.engine.mappings.base import PlatformMapping

Env = Mapping[str, str]


class OpenConnector(Protocol):
    """Opens a source's connector. ``pacer``: what its requests wait on, the shop's budget
    shared across processes (``pipelines/engine/budgets.py``); given only to the platforms
    that take ``requests_per_second``, the others pace themselves (Shopify by the cost
    bucket every answer reports) or send no HTTP."""

    def __call__(self, source: Source, env: Env, /, *,
                 pacer: Pacing | None = None) -> SourceConnector: ...


@dataclass(frozen=True)
class Platform:
    name: str
    open_connector: OpenConnector
    mapping: Callable[[], PlatformMapping]
    #: stream -> why the platform cannot provide it (asked only when a stream is missing)
    unsupported: Callable[[], Mapping[str, str]] = dict
    #: problems with a source's ``connection`` for this platform, one line each
    check: Callable[[Source], list[str]] = lambda source: []
    #: stream -> the resources it feeds, for one source, where the source's configuration
    #: defines its streams (``sql``, ``files``); None: the mapping's fixed ``produces``
    streams: Callable[[Source], Mapping[str, tuple[str, ...]]] | None = None

    def produces(self, source: Source) -> Mapping[str, tuple[str, ...]]:
        """The streams ``source`` can read and the resources each feeds, reference data
        first: what ``resources: all`` means for it, and all it may be asked for."""
        return self.streams(source) if self.streams is not None else self.mapping().produces


_PLATFORMS: dict[str, Platform] = {}
_loaded = False


def register(platform: Platform) -> Platform:
    _PLATFORMS[platform.name] = platform
    return platform


def _load() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for module in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{module.name}")


def names() -> list[str]:
    _load()
    return sorted(_PLATFORMS)


def platform(name: str) -> Platform:
    _load()
    try:
        return _PLATFORMS[name]
    except KeyError:
        raise KeyError(f"unknown platform {name!r}; known: {', '.join(sorted(_PLATFORMS))}") from None


def unknown_options(source: Source, known: Sequence[str]) -> list[str]:
    """One line per ``connection.options`` key the platform does not take (a typo would
    otherwise be ignored without a word)."""
    return [f"connection.options.{name}: not an option of the {source.platform} platform;"
            f" known: {', '.join(known)}"
            for name in sorted(set(source.connection.options) - set(known))]


def config_problems(model: type[BaseModel], fields: Mapping[str, Any], *,
                    url_field: str = "base_url") -> list[str]:
    """The connector configuration's own checks on ``fields``, each problem named as
    shops.yaml spells the field: ``connection.url`` for the address, ``connection.options.X``
    for the rest."""
    from pydantic import ValidationError

    try:
        model.model_validate(fields)
    except ValidationError as exc:
        problems = []
        for err in exc.errors(include_url=False):
            field = ".".join(str(p) for p in err["loc"]) or url_field  # the URL's own checks
            where = "connection.url" if field == url_field else f"connection.options.{field}"
            problems.append(f"{where}: {str(err['msg']).removeprefix('Value error, ')}")
        return problems
    return []

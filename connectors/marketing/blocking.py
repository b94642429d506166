"""``BlockingMarketingClient``: the async client's methods, without ``await``.

One implementation: the async ``MarketingClient`` runs on an event loop in a background
thread (an anyio blocking portal) and every method here forwards to it. Coroutine methods
return their result; async generators (``iter_pages``, ``iter_records``) become plain
iterators. The forwarding methods are generated from ``MarketingClient``, so a new
operation there is available here at once, with the same name, signature and docstring.

    with BlockingMarketingClient(base_url, api_key) as client:
        for order in client.iter_records(client.list_orders, page_size=200):
            ...
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any, Self

from anyio.from_thread import BlockingPortal, start_blocking_portal

from connectors.marketing.client import MarketingClient
from connectors.marketing.transport import TransportStats

__all__ = ["BlockingMarketingClient"]


async def _next(agen: AsyncIterator[Any]) -> tuple[bool, Any]:
    """One step of an async iterator, with the end as a value: StopAsyncIteration must not
    cross the portal."""
    try:
        return False, await agen.__anext__()
    except StopAsyncIteration:
        return True, None


class BlockingMarketingClient:
    """The Marketing API client for synchronous code (use ``with`` or call ``close()``).

    Takes the same arguments as ``MarketingClient``. Safe to share between threads: calls
    run concurrently on the portal's event loop.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._portal_cm: AbstractContextManager[BlockingPortal] = start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        try:
            # built on the loop thread so everything async it creates belongs to that loop
            self._client: MarketingClient = self._portal.call(
                functools.partial(MarketingClient, *args, **kwargs)
            )
        except BaseException:
            self._portal_cm.__exit__(None, None, None)
            raise
        self._closed = False

    def __repr__(self) -> str:
        return f"BlockingMarketingClient(base_url={self._client.transport.base_url!r})"

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the HTTP connections and stop the background event loop (idempotent)."""
        if self._closed:
            return
        self._closed = True
        try:
            self._portal.call(self._client.aclose)
        finally:
            self._portal_cm.__exit__(None, None, None)

    @property
    def stats(self) -> TransportStats:
        return self._client.stats

    @property
    def query_encoding(self) -> str:
        return self._client.query_encoding

    def _async_twin(self, value: Any) -> Any:
        """A method of this facade passed as an argument (``iter_pages(client.list_orders)``)
        stands for the async client's method of the same name."""
        if getattr(value, "__self__", None) is self:
            return getattr(self._client, value.__name__)
        return value

    def _call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        method = getattr(self._client, name)
        args = tuple(self._async_twin(a) for a in args)
        return self._portal.call(functools.partial(method, *args, **kwargs))

    def _iterate(
        self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Iterator[Any]:
        args = tuple(self._async_twin(a) for a in args)
        agen = getattr(self._client, name)(*args, **kwargs)
        try:
            while True:
                done, item = self._portal.call(_next, agen)
                if done:
                    return
                yield item
        finally:
            # an early `break` must still close the async generator on its own loop
            if not self._closed:
                self._portal.call(agen.aclose)


def _forwarder(name: str, method: Callable[..., Any]) -> Callable[..., Any] | None:
    if inspect.iscoroutinefunction(method):

        def call(self: BlockingMarketingClient, *args: Any, **kwargs: Any) -> Any:
            return self._call(name, args, kwargs)

    elif inspect.isasyncgenfunction(method):

        def call(self: BlockingMarketingClient, *args: Any, **kwargs: Any) -> Any:
            return self._iterate(name, args, kwargs)

    else:
        return None
    # name, docstring and (through __wrapped__) the signature shown by help()
    functools.update_wrapper(call, method)
    return call


def _install_forwarders() -> None:
    for name, method in inspect.getmembers(MarketingClient, inspect.isfunction):
        if name.startswith("_") or name == "aclose" or hasattr(BlockingMarketingClient, name):
            continue
        forwarder = _forwarder(name, method)
        if forwarder is not None:
            setattr(BlockingMarketingClient, name, forwarder)


_install_forwarders()

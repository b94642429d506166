"""Walking every page of a listing, by offset, until the API says there is no next page."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from connectors.marketing.models import ListPage, Record
from connectors.marketing.query import MAX_LIMIT, Query

ListMethod = Callable[..., Awaitable[ListPage[Record]]]

DEFAULT_PAGE_SIZE = 100
DEFAULT_MAX_PAGES = 10_000


class PaginationLimitError(RuntimeError):
    """A listing still had pages after ``max_pages``: stopping quietly would lose records."""


class PaginationOperations:
    async def iter_pages(
        self,
        list_method: ListMethod,
        *args: Any,
        query: Query | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
        max_pages: int = DEFAULT_MAX_PAGES,
    ) -> AsyncIterator[ListPage[Record]]:
        """Yield every page of ``list_method(*args, query=...)``, from the query's offset on.

        Works for common listings and event listings alike (both take a ``Query`` and answer
        the List envelope). ``page_size`` replaces the query's limit. Offsets shift if
        records are inserted or deleted meanwhile; sort on a stable field when that matters.

        Raises:
            PaginationLimitError: more than ``max_pages`` pages (a runaway listing).
        """
        if not 1 <= page_size <= MAX_LIMIT:
            raise ValueError(f"page_size must be between 1 and {MAX_LIMIT}, got {page_size}")
        query = query or Query()
        offset = query.offset or 0
        for _ in range(max_pages):
            page = await list_method(*args, query=query.page(page_size, offset))
            yield page
            # an empty page ends the walk even if a confused server claims a next one
            if not page.meta.pagination.has_next_page or not page.data:
                return
            offset += len(page.data)
        raise PaginationLimitError(
            f"{getattr(list_method, '__name__', 'listing')} has more than {max_pages} pages of"
            f" {page_size}; raise max_pages or narrow the query"
        )

    async def iter_records(
        self,
        list_method: ListMethod,
        *args: Any,
        query: Query | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
        max_pages: int = DEFAULT_MAX_PAGES,
    ) -> AsyncIterator[Record]:
        """Yield every record of every page (see ``iter_pages``)."""
        async for page in self.iter_pages(
            list_method, *args, query=query, page_size=page_size, max_pages=max_pages
        ):
            for record in page.data:
                yield record

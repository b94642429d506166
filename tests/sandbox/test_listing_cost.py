"""What a listing costs: filters run in time linear in the text whatever the pattern, and a
listing gives way to other requests while it works and is refused past its budget."""

from __future__ import annotations

import asyncio
import itertools
import re
import time
from collections.abc import Callable
from typing import Any

import pytest

from connectors.marketing.samples import sample_item
from sandbox.marketing import listing
from sandbox.marketing.errors import ApiError
from sandbox.marketing.limits import LISTING_WORK_SECONDS
from sandbox.marketing.listing import run_list_query
from sandbox.marketing.listing_parse import ListQuery
from sandbox.marketing.matching import compile_filter
from sandbox.marketing.spec.query import Filter, Operator

#: "does not hang": far above the milliseconds these take, far below the minutes a
#: backtracking matcher needs
HANG = 10.0


def like_test(pattern: str) -> Callable[[str], bool]:
    matches = compile_filter(Filter(field="f", operator=Operator.LIKE, values=[pattern]))
    return lambda text: matches({"f": text})


def like(pattern: str, text: str) -> bool:
    return like_test(pattern)(text)


def as_regex(pattern: str) -> re.Pattern[str]:
    """LIKE as the regular expression it means (the reference, on short texts only)."""
    parts, chars = [], iter(pattern)
    for char in chars:
        if char == "\\":
            parts.append(re.escape(next(chars, "\\")))
        else:
            parts.append({"%": ".*", "_": "."}.get(char) or re.escape(char))
    return re.compile("".join(parts), re.IGNORECASE | re.DOTALL)


def test_like_means_what_the_sql_pattern_says_on_every_short_text_and_pattern():
    """Every pattern of up to 5 and text of up to 5 characters over a small alphabet with the
    wildcards, the escape, case and a newline."""
    patterns = ["".join(p) for n in range(6) for p in itertools.product("a%_\\", repeat=n)]
    texts = ["".join(t) for n in range(6) for t in itertools.product("aA%_\\\n", repeat=n)]

    wrong = []
    for pattern in patterns:
        test, reference = like_test(pattern), as_regex(pattern)
        wrong += [(pattern, t) for t in texts[::13] if test(t) != bool(reference.fullmatch(t))]

    assert wrong == []


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        pytest.param("%a%a%a%a%b", "a" * 200, False, id="the-backtracking-case"),
        pytest.param("%a%a%a%a%a", "a" * 200, True, id="its-match"),
        pytest.param("%" + "a%" * 60 + "b", "a" * 100_000, False, id="many-percents"),
        pytest.param("%a_b%", "ab" * 50_000, False, id="underscores-on-every-hit"),
        pytest.param("%a__a%c", "a" * 100_000, False, id="underscores-and-percents"),
        pytest.param("_" * 5 + "%", "İstanbul", True, id="a-letter-whose-lower-case-is-longer"),
    ],
)
def test_like_answers_at_once_whatever_the_pattern(pattern, text, expected):
    started = time.monotonic()
    assert like(pattern, text) is expected
    assert time.monotonic() - started < HANG


def test_a_filter_value_of_thousands_of_digits_is_read_at_once():
    """A long run of digits used to be tried every way a number can be split (quadratic)."""
    for value in ("1" * 20_000 + "x", "9" * 20_000, "1" * 10_000 + ".5e"):
        test = compile_filter(Filter(field="f", operator=Operator.LESS_THAN, values=[value]))
        started = time.monotonic()
        test({"f": 3})
        assert time.monotonic() - started < HANG


def test_the_like_case_over_http_answers_at_once(sandbox, api):
    api.post("/orders", json=[sample_item("orders", reference="a" * 200)])
    params = {"filters[0][field]": "reference", "filters[0][operator]": "LIKE",
              "filters[0][value]": "%a%a%a%a%b"}

    started = time.monotonic()
    answer = api.get("/orders", params=params)

    assert time.monotonic() - started < HANG
    assert (answer.status_code, answer.json()["data"]) == (200, [])
    params["filters[0][value]"] = "%a%a%a%a%a"
    assert len(api.get("/orders", params=params).json()["data"]) == 1


class FakeClock:
    """The clock a listing reads its work by, moving ``step`` seconds at each reading."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def monotonic(self) -> float:
        self.now += self.step
        return self.now


def records(n: int) -> list[dict[str, Any]]:
    return [{"id": i, "name": f"n{i}"} for i in range(n)]


def test_a_listing_gives_way_to_other_tasks_while_it_works(monkeypatch):
    clock = FakeClock(step=0.001)
    monkeypatch.setattr(listing, "time", clock)
    turns = []

    async def other() -> None:
        while True:
            turns.append(clock.now)
            await asyncio.sleep(0)

    async def both() -> tuple[list[dict[str, Any]], int]:
        task = asyncio.create_task(other())
        await asyncio.sleep(0)
        try:
            return await run_list_query(records(20_000), ListQuery(limit=5), default_order=[])
        finally:
            task.cancel()

    page, total = asyncio.run(both())

    assert (len(page), total) == (5, 20_000)
    assert len(turns) > 10  # the other task ran again and again while the listing worked


def test_a_listing_past_its_budget_of_work_is_refused(monkeypatch):
    monkeypatch.setattr(listing, "time", FakeClock(step=1.0))
    q = ListQuery(filters=[Filter(field="name", operator=Operator.LIKE, values=["%9%"])])

    with pytest.raises(ApiError) as refused:
        asyncio.run(run_list_query(records(20_000), q, default_order=[], budget=5))

    assert refused.value.status_code == 400
    assert "more than the 5 s of work a request may take" in refused.value.message


def test_over_http_a_listing_past_its_budget_is_a_400_and_the_server_goes_on(
        monkeypatch, sandbox, api):
    """The listings of the session's sandbox (served in this process) read a clock that
    jumps past the whole budget at once."""
    for start in (0, 100):
        carriers = [sample_item("carriers", carrier_id=f"k{start + i}") for i in range(100)]
        assert api.post("/orders-carriers", json=carriers).json()["sent_count"] == 100
    monkeypatch.setattr(listing, "time", FakeClock(step=LISTING_WORK_SECONDS + 1))

    answer = api.get("/orders-carriers")

    assert answer.status_code == 400
    assert answer.json()["success"] is False
    assert "narrow it" in answer.json()["message"]
    monkeypatch.undo()
    assert api.get("/orders-carriers").json()["meta"]["pagination"]["total_items"] == 200
    assert api.get(sandbox.root + "/healthz").json() == {"status": "ok"}

"""A file's rows in key order (``ordering.in_key_order``): whatever order they were written
in, with keys repeated, ranked equal ("7", "007") or out of order, in memory or in runs on
disk, they come out as sorting them all at once would."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from connectors.sources.base import id_order
from connectors.sources.files import ordering

KEYS = st.sampled_from(["1", "2", "7", "007", "07", "10", "a", "b", "x:3", "²"]) | st.integers(
    0, 40).map(str)


def sorted_at_once(keys: list[str], spill_rows: int) -> list[dict[str, Any]]:
    """The specification: by ``id_order``, each key once with its last row; keys ranked
    equal in the order they first appeared, or in text order once the file has
    ``spill_rows`` keys."""
    last = {key: {"key": key, "row": place} for place, key in enumerate(keys)}
    ranked = sorted(last, key=lambda key: (id_order(key), key) if len(last) >= spill_rows
                    else id_order(key))
    return [last[key] for key in ranked]


def in_key_order(keys: list[str], spill_rows: int) -> list[dict[str, Any]]:
    rows = [(key, {"key": key, "row": place}) for place, key in enumerate(keys)]
    return list(ordering.in_key_order(iter(rows), spill_rows))


def taken_apart_all_on_disk(keys: list[str], spill_rows: int) -> list[dict[str, Any]]:
    """As a process of its own takes a file apart (``apart.py``): every run on disk, merged
    from the ``Runs`` alone."""
    rows = [(key, {"key": key, "row": place}) for place, key in enumerate(keys)]
    with tempfile.TemporaryDirectory() as folder:
        runs, held, held_aside = ordering.taken_apart(iter(rows), Path(folder), spill_rows,
                                                      all_on_disk=True)
        assert held == held_aside == []
        return list(ordering.merged(runs))


@settings(max_examples=150, deadline=None)
@given(keys=st.lists(KEYS, max_size=40), spill_rows=st.integers(1, 12))
def test_rows_come_out_as_sorting_them_at_once_would(keys, spill_rows):
    assert in_key_order(keys, spill_rows) == sorted_at_once(keys, spill_rows)


@settings(max_examples=100, deadline=None)
@given(keys=st.lists(KEYS, max_size=40), spill_rows=st.integers(1, 12))
def test_rows_taken_apart_all_on_disk_come_out_the_same(keys, spill_rows):
    assert taken_apart_all_on_disk(keys, spill_rows) == sorted_at_once(keys, spill_rows)


@settings(max_examples=100, deadline=None)
@given(ascending=st.lists(st.integers(0, 10**6), unique=True, max_size=60).map(sorted),
       odd=st.lists(st.tuples(st.integers(0, 60), KEYS), max_size=4),
       spill_rows=st.integers(1, 20))
def test_a_file_in_key_order_with_a_few_odd_rows_comes_out_sorted(ascending, odd, spill_rows):
    """The common export: keys ascending, with a row that cannot be read (its key is its
    origin), a late row or a repeated key here and there."""
    keys = [str(key) for key in ascending]
    for at, key in odd:
        keys.insert(min(at, len(keys)), key)
    assert in_key_order(keys, spill_rows) == sorted_at_once(keys, spill_rows)


def test_a_file_in_key_order_is_read_back_as_written_through_disk():
    keys = [str(key) for key in range(1, 2_000)]
    assert in_key_order(keys, 300) == [{"key": key, "row": n} for n, key in enumerate(keys)]

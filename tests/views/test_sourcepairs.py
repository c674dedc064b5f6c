"""A view's source-hash pairs patched row by row equal the pairs worked out from scratch.

A Hypothesis sequence of changes to a table of record files (files added, edited, retyped,
soft-deleted, shown or hidden, removed, renamed, two files holding one id), each applied
as ``Table.patch`` applies it: after every step the patched pairs of every view equal
``SortedPairs.of`` the new table, and their hash equals ``fileformat.digests_hash`` of the
records the view covers.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from planning_memory.views.fileformat import buckets_hash, digests_hash
from planning_memory.views.sourcepairs import SortedPairs, covers
from planning_memory.views.table import Table

MEMOS = ("patterns", "mistakes", "claude")
TYPES = ("pattern", "mistake", "preference", "")

files = st.sampled_from(
    [f"{folder}/{n}.json" for folder in ("mistakes", "patterns") for n in range(8)]
)
rows = st.tuples(
    files,
    st.integers(0, 3),  # ctime
    st.integers(-1, 3),  # size
    st.sampled_from(["d0", "d1", "d2", "d3", ""]),  # digest
    st.sampled_from(["id0", "id1", "id2", "id10", "i", ""]),  # id (two files may share one)
    st.sampled_from(TYPES),
    st.booleans(),  # live
    st.booleans(),  # shown
)
steps = st.tuples(st.lists(rows, max_size=5), st.lists(files, max_size=3))


def unique(found: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """One row per file (the last), as the catalog lists them."""
    return list({row[0]: row for row in found}.values())


def _covered(table: Table, memo: str) -> list[tuple[str, str]]:
    return [
        (table.id[i], table.digest[i])
        for i in range(len(table.files))
        if covers(memo, table.type[i], table.live[i], table.shown[i])
    ]


@settings(max_examples=300, deadline=None)
@given(st.lists(rows, max_size=10), st.lists(steps, max_size=8))
def test_patched_pairs_are_the_pairs_from_scratch(
    first: list[tuple[Any, ...]], changes: list[tuple[list[tuple[Any, ...]], list[str]]]
) -> None:
    table = Table.of(sorted(unique(first)))
    kept = {memo: SortedPairs.of(table, memo) for memo in MEMOS}
    for changed, gone in changes:
        changed = unique(changed)
        before = copy.deepcopy(table)
        table.patch(changed, gone)
        for memo, pairs in kept.items():
            pairs.patch(before, changed, gone, memo)
            assert pairs == SortedPairs.of(table, memo)
            hashes = pairs.hashes()  # kept from the step before for the buckets not touched
            assert buckets_hash(hashes, "t") == digests_hash(_covered(table, memo), "t")
            more = pairs.hashes(("", "d1"))
            assert buckets_hash(more, "t") == digests_hash(
                [*_covered(table, memo), ("", "d1")], "t"
            )


def test_claude_pairs_take_the_preferences_in_their_bucket() -> None:
    """The preferences' pair (empty id) goes where ``digests_hash`` puts it: in the bucket of
    its digest, before every record's there."""
    table = Table.of([("patterns/a.json", 1, 1, "dd", "id", "pattern", True, False)])
    pairs = SortedPairs.of(table, "claude")
    for prefs in ("dd", "p"):
        found = buckets_hash(pairs.hashes(("", prefs)), "t")
        assert found == digests_hash([("id", "dd"), ("", prefs)], "t")
    assert pairs.hashes() == {"dd": pairs.buckets["dd"].hash()}

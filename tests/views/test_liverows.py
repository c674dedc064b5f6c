"""The live rows of a view patched row by row equal the rows worked out from scratch.

A Hypothesis sequence of changes to a table of record files (as in ``test_sourcepairs``),
with ``take`` called at random steps: after every step the patched rows of every view equal
``LiveRows.of`` the new table, and what ``take`` reports as gone and come is the difference
between the digests at the last ``take`` and now, each come with a file that holds it.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from planning_memory.views.liverows import LiveRows
from planning_memory.views.table import Table

from .test_sourcepairs import MEMOS, rows, steps, unique


@settings(max_examples=300, deadline=None)
@given(st.lists(rows, max_size=10), st.lists(st.tuples(steps, st.booleans()), max_size=8))
def test_patched_rows_are_the_rows_from_scratch(
    first: list[tuple[Any, ...]],
    changes: list[tuple[tuple[list[tuple[Any, ...]], list[str]], bool]],
) -> None:
    table = Table.of(sorted(unique(first)))
    kept = {memo: LiveRows.of(table, memo) for memo in MEMOS}
    taken = {memo: set(live.counts) for memo, live in kept.items()}
    for (changed, gone), take in changes:
        changed = unique(changed)
        before = copy.deepcopy(table)
        table.patch(changed, gone)
        for memo, live in kept.items():
            live.patch(before, changed, gone, memo)
            fresh = LiveRows.of(table, memo)
            assert (live.files, live.digests, live.counts) == (
                fresh.files,
                fresh.digests,
                fresh.counts,
            )
            if take:
                went, came = live.take()
                assert went == taken[memo] - set(live.counts)
                assert set(came) == set(live.counts) - taken[memo]
                holding = dict(zip(live.files, live.digests, strict=True))
                assert all(holding[file] == digest for digest, file in came.items())
                taken[memo] = set(live.counts)

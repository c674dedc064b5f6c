"""What a view's source hash is built from, kept in order: its records' (id, digest) pairs.

``SortedPairs`` holds the pairs of the records a view's ``source-hash`` covers
(``fileformat.digests_hash``), sorted by id, then digest, with each pair's text
(``fileformat.pair_text``). It is built once from a ``Table`` and then patched with the rows
that changed (``Table.patch``'s arguments), so a save that changes one record of 10k moves
one pair instead of sorting them all again. Pure: no file I/O.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from planning_memory.views.fileformat import pair_text
from planning_memory.views.table import Table

_TYPES = {"patterns": "pattern", "mistakes": "mistake"}  # a view's memo -> its records' type


def covers(memo: str, type_: str, live: bool, shown: bool) -> bool:
    """True when the source hash of the view of ``memo`` covers a record with these fields:
    every record of the view's type (soft-deleted too); for CLAUDE.md every record it shows
    and every live pattern and mistake (``RenderCache.source_hash`` says why)."""
    if memo == "claude":
        return shown or (live and type_ in ("pattern", "mistake"))
    return type_ == _TYPES.get(memo)


@dataclass
class SortedPairs:
    """The (id, digest) pairs a view's source hash covers, sorted, with their texts."""

    keys: list[tuple[str, str]]
    texts: list[str]

    @classmethod
    def of(cls, table: Table, memo: str) -> SortedPairs:
        """The pairs of the rows of ``table`` the source hash of ``memo`` covers."""
        every = zip(table.type, table.live, table.shown, strict=True)
        rows = [i for i, fields in enumerate(every) if covers(memo, *fields)]
        rows.sort(key=lambda i: (table.id[i], table.digest[i]))
        keys = [(table.id[i], table.digest[i]) for i in rows]
        return cls(keys, [table.pairs[i] for i in rows])

    def patch(
        self, before: Table, rows: Sequence[Sequence[Any]], gone: Sequence[str], memo: str
    ) -> None:
        """Move from the pairs of ``before`` to those it has after ``before.patch(rows, gone)``
        (called before that)."""
        for i in before.replaced(rows, gone):
            if covers(memo, before.type[i], before.live[i], before.shown[i]):
                at = bisect_left(self.keys, (before.id[i], before.digest[i]))
                del self.keys[at], self.texts[at]
        for _file, _ctime, _size, digest, record_id, type_, live, shown in rows:
            if covers(memo, type_, live, shown):
                at = bisect_right(self.keys, (record_id, digest))
                self.keys.insert(at, (record_id, digest))
                self.texts.insert(at, pair_text(record_id, digest))

    def text(self) -> str:
        """The pairs' texts joined in order: ``fileformat.pairs_hash``'s input."""
        return "".join(self.texts)

"""The live records a view is rendered from, in the order they are read, kept patched.

``LiveRows`` holds, for one part of the render cache (``cache.MEMOS``), the files of the live
records it shows, in the table's order (by file), with their content digests. It is built
once from a ``Table`` and then patched with the rows that changed (``Table.patch``'s
arguments), noting the digests that came and went since the last ``take``: a save that
changes one record of 10k tells the render cache that one item, without a pass over them
all. Pure: no file I/O.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from planning_memory.views.table import Table

_TYPES = {"patterns": "pattern", "mistakes": "mistake"}  # a view's memo -> its records' type


def shows(memo: str, type_: str, live: bool, shown: bool) -> bool:
    """True when the view of ``memo`` has an item for a record with these fields: every live
    record of its type; for CLAUDE.md every live one it shows."""
    return live and (shown if memo == "claude" else type_ == _TYPES.get(memo))


@dataclass
class LiveRows:
    """The files and digests of the live records a view shows, in the table's order."""

    files: list[str]
    digests: list[str]
    counts: Counter[str]  # digest -> how many of the files hold it
    came: dict[str, str] = field(default_factory=dict)  # digest -> a file, since ``take``
    went: set[str] = field(default_factory=set)  # digests no file holds now, since ``take``

    @classmethod
    def of(cls, table: Table, memo: str) -> LiveRows:
        """The live rows of ``table`` the view of ``memo`` shows."""
        every = zip(table.type, table.live, table.shown, strict=True)
        rows = [i for i, fields in enumerate(every) if shows(memo, *fields)]
        digests = [table.digest[i] for i in rows]
        return cls([table.files[i] for i in rows], digests, Counter(digests))

    def patch(
        self, before: Table, rows: Sequence[Sequence[Any]], gone: Sequence[str], memo: str
    ) -> None:
        """Move from the rows of ``before`` to those it has after ``before.patch(rows, gone)``
        (called before that)."""
        for i in before.replaced(rows, gone):
            if shows(memo, before.type[i], before.live[i], before.shown[i]):
                at = bisect_left(self.files, before.files[i])
                del self.files[at], self.digests[at]
                self._count(before.digest[i], -1, before.files[i])
        for file, _ctime, _size, digest, _id, type_, live, shown in rows:
            if shows(memo, type_, live, shown):
                at = bisect_left(self.files, file)
                self.files.insert(at, file)
                self.digests.insert(at, digest)
                self._count(digest, 1, file)

    def _count(self, digest: str, step: int, file: str) -> None:
        """One file more (``step`` 1) or fewer holding ``digest``; note when it came or went."""
        self.counts[digest] += step
        if step > 0 and self.counts[digest] == 1:
            if digest in self.went:
                self.went.discard(digest)
            else:
                self.came[digest] = file
        elif step < 0 and not self.counts[digest]:
            del self.counts[digest]
            if self.came.pop(digest, None) is None:
                self.went.add(digest)
        elif step < 0 and self.came.get(digest) == file:  # another file holds it still
            self.came[digest] = self.files[self.digests.index(digest)]

    def take(self) -> tuple[set[str], dict[str, str]]:
        """The digests that went and came (each with a file holding it) since the last call."""
        went, came = self.went, self.came
        self.went, self.came = set(), {}
        return went, came

    def unique(self) -> bool:
        """True when no two files hold the same digest."""
        return len(self.counts) == len(self.digests)

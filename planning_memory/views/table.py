"""The long-term record files of one tree, column by column, as the catalog lists them.

A ``Table`` lists the record files in folder order, then by name (``longterm.Catalog.rows``),
with each one's stamp (ctime and size; ctime 0 when it was too recent to trust), content
digest, id, type, and whether it is live and shown in CLAUDE.md. Columns of plain values
rather than an object per file, so 10k files allocate little, patched in place as files
change; a column of what each gives a source hash (``fileformat.pair_text``), worked out only
for the rows that change. No file I/O of its own.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from planning_memory.views.fileformat import pair_text


class Row(NamedTuple):
    """One record file as last read: ``ctime`` 0 when its stat was too recent to trust."""

    ctime: int
    size: int
    digest: str  # core.record_digest of its content; "" when the file holds no record
    id: str
    type: str
    live: bool
    shown: bool  # CLAUDE.md has an entry for it


@dataclass(frozen=True)
class Table:
    files: list[str]
    ctime: list[int]
    size: list[int]
    digest: list[str]
    id: list[str]
    type: list[str]
    live: list[bool]
    shown: list[bool]
    pairs: list[str]  # fileformat.pair_text of each id and digest: a source hash's input

    @classmethod
    def empty(cls) -> Table:
        return cls([], [], [], [], [], [], [], [], [])

    @classmethod
    def of(cls, rows: Sequence[Sequence[Any]]) -> Table:
        """The table of ``rows``: (file, *the fields of a ``Row``) each."""
        if not rows:
            return cls.empty()
        columns = [list(column) for column in zip(*rows, strict=True)]
        columns.append(list(map(pair_text, columns[4], columns[3])))
        return cls(*columns)

    def patch(self, rows: Sequence[Sequence[Any]], gone: Sequence[str]) -> None:
        """Set ``rows`` (added or replaced, by file) and remove the files ``gone``, in place:
        copying 10k rows of every column for one changed file costs more than the change."""
        columns, files = self._all(), self.files
        for file in gone:
            i = bisect_left(files, file)
            if i < len(files) and files[i] == file:
                for column in columns:
                    del column[i]
        for row in rows:
            values = (*row, pair_text(row[4], row[3]))
            i = bisect_left(files, row[0])
            if i < len(files) and files[i] == row[0]:
                for column, value in zip(columns, values, strict=True):
                    column[i] = value
            else:
                for column, value in zip(columns, values, strict=True):
                    column.insert(i, value)

    def replaced(self, rows: Sequence[Sequence[Any]], gone: Sequence[str]) -> list[int]:
        """The rows of this table that ``patch(rows, gone)`` replaces or removes."""
        found = []
        for file in dict.fromkeys([*gone, *(row[0] for row in rows)]):
            i = bisect_left(self.files, file)
            if i < len(self.files) and self.files[i] == file:
                found.append(i)
        return found

    def _all(self) -> tuple[list[Any], ...]:
        return (
            self.files,
            self.ctime,
            self.size,
            self.digest,
            self.id,
            self.type,
            self.live,
            self.shown,
            self.pairs,
        )

    def row(self, i: int) -> Row:
        return Row(
            self.ctime[i],
            self.size[i],
            self.digest[i],
            self.id[i],
            self.type[i],
            self.live[i],
            self.shown[i],
        )

"""The long-term record files of one tree, column by column: what was last read of each.

A ``Table`` lists the record files in the order the records are read, with each one's stat
(ctime and size; ctime 0 when it was too recent to trust), content digest, id, type, and
whether it is live and shown in CLAUDE.md. ``Table.updated`` takes a new stat of the files and
reads (through a callback) only those whose stat moved. Columns of plain values rather than an
object per file, so keeping 10k files current allocates little. No file I/O of its own.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any, NamedTuple


class Row(NamedTuple):
    """One record file as last read: ``ctime`` 0 when its stat was too recent to trust."""

    ctime: int
    size: int
    digest: str  # fileformat.record_digest of its content; "" when the file holds no record
    id: str
    type: str
    live: bool
    shown: bool  # CLAUDE.md has an entry for it


Reader = Callable[[str, int, int], Row]  # (file, ctime, size) -> its row, read now
STAT = 2  # a row's first fields are its stat, the rest what was read
# files, ctimes, sizes: a stat of the record files (``longterm.record_stats``)
Stats = tuple[list[str], list[int], list[int]]


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

    @classmethod
    def empty(cls) -> Table:
        return cls([], [], [], [], [], [], [], [])

    @classmethod
    def from_json(cls, value: Any) -> Table:
        """The table ``to_json`` wrote; ``ValueError`` when it does not hold together."""
        columns = [value[f.name] for f in fields(cls)]
        if not all(isinstance(c, list) and len(c) == len(columns[0]) for c in columns):
            raise ValueError("not a table of record files")
        return cls(*columns)

    def to_json(self) -> dict[str, list[Any]]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def span(self, folder: str) -> slice:
        """The rows of the files in ``folder``: the files are in folder order, then by name."""
        return span(self.files, folder)

    def row(self, i: int) -> Row:
        return Row(*(column[i] for column in self._columns()))

    def _columns(self) -> tuple[list[Any], ...]:
        return self.ctime, self.size, self.digest, self.id, self.type, self.live, self.shown

    def unchanged(self, stats: Stats) -> bool:
        """True when this stat of the files is the one the table holds, all trusted."""
        files, ctimes, sizes = stats
        return (
            files == self.files and ctimes == self.ctime and sizes == self.size and 0 not in ctimes
        )

    def updated(self, stats: Stats, read: Reader) -> tuple[Table, list[Row], list[str]]:
        """The table of the files of ``stats`` with this stat, the rows of the files whose
        content changed (before and after) or that are gone, and the files whose row is not
        the one this table holds (new, gone, or with another stat)."""
        files, ctimes, sizes = stats
        if files == self.files:
            where: Sequence[int] = range(len(files))
            old_columns = [list(column) for column in self._columns()[STAT:]]
        else:
            position = dict(zip(self.files, range(len(self.files)), strict=True))
            where = [position.get(file, -1) for file in files]
            old_columns = [
                [c[j] if j >= 0 else None for j in where] for c in self._columns()[STAT:]
            ]
        new = Table(files, ctimes, sizes, *old_columns)
        changed, touched = [], []
        old_ctime, old_size = self.ctime, self.size
        for i, j in enumerate(where):
            if j >= 0 and ctimes[i] and ctimes[i] == old_ctime[j] and sizes[i] == old_size[j]:
                continue
            touched.append(files[i])
            row = read(files[i], ctimes[i], sizes[i])
            for column, value in zip(new._columns()[STAT:], row[STAT:], strict=True):
                column[i] = value
            old = self.row(j) if j >= 0 else None
            if old is None or old[STAT:] != row[STAT:]:
                changed += [row] if old is None else [old, row]
        if files != self.files:
            kept = set(files)
            gone = [j for j, file in enumerate(self.files) if file not in kept]
            changed += [self.row(j) for j in gone]
            touched += [self.files[j] for j in gone]
        return new, changed, touched

    def patched(self, rows: dict[str, list[Any] | None]) -> Table:
        """This table with the row of each file of ``rows`` set (or, for None, removed)."""
        new = Table(*(list(column) for column in (self.files, *self._columns())))
        columns = (new.files, *new._columns())
        for file, row in rows.items():
            i = bisect_left(new.files, file)
            here = i < len(new.files) and new.files[i] == file
            if row is None:
                if here:
                    for column in columns:
                        del column[i]
            elif len(row) != len(columns) - 1:
                raise ValueError("not a row of the table of record files")
            elif here:
                for column, value in zip(columns[1:], row, strict=True):
                    column[i] = value
            else:
                for column, value in zip(columns, [file, *row], strict=True):
                    column.insert(i, value)
        return new

    def row_of(self, file: str) -> list[Any] | None:
        """The row of ``file`` as a list (None when the table has no such file)."""
        i = bisect_left(self.files, file)
        if i < len(self.files) and self.files[i] == file:
            return list(self.row(i))
        return None


def span(files: list[str], folder: str) -> slice:
    """Where the files of ``folder`` are in ``files`` (sorted: by folder, then by name)."""
    return slice(bisect_left(files, folder + "/"), bisect_left(files, folder + "0"))

"""The long-term record files of one tree, column by column: what was last read of each.

A ``Table`` lists the record files in the order the records are read, with each one's stat
(mtime 0 when it was too recent to trust), content digest, id, type, and whether it is live and
shown in CLAUDE.md. ``Table.updated`` takes a new stat of every file and reads (through a
callback) only those whose stat moved. Columns of plain values rather than an object per file,
so keeping 10k files current allocates little. No file I/O of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any, NamedTuple


class Row(NamedTuple):
    """One record file as last read: ``mtime`` 0 when its stat was too recent to trust."""

    mtime: int
    size: int
    digest: str  # fileformat.record_digest of its content; "" when the file holds no record
    id: str
    type: str
    live: bool
    shown: bool  # CLAUDE.md has an entry for it


Reader = Callable[[str, int, int], Row]  # (file, mtime, size) -> its row, read now


@dataclass(frozen=True)
class Table:
    files: list[str]
    mtime: list[int]
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

    def row(self, i: int) -> Row:
        return Row(*(column[i] for column in self._columns()))

    def _columns(self) -> tuple[list[Any], ...]:
        return self.mtime, self.size, self.digest, self.id, self.type, self.live, self.shown

    def unchanged(self, files: list[str], mtimes: list[int], sizes: list[int]) -> bool:
        """True when this stat of the files is the one the table holds, all trusted."""
        return (
            files == self.files
            and mtimes == self.mtime
            and sizes == self.size
            and (0 not in mtimes)
        )

    def updated(
        self, files: list[str], mtimes: list[int], sizes: list[int], read: Reader
    ) -> tuple[Table, list[Row]]:
        """The table of ``files`` with this stat, and the rows of the files whose content
        changed (before and after) or that are gone."""
        if files == self.files:
            where: Sequence[int] = range(len(files))
            old_columns = [list(column) for column in self._columns()[2:]]
        else:
            position = dict(zip(self.files, range(len(self.files)), strict=True))
            where = [position.get(file, -1) for file in files]
            old_columns = [[c[j] if j >= 0 else None for j in where] for c in self._columns()[2:]]
        new = Table(files, mtimes, sizes, *old_columns)
        changed = []
        for i, j in enumerate(where):
            if j >= 0 and mtimes[i] and mtimes[i] == self.mtime[j] and sizes[i] == self.size[j]:
                continue
            row = read(files[i], mtimes[i], sizes[i])
            for column, value in zip(new._columns()[2:], row[2:], strict=True):
                column[i] = value
            old = self.row(j) if j >= 0 else None
            if old is None or old[2:] != row[2:]:
                changed += [row] if old is None else [old, row]
        if files != self.files:
            kept = set(files)
            changed += [self.row(j) for j, file in enumerate(self.files) if file not in kept]
        return new, changed

"""What a view's source hash is built from, kept in order: its records' (id, digest) pairs.

``SortedPairs`` holds the pairs of the records a view's ``source-hash`` covers
(``fileformat.digests_hash``) in their buckets, each sorted by id, then digest, with each
pair's text (``fileformat.pair_text``) and the bucket's hash. It is built once from a
``Table`` and then patched with the rows that changed (``Table.patch``'s arguments), so a save
that changes one record of 10k moves one pair and hashes again the one or two buckets it
left or joined (about 40 pairs each), instead of sorting and hashing them all. Pure: no file
I/O.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from planning_memory.views.fileformat import bucket_hash, bucket_of, pair_text
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
class Bucket:
    """The pairs of one bucket, sorted, by their texts, with (once asked) their hash."""

    texts: list[str] = field(default_factory=list)
    hashed: str | None = field(default=None, compare=False)  # None: not worked out since
    keys_of: list[tuple[str, str]] | None = field(default=None, compare=False, repr=False)

    @property
    def keys(self) -> list[tuple[str, str]]:
        """The (id, digest) of each text, read back from it once a patch needs them (a new
        process only hashes the pairs)."""
        if self.keys_of is None:
            self.keys_of = list(map(_pair_of, self.texts))
        return self.keys_of

    def add(self, record_id: str, digest: str) -> None:
        at = bisect_right(self.keys, (record_id, digest))
        self.keys.insert(at, (record_id, digest))
        self.texts.insert(at, pair_text(record_id, digest))
        self.hashed = None

    def drop(self, record_id: str, digest: str) -> None:
        at = bisect_left(self.keys, (record_id, digest))
        del self.keys[at], self.texts[at]
        self.hashed = None

    def hash(self) -> str:
        if self.hashed is None:
            self.hashed = bucket_hash("".join(self.texts))
        return self.hashed


def _pair_of(text: str) -> tuple[str, str]:
    """The (id, digest) ``fileformat.pair_text`` wrote as ``text`` (its id length-prefixed)."""
    size, _, rest = text.partition(":")
    return rest[: int(size)], rest[int(size) :]


@dataclass
class SortedPairs:
    """The (id, digest) pairs a view's source hash covers, by bucket, each sorted."""

    buckets: dict[str, Bucket]

    @classmethod
    def of(cls, table: Table, memo: str) -> SortedPairs:
        """The pairs of the rows of ``table`` the source hash of ``memo`` covers."""
        every = zip(table.type, table.live, table.shown, strict=True)
        rows = [i for i, fields in enumerate(every) if covers(memo, *fields)]
        ids, digests, texts = table.id, table.digest, table.pairs
        rows.sort(key=lambda i: (ids[i], digests[i]))
        heads = list(map(bucket_of, [digests[i] for i in rows]))
        by_bucket = sorted(range(len(rows)), key=heads.__getitem__)  # stable: in order within
        buckets = {}
        for key, group in groupby(by_bucket, key=heads.__getitem__):
            buckets[key] = Bucket([texts[rows[at]] for at in group])
        return cls(buckets)

    def patch(
        self, before: Table, rows: Sequence[Sequence[Any]], gone: Sequence[str], memo: str
    ) -> None:
        """Move from the pairs of ``before`` to those it has after ``before.patch(rows, gone)``
        (called before that)."""
        for i in before.replaced(rows, gone):
            if covers(memo, before.type[i], before.live[i], before.shown[i]):
                key = bucket_of(before.digest[i])
                self.buckets[key].drop(before.id[i], before.digest[i])
                if not self.buckets[key].keys:
                    del self.buckets[key]
        for _file, _ctime, _size, digest, record_id, type_, live, shown in rows:
            if covers(memo, type_, live, shown):
                self.buckets.setdefault(bucket_of(digest), Bucket()).add(record_id, digest)

    def hashes(self, *more: tuple[str, str]) -> dict[str, str]:
        """Each bucket's hash (``fileformat.buckets_hash``'s input), with ``more`` pairs in
        their buckets (CLAUDE.md's preferences)."""
        found = {key: bucket.hash() for key, bucket in self.buckets.items()}
        for record_id, digest in more:
            key = bucket_of(digest)
            bucket = self.buckets.get(key, Bucket())
            added = Bucket(list(bucket.texts), keys_of=list(bucket.keys))
            added.add(record_id, digest)
            found[key] = added.hash()
        return found

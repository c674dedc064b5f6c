"""What the learning rules ask the catalog of long-term records (``catalog.Catalog``).

Is there a live record of the same topic, an exact duplicate (``fingerprint``), a pattern or
mistake similar enough to merge into (``similar``), and, past a cap, which records are archived
first. Each answer comes in file order, the order the record files are read in; each record is
loaded by ``load``, which raises ``Stale`` when its file changed since it was catalogued (the
caller refreshes the folder and asks again). ``Lookups`` is the catalog's half that answers;
the other half keeps it current (``catalog``).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from typing import TYPE_CHECKING, Any, NamedTuple

from planning_memory.core import Layout, Record, record_digest
from planning_memory.longterm import similarity
from planning_memory.longterm.live import Live

if TYPE_CHECKING:
    from planning_memory.store import Store

SIMILAR_TYPES = ("pattern", "mistake")

_ENTRY = "file, ctime, size, digest"  # the columns of an ``Entry``
_BOUND_COLUMNS = "e.rid, e.nwords, e.ncode, e.ngrams, e.mask"
_LIVE_OF_SCOPE = "e.type = ? AND e.live AND e.scope IS ?"


Row = tuple[str, int, int, str, str, str, bool, bool]  # ``Catalog.rows``


class Stale(Exception):
    """A record the catalog picked changed on disk since it was catalogued."""


class Entry(NamedTuple):
    """A catalogued record file: where it is, the stamp it had (``core.stamps``), the digest of
    its record (``core.record_digest``) and what was read from it."""

    file: str  # relative to long-term/: ``patterns/pat_….json``
    ctime: int  # negative: too recent to trust when catalogued (``_file_stamp``)
    size: int
    digest: str = ""
    profile: similarity.Profile | None = None


def text_of(record: Record) -> str:
    """The text similarity compares: a pattern's name and description, a mistake's
    description and correction, anything else's title and ``learned``."""
    if record["type"] == "pattern":
        return f"{record.get('name', '')} {record.get('description', '')}"
    if record["type"] == "mistake":
        return f"{record.get('description', '')} {record.get('correction', '')}"
    return f"{record.get('title', '')} {record.get('learned', '')}"


def fingerprint(record: Record) -> str:
    """Exact-duplicate key: type, scope, project (a personal record saved from a project)
    and normalised content."""
    parts = [
        record["type"],
        record.get("scope", "project"),
        " ".join(text_of(record).lower().split()),
        " ".join(record["body"].get("what", "").lower().split()),
    ]
    if record.get("project"):
        parts.append(record["project"])
    return "\x1f".join(parts)


def terms_of(record_type: str, words: list[str]) -> list[str]:
    """The catalog's posting terms of ``words`` (``similarity`` words: ``[a-z0-9]+``) in
    records of ``record_type``: each word prefixed by the type's letter."""
    letter = record_type[0]
    return [letter + word for word in words]


def _digest(text: str) -> bytes:
    """A 12-byte key of ``text`` (the catalog keeps it as a blob)."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=12).digest()


def _grams_key(grams: frozenset[str]) -> bytes:
    return _digest("\x1f".join(sorted(grams)))


class Lookups:
    """The lookups of the catalog of one tree (mixed into ``catalog.Catalog``, which opens the
    connection and keeps the rows current).

    From its ``MIRROR_AFTER``-th similarity lookup on, a catalog keeps what ``similar`` reads
    in memory as well (``live.Live``: bitmaps of the words and trigram masks of the live
    patterns and mistakes), kept up to date by its own writes and dropped when another
    connection commits (SQLite's ``data_version``) or a write is rolled back: a process that
    saves many times (a bulk import, the MCP server, the daemon) reads it once and then
    tries only the records that may reach the threshold."""

    MIRROR_AFTER = 3
    layout: Layout
    store: Store
    conn: sqlite3.Connection
    _live: dict[str, Live] | None
    _version: int
    _lookups: int
    _written: dict[str, tuple[int, int, Record]]

    def rows(self, since: int = -1) -> tuple[int, list[Row], list[str]]:
        """The catalog's generation, and every record file catalogued (or only those changed
        after generation ``since``, and the files gone since), by folder then name. A row:
        file, ctime, size, digest, id, type, live, shown in CLAUDE.md
        (``core.claude_section``); a file that holds no record of its folder has digest, id
        and type "" and is neither live nor shown."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'gen'").fetchone()
        gen = 0 if row is None else int(row[0])
        found = self.conn.execute(
            "SELECT file, ctime, size, digest, coalesce(id, ''), coalesce(type, ''), "
            "coalesce(live, 0) AND digest != '', coalesce(shown, 0) FROM entries "
            "WHERE gen > ? ORDER BY +file",  # every row has a generation >= 0; by entries_gen
            (since,),
        ).fetchall()
        if since < 0:
            return gen, found, []
        gone = [f for (f,) in self.conn.execute("SELECT file FROM gone WHERE gen > ?", (since,))]
        return gen, found, gone

    def tally(self) -> dict[str, Any]:
        """How many records there are: live and deleted, live per type, pinned and
        established among the live ones (what ``pmem show`` says, without reading them)."""
        by_type: dict[str, int] = {}
        found = {"records": 0, "deleted": 0, "pinned": 0, "established_patterns": 0}
        for kind, live, count, pinned, established in self.conn.execute(
            "SELECT type, live, count(*), sum(pinned), sum(established) FROM entries "
            "WHERE digest != '' GROUP BY type, live"
        ):
            if not live:
                found["deleted"] += count
                continue
            by_type[kind] = count
            found["records"] += count
            found["pinned"] += int(pinned or 0)
            found["established_patterns"] += int(established or 0)
        return {**found, "by_type": dict(sorted(by_type.items()))}

    def load(self, entry: Entry) -> Record:
        """The record of ``entry``; ``Stale`` if its file changed since it was catalogued (its
        stamp moved, or it was too recent to trust and its record's digest moved)."""
        path = self.layout.long_term / entry.file
        try:
            st = os.stat(path)
            known = self._written.get(entry.file)
            if known is not None and known[:2] == (st.st_ctime_ns, st.st_size):
                value: Record = known[2]  # written by this batch, as catalogued
            else:
                value = self.store.load(path).value
        except FileNotFoundError:
            raise Stale(entry.file) from None
        if entry.ctime > 0:
            if (st.st_ctime_ns, st.st_size) != (entry.ctime, entry.size):
                raise Stale(entry.file)
        elif not entry.digest or record_digest(value) != entry.digest:
            raise Stale(entry.file)
        return value

    def same_topic(self, record_type: str, scope: str | None, topic: str) -> list[Entry]:
        """Live records of ``topic`` in ``scope``, of any type (seed 003 upserts a topic
        across types): those of ``record_type`` first."""
        rows = self.conn.execute(
            f"SELECT {_ENTRY} FROM entries WHERE topic = ? AND live AND scope IS ? "
            "ORDER BY type = ? DESC, file",
            (topic, scope, record_type),
        )
        return [Entry(*row) for row in rows]

    def same_fingerprint(self, record: Record) -> list[tuple[Entry, str]]:
        """Live records with ``record``'s fingerprint, with their ``updated_at``."""
        rows = self.conn.execute(
            f"SELECT {_ENTRY}, updated_at FROM entries WHERE fingerprint = ? "
            "AND +type = ? AND +live ORDER BY file",  # + : by the fingerprint index, not type
            (_digest(fingerprint(record)), record["type"]),
        )
        return [(Entry(*row[:4]), row[4]) for row in rows]

    def similar(
        self, record_type: str, scope: str | None, mine: similarity.Profile, threshold: float
    ) -> list[Entry]:
        """The live records of ``record_type`` and ``scope`` that may score ``threshold``
        against ``mine``, with their profiles, in file order.

        Candidates: without a shared word the token part of the score is 0 and the rest at
        most ``1 - TOKEN_WEIGHT``, reached only by an equal set of trigrams; so above that
        ceiling only records sharing a word can match, at it also those with the same
        trigrams, and below it every record is a candidate. Each candidate whose
        ``similarity.ceiling`` (from the stored counts and trigram mask) is below
        ``threshold`` is dropped before its profile is built. The candidates come from
        SQLite, or from the in-memory copy once this catalog keeps one (``MIRROR_AFTER``)."""
        margin = threshold - 1e-9  # the bounds are computed in another order than the score
        live = self._mirror(record_type)
        if live is None:
            kept = self._reaching_sqlite(record_type, scope, mine, threshold, margin)
        else:
            kept = live.reaching(scope, mine, threshold, margin)
        if threshold == 1 - similarity.TOKEN_WEIGHT and mine[2]:
            may_reach = similarity.may_reach(mine, margin)
            same_grams = self.conn.execute(
                f"SELECT {_BOUND_COLUMNS} FROM entries e WHERE +{_LIVE_OF_SCOPE} "
                "AND e.grams = ?",  # +: by the grams index, not the type one
                (record_type, scope, _grams_key(mine[2])),
            )
            kept.update(
                rid
                for rid, nwords, ncode, ngrams, mask in same_grams
                if may_reach(0, nwords, ncode, ngrams, int.from_bytes(mask, "little"))
            )
        if not kept:
            return []
        found = self.conn.execute(
            f"SELECT {_ENTRY}, words, code FROM entries "
            f"WHERE rid IN ({','.join('?' * len(kept))}) ORDER BY file",
            sorted(kept),
        ).fetchall()
        return [
            Entry(file, ctime, size, digest, similarity.profile_of(words.split(), code.split()))
            for file, ctime, size, digest, words, code in found
        ]

    def _reaching_sqlite(
        self,
        record_type: str,
        scope: str | None,
        mine: similarity.Profile,
        threshold: float,
        margin: float,
    ) -> set[int]:
        """``similar``'s candidates that may reach ``margin``, from the posting lists: the
        records sharing a word (every live record below the ceiling), a first bound from
        the counts in SQL, the trigram mask in Python."""
        words = terms_of(record_type, sorted(mine[0]))
        shared = (  # ``posted``: the postings' (term, record) pairs
            f"SELECT doc AS rid, count(*) AS shared FROM posted "
            f"WHERE term IN ({','.join('?' * len(words))}) GROUP BY doc"
        )
        # the bound without the trigram mask: the trigram part at most 2 min / sum of counts
        weight, mine_words, mine_grams = similarity.CODE_WEIGHT, len(mine[0]), len(mine[2])
        extra = f"{weight - 1} * min(s.shared, {len(mine[1])} + e.ncode)"  # token_ceiling
        bound = (
            f"{similarity.TOKEN_WEIGHT} * min(1.0, (s.shared + {extra}) * 1.0 / "
            f"max(1, {mine_words} + e.nwords - s.shared + {extra})) + "
            f"{1 - similarity.TOKEN_WEIGHT} * 2.0 * min({mine_grams}, e.ngrams) / "
            f"max(1, {mine_grams} + e.ngrams) >= ?"
        )
        if threshold < 1 - similarity.TOKEN_WEIGHT:
            rows = self.conn.execute(
                f"SELECT {_BOUND_COLUMNS}, coalesce(s.shared, 0) FROM entries e "
                f"LEFT JOIN ({shared}) s ON s.rid = e.rid WHERE {_LIVE_OF_SCOPE}",
                (*words, record_type, scope),
            )
        else:
            rows = self.conn.execute(
                f"SELECT {_BOUND_COLUMNS}, s.shared FROM ({shared}) s JOIN entries e "
                f"ON e.rid = s.rid WHERE {_LIVE_OF_SCOPE} AND {bound}",
                (*words, record_type, scope, margin),
            )
        may_reach, from_bytes = similarity.may_reach(mine, margin), int.from_bytes
        return {
            rid
            for rid, nwords, ncode, ngrams, mask, common in rows
            if may_reach(common, nwords, ncode, ngrams, from_bytes(mask, "little"))
        }

    def _mirror(self, record_type: str) -> Live | None:
        """The in-memory copy of ``record_type``'s live records, read now if this is the
        ``MIRROR_AFTER``-th lookup or later and none is kept; None before that (and for types
        without similarity)."""
        self._lookups += 1
        version = self.conn.execute("PRAGMA data_version").fetchone()[0]
        if version != self._version or self._live is None:
            self._live = {}  # another connection committed: read again
            self._version = version
        if record_type not in self._live:
            if self._lookups < self.MIRROR_AFTER or record_type not in SIMILAR_TYPES:
                return None
            live = Live()
            live.build(
                self.conn.execute(
                    "SELECT rid, scope, nwords, ncode, ngrams, mask, words FROM entries "
                    "WHERE type = ? AND live AND mask IS NOT NULL ORDER BY rid",
                    (record_type,),
                ).fetchall()
            )
            self._live[record_type] = live
        return self._live[record_type]

    def live_count(self, record_type: str) -> int:
        row = self.conn.execute(
            "SELECT count(*) FROM entries WHERE type = ? AND live = 1", (record_type,)
        ).fetchone()
        return int(row[0])

    def archive_order(self, record_type: str, keep: str, count: int) -> list[Entry]:
        """The first ``count`` live records to archive past a cap: neither pinned nor
        established nor ``keep``, least used, then least recently updated, then by id."""
        rows = self.conn.execute(
            f"SELECT {_ENTRY} FROM entries WHERE type = ? AND live AND NOT pinned "
            "AND NOT established AND id != ? ORDER BY uses, updated_at, id, file LIMIT ?",
            (record_type, keep, count),
        )
        return [Entry(*row) for row in rows]

    def latest(self, record_type: str) -> Entry | None:
        """The live record of ``record_type`` updated last (then the greatest id)."""
        row = self.conn.execute(
            f"SELECT {_ENTRY} FROM entries WHERE type = ? AND live "
            "ORDER BY updated_at DESC, id DESC, file LIMIT 1",
            (record_type,),
        ).fetchone()
        return None if row is None else Entry(*row)

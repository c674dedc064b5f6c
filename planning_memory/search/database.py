"""The contextual search index: SQLite FTS5 under ``memory/contextual/``; the only sqlite3 user.

The index is derived: every row comes from files (records, sessions, entity shards, the code),
so it is safe to delete at any time and ``rebuild`` recreates it. It is gitignored. Documents
are stored in ``docs`` and indexed by the external-content FTS5 table ``fts`` (Porter stemming
over unicode61 words, plus a ``terms`` column holding camelCase identifiers split into words).
Documents are replaced a *group* at a time: one record file, one session file, one entity
shard, or the chunks of one source file. ``groups`` remembers each group's content hash and the
(mtime, size) of the file it came from, which makes incremental updates cheap. ``access``
holds how often each document was handed to an agent; it lives only here, never in committed
files, and survives a rebuild (not a deletion of the file).

Concurrency: WAL journal, ``busy_timeout``, and ``BEGIN IMMEDIATE`` for every write, so any
number of reader and writer processes can share the file; a crash loses at most the
transaction in flight. A file that is not a usable database is deleted and recreated empty.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planning_memory import readonly
from planning_memory.core import Layout
from planning_memory.errors import StorageError
from planning_memory.search import vectors
from planning_memory.search.documents import Doc
from planning_memory.search.rows import COLUMNS, Row, doc_values, read_row, select_columns, varints
from planning_memory.search.schema import DROP, LISTS, SCHEMA, SCHEMA_VERSION, UPGRADES
from planning_memory.store import check_database, inside_tree, open_inside

INDEX_NAME = "index.sqlite3"
BUSY_TIMEOUT_S = 10.0
# bm25 column weights: title, body, tags, path, terms
BM25_WEIGHTS = (3.0, 1.0, 2.0, 2.0, 1.0)
# a record of another project than the handle's ``home`` (``Index.weight``): 1 / 1.25, so the
# recency and access boosts (at most 1.25 together) never lift one over an equally relevant
# record of this project
AWAY_WEIGHT = 0.8
SCAN_CAP = 2000  # matches ranked by BM25 per query step (the most recently indexed)
BY_KEY = "sqlite_autoindex_docs_1"  # the index of ``docs.key`` (its UNIQUE constraint)


# A resident process (the hook server, ``hold_open``) keeps one idle connection to each index
# it opened: closing a handle is then never the file's last close, which checkpoints the WAL
# into the database and syncs both (6-16 ms a hook). ``release_gone`` lets go of those whose
# file is gone or was replaced (a repository removed, an index deleted).
_HELD: dict[str, tuple[tuple[int, int], sqlite3.Connection]] = {}
_HOLDING: list[bool] = [False]
HELD_MAX = 8


def hold_open(on: bool = True) -> None:
    """From now on keep each index this process opens open between handles (``_HELD``);
    ``on=False``: no longer, and close those held."""
    _HOLDING[0] = on
    while not on and _HELD:
        _HELD.popitem()[1][1].close()


def release_gone() -> None:
    """Close the held connections whose index file is gone or is another file now."""
    for path, (ident, conn) in list(_HELD.items()):
        try:
            st = os.stat(path)
        except OSError:
            st = None
        if st is None or (st.st_dev, st.st_ino) != ident:
            del _HELD[path]
            conn.close()


def _hold(path: Path, timeout: float) -> None:
    """Keep an idle connection to ``path`` (checked, and just opened by a handle): one that
    has read once holds the WAL open, so the handles' closes leave it be."""
    key = os.fspath(path)
    st = os.stat(key)
    known = _HELD.get(key)
    if known is not None and known[0] == (st.st_dev, st.st_ino):
        return
    release_gone()
    if len(_HELD) >= HELD_MAX:
        _HELD.pop(next(iter(_HELD)))[1].close()
    conn = sqlite3.connect(key, timeout=timeout, isolation_level=None)
    conn.execute("SELECT count(*) FROM meta").fetchone()
    _HELD[key] = ((st.st_dev, st.st_ino), conn)


@dataclass(frozen=True)
class Totals:
    """What BM25 needs of the whole index: how many documents, their mean length in tokens
    (all columns), the highest document id (ids grow as documents are indexed), and the
    share of all tokens in each column (title, body, tags, path, terms)."""

    documents: int
    mean_length: float
    last_id: int
    shares: tuple[float, ...] = ()


@dataclass(frozen=True)
class Filters:
    """Restrictions applied inside the index query; empty means no restriction."""

    sources: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    scope: str | None = None
    tags: tuple[str, ...] = ()
    session_id: str | None = None

    def sql(self) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        args: list[Any] = []
        for column, values in (("d.source", self.sources), ("d.type", self.types)):
            if values:
                clauses.append(f"{column} IN ({','.join('?' * len(values))})")
                args.extend(values)
        if self.scope:
            clauses.append("d.scope = ?")
            args.append(self.scope)
        for tag in self.tags:
            clauses.append("instr(d.tags, ?) > 0")
            args.append(f" {tag} ")
        if self.session_id:
            clauses.append("d.session_id = ?")
            args.append(self.session_id)
        return "".join(f" AND {c}" for c in clauses), args


def index_path(layout: Layout) -> Path:
    return layout.contextual / INDEX_NAME


class Index:
    """One open index file. Use as a context manager or call ``close``."""

    def __init__(
        self, path: Path, *, tree: Path | None = None, timeout: float = BUSY_TIMEOUT_S
    ) -> None:
        """The index in ``path``, in the memory tree ``tree`` (default: the file's folder):
        nothing on the way to it may lead out of the tree (``store.inside_tree``)."""
        self.path = Path(path)
        self.tree = Path(tree) if tree is not None else self.path.parent
        self.timeout = timeout
        # the projects whose records come first ("": of none), e.g. the personal store's index
        # as one project sees it: the records of others rank at ``AWAY_WEIGHT`` and list after
        # (``weight``); None: every project alike
        self.home: tuple[str, ...] | None = None
        inside_tree(self.tree, self.path)
        self.in_memory = readonly.wanted(self.path)  # a read-only tree: kept in memory
        if not self.in_memory:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.conn = self._connect()
        except sqlite3.DatabaseError as exc:
            self._refuse(exc)  # a full disk: the index is kept as it is
            self._discard()
            self.conn = self._connect()

    def _refuse(self, exc: sqlite3.Error) -> None:
        """Raise the ``StorageError`` that ``exc`` stands for, if it says the disk refused
        a write (full, over quota, read-only)."""
        refused = StorageError.of(exc, self._name(self.path))
        if refused is not None:
            raise refused from None

    @classmethod
    def open(cls, layout: Layout, *, timeout: float = BUSY_TIMEOUT_S) -> Index:
        return cls(index_path(layout), tree=layout.planning, timeout=timeout)

    def _name(self, path: Path) -> str:
        return Layout(self.tree).relative(path)

    def _connect(self) -> sqlite3.Connection:
        path = check_database(inside_tree(self.tree, self.path), name=self._name(self.path))
        conn = readonly.connect(path, in_memory=self.in_memory, timeout=self.timeout)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA secure_delete = ON")  # replaced text leaves no bytes behind
            conn.execute("PRAGMA journal_size_limit = 67108864")
            if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                _migrate(conn)
            conn.execute("SELECT count(*) FROM meta").fetchone()
            if _HOLDING[0] and not self.in_memory:
                with contextlib.suppress(OSError, sqlite3.Error):  # only an optimisation
                    _hold(path, self.timeout)
        except BaseException:
            readonly.close(conn)
            raise
        return conn

    def _discard(self) -> None:
        readonly.discard(self.path, in_memory=self.in_memory)

    def close(self) -> None:
        readonly.close(self.conn)

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def write(self) -> Iterator[None]:
        """One write transaction (``BEGIN IMMEDIATE``: waits for other writers); on a full
        disk it is rolled back and ``StorageError`` names the index."""
        if self.conn.in_transaction:
            yield
            return
        try:
            with _immediate(self.conn):
                yield
        except sqlite3.Error as exc:
            self._refuse(exc)
            raise

    # -- meta ----------------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self.write():
            self.conn.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    @contextlib.contextmanager
    def build_guard(self) -> Iterator[bool]:
        """Whether this process may finish a pending build: True for one process at a time
        (a lock on ``<index>.build`` beside the database), False while another holds it."""
        import fcntl

        if self.in_memory:  # this process's own copy: nobody else builds it
            yield True
            return
        build = inside_tree(self.tree, Path(f"{self.path}.build"))
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
        with os.fdopen(open_inside(build, flags, 0o666, name=self._name(build)), "a") as guard:
            try:
                fcntl.flock(guard, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            yield True

    def delete_meta(self, key: str) -> None:
        with self.write():
            self.conn.execute("DELETE FROM meta WHERE key = ?", (key,))

    @property
    def built(self) -> bool:
        return self.get_meta("built_at") is not None

    # -- groups --------------------------------------------------------------------------------
    def group_state(self, prefix: str) -> dict[str, tuple[str, int, int]]:
        """``{group: (hash, mtime_ns, size)}`` of the groups whose name starts with ``prefix``."""
        rows = self.conn.execute(
            "SELECT grp, hash, mtime_ns, size FROM groups WHERE grp >= ? AND grp < ?",
            (prefix, prefix + "\uffff"),
        )
        return {g: (h, m, s) for g, h, m, s in rows}

    def replace_group(
        self, group: str, docs: Sequence[Doc], digest: str, mtime_ns: int = 0, size: int = 0
    ) -> bool:
        """Make ``group`` hold exactly ``docs``; False (nothing written) when its hash already
        equals ``digest``. An empty ``docs`` removes the group's documents but remembers it."""
        row = self.conn.execute("SELECT hash FROM groups WHERE grp = ?", (group,)).fetchone()
        if row is not None and row[0] == digest:
            self._set_stat(group, mtime_ns, size)
            return False
        with self.write():
            self.conn.execute("DELETE FROM docs WHERE grp = ?", (group,))
            self.conn.executemany(
                f"INSERT OR REPLACE INTO docs(grp, terms, {COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(group, *doc_values(doc)) for doc in docs],
            )
            self.conn.execute(
                "INSERT OR REPLACE INTO groups(grp, hash, mtime_ns, size) VALUES (?, ?, ?, ?)",
                (group, digest, mtime_ns, size),
            )
        return True

    def _set_stat(self, group: str, mtime_ns: int, size: int) -> None:
        with self.write():
            self.conn.execute(
                "UPDATE groups SET mtime_ns = ?, size = ? WHERE grp = ?", (mtime_ns, size, group)
            )

    def remove_group(self, group: str) -> int:
        with self.write():
            cur = self.conn.execute("DELETE FROM docs WHERE grp = ?", (group,))
            self.conn.execute("DELETE FROM groups WHERE grp = ?", (group,))
        return max(cur.rowcount, 0)

    def clear(self) -> None:
        """Forget every document and group (access counts are kept)."""
        with self.write():
            self.conn.execute("DROP TRIGGER IF EXISTS docs_ad")
            self.conn.execute("DELETE FROM docs")
            self.conn.execute("INSERT INTO fts(fts) VALUES ('delete-all')")
            self.conn.execute(SCHEMA[-1])
            self.conn.execute("DELETE FROM groups")
            self.conn.execute("DELETE FROM meta")

    @contextlib.contextmanager
    def bulk(self) -> Iterator[None]:
        """One transaction that fills ``docs`` with the FTS triggers off and builds the full-text
        index once at the end (much faster than row by row for a rebuild)."""
        with self.write():
            self.conn.execute("PRAGMA cache_size = -131072")
            self.conn.execute("DROP TRIGGER IF EXISTS docs_ai")
            self.conn.execute("DROP TRIGGER IF EXISTS docs_ad")
            try:
                yield
            finally:
                self.conn.execute("INSERT INTO fts(fts) VALUES ('rebuild')")
                for statement in SCHEMA[-2:]:
                    self.conn.execute(statement)
                self.conn.execute("PRAGMA cache_size = -2000")

    def optimize(self) -> None:
        """Merge the full-text index into one segment; past 1/8 of the file, the pages the
        merge freed are given back (``VACUUM``: ~0.1 s CPU at 10k records; only bytes)."""
        with self.write():
            self.conn.execute("INSERT INTO fts(fts) VALUES ('optimize')")
        free, pages = (
            self.conn.execute(f"PRAGMA {n}").fetchone()[0] for n in ("freelist_count", "page_count")
        )
        if free * 8 > pages and not self.conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):  # busy, or a full disk: left as it is
                self.conn.execute("VACUUM")

    # -- access counts -------------------------------------------------------------------------
    def touch(self, keys: Iterable[str], at: str) -> None:
        """Count one access for each document key (kept only in the index)."""
        rows = [(k, at) for k in dict.fromkeys(keys)]
        if not rows:
            return
        with self.write():
            self.conn.executemany(
                "INSERT INTO access(key, count, last_at) VALUES (?, 1, ?) ON CONFLICT(key) "
                "DO UPDATE SET count = count + 1, last_at = excluded.last_at",
                rows,
            )

    # -- reading -------------------------------------------------------------------------------
    def match(
        self, expression: str, filters: Filters, limit: int, *, scan: int = SCAN_CAP
    ) -> list[Row]:
        """Documents matching an FTS5 ``expression``, best BM25 first, at most ``limit``."""
        return self.read(self.ranked(expression, filters, limit, scan=scan))

    def ranked(
        self, expression: str, filters: Filters, limit: int, *, scan: int = SCAN_CAP
    ) -> list[tuple[int, float]]:
        """(document id, BM25) of the best ``limit`` matches of ``expression``, best first."""
        where, args = self._filter_sql(filters)
        weights = ", ".join(str(w) for w in BM25_WEIGHTS)
        # Only ids and scores (``read`` fetches the winners' rows, big columns last). BM25 is
        # computed for at most ``scan`` matches, the most recently indexed ones: a step
        # matching more than ``SCAN_CAP`` names nothing distinctive, and ranking every match
        # of a very common word would cost about 2 us per match. A caller that knows how many
        # documents can match (ranking's any-word step: its words' documents add up to at
        # most ``OR_BUDGET``) passes that bound, so every match is scored.
        join = "JOIN docs d ON d.id = fts.rowid " if where else ""
        sql = (
            f"SELECT rowid, score FROM (SELECT fts.rowid AS rowid, bm25(fts, {weights}) AS score "
            f"FROM fts {join}WHERE fts MATCH ?{where} ORDER BY fts.rowid DESC LIMIT {int(scan)}) "
            "ORDER BY score LIMIT ?"
        )
        try:
            ranked = self.conn.execute(sql, [expression, *args, limit]).fetchall()
            return [(int(rowid), float(score)) for rowid, score in ranked]
        except sqlite3.OperationalError as exc:
            if "fts5" in str(exc) or "syntax" in str(exc):
                return []
            raise

    def read(self, ranked: Sequence[tuple[int, float]]) -> list[Row]:
        """The rows of ``ranked`` (document id, BM25), in that order, with their lengths (a
        document deleted meanwhile is left out)."""
        by_id = self.rows_by_id(ranked)
        return [by_id[rowid] for rowid, _score in ranked if rowid in by_id]

    def rows_by_id(self, ranked: Sequence[tuple[int, float]]) -> dict[int, Row]:
        """``{document id: row}`` for ``ranked`` (document id, BM25)."""
        if not ranked:
            return {}
        scores = dict(ranked)
        marks = ",".join("?" * len(scores))
        rows = self.conn.execute(
            f"SELECT {select_columns()}, d.terms, z.sz, d.id FROM docs d "
            "LEFT JOIN access a ON a.key = d.key "
            f"LEFT JOIN fts_docsize z ON z.id = d.id WHERE d.id IN ({marks})",
            list(scores),
        ).fetchall()
        out = {}
        for *columns, terms, sizes, rowid in rows:
            out[rowid] = read_row((*columns, scores[rowid]), sum(varints(sizes or b"")), terms)
        return out

    def totals(self) -> Totals:
        """Document count and mean length, read from FTS5's own totals (no scan)."""
        row = self.conn.execute("SELECT block FROM fts_data WHERE id = 1").fetchone()
        numbers = varints(row[0]) if row else [0]
        documents = numbers[0]
        last = self.conn.execute("SELECT max(id) FROM docs").fetchone()[0]
        tokens = sum(numbers[1:])
        mean = tokens / documents if documents else 0.0
        shares = tuple(n / tokens for n in numbers[1:]) if tokens else ()
        return Totals(documents, mean, int(last or 0), shares)

    def estimate_count(self, expression: str, exact_below: int, totals: Totals) -> int:
        """How many documents match ``expression``: exact when fewer than ``exact_below``;
        otherwise estimated from how far back the newest ``exact_below`` matches reach
        (their share of the ids from there to the last), so a common word costs no more
        to count than a rarer one."""
        try:
            count, first = self.conn.execute(
                "SELECT count(*), min(rowid) FROM (SELECT rowid FROM fts WHERE fts MATCH ? "
                "ORDER BY rowid DESC LIMIT ?)",
                (expression, exact_below),
            ).fetchone()
        except sqlite3.OperationalError:
            return 0
        if int(count) < exact_below or not totals.last_id:
            return int(count)
        span = max(1, totals.last_id - int(first) + 1)
        return min(totals.documents, round(int(count) * totals.last_id / span))

    def _filter_sql(self, filters: Filters) -> tuple[str, list[Any]]:
        """``filters`` as SQL."""
        return filters.sql()

    def weight(self, row: Row) -> float:
        """What ``row``'s score counts for in this handle: ``AWAY_WEIGHT`` for a record of a
        project not ``home``, else 1."""
        if self.home is None or str(row.doc.meta.get("project") or "") in self.home:
            return 1.0
        return AWAY_WEIGHT

    def where(
        self,
        condition: str,
        args: Sequence[Any],
        filters: Filters,
        limit: int,
        *,
        index: str | None = None,
    ) -> list[Row]:
        """Documents satisfying a SQL ``condition`` on ``d`` (e.g. ``d.key = ?``), the most
        recently updated first, and of those the records of ``home`` before the others (a
        sort of the ``limit`` read: the read stays a walk of the index in update order);
        read through ``index`` when given."""
        where, extra = self._filter_sql(filters)
        indexed = f" INDEXED BY {index}" if index else ""
        sql = (
            f"SELECT {select_columns()}, 0.0 FROM docs d{indexed} "
            f"LEFT JOIN access a ON a.key = d.key WHERE {condition}{where} "
            "ORDER BY d.updated_at DESC, d.key LIMIT ?"
        )
        rows = [read_row(r) for r in self.conn.execute(sql, [*args, *extra, limit])]
        return rows if self.home is None else sorted(rows, key=lambda r: self.weight(r) < 1)

    def listed(self, name: str, filters: Filters, limit: int) -> list[Row]:
        """The documents of list ``name`` (``LISTS``) that pass ``filters``, the most recently
        updated first, read through the list's own partial index (without it a list costs a
        scan of every record: 6-15 ms at 10k records)."""
        return self.where(LISTS[name], [], filters, limit, index=f"docs_{name}")

    def used(self, filters: Filters, limit: int) -> list[Row]:
        """The documents handed to an agent at least once that pass ``filters``, the most
        recently updated first: read from the access counts, not a scan of every record."""
        used = "d.key IN (SELECT key FROM access WHERE count > 0)"
        return self.where(used, [], filters, limit, index=BY_KEY)

    def by_key(self, key: str) -> Row | None:
        rows = self.where("d.key = ?", [key], Filters(), 1)
        return rows[0] if rows else None

    def by_ref(self, ref_id: str) -> Row | None:
        rows = self.where("d.ref_id = ?", [ref_id], Filters(), 1)
        return rows[0] if rows else None

    def neighbours(
        self, source: str, created_at: str, ref_id: str, before: int, after: int
    ) -> tuple[list[Row], list[Row]]:
        """Documents of ``source`` created just before / just after (created_at, ref_id)."""
        sql = (
            f"SELECT {select_columns()}, 0.0 FROM docs d LEFT JOIN access a ON a.key = d.key "
            "WHERE d.source = ? AND (d.created_at, d.ref_id) {op} (?, ?) "
            "ORDER BY d.created_at {order}, d.ref_id {order} LIMIT ?"
        )
        args = (source, created_at, ref_id)
        earlier = self.conn.execute(sql.format(op="<", order="DESC"), [*args, before])
        later = self.conn.execute(sql.format(op=">", order="ASC"), [*args, after])
        return [read_row(r) for r in earlier][::-1], [read_row(r) for r in later]

    def stats(self) -> dict[str, Any]:
        """Document counts per source and type, groups, accesses, file size."""
        per_source = dict(self.conn.execute("SELECT source, count(*) FROM docs GROUP BY source"))
        per_type = dict(
            self.conn.execute("SELECT source || ':' || type, count(*) FROM docs GROUP BY 1")
        )
        size = sum(
            os.path.getsize(f"{self.path}{s}")
            for s in ("", "-wal")
            if os.path.exists(f"{self.path}{s}")
        )
        return {
            "documents": sum(per_source.values()),
            "per_source": per_source,
            "per_type": per_type,
            "groups": self.conn.execute("SELECT count(*) FROM groups").fetchone()[0],
            "accessed": self.conn.execute("SELECT count(*) FROM access").fetchone()[0],
            "bytes": size,
            "built_at": self.get_meta("built_at"),
            "code_indexed_at": self.get_meta("code_indexed_at"),
            **vectors.stats(self),
        }


def _migrate(conn: sqlite3.Connection) -> None:
    """Create the schema. An index of an older version listed in ``UPGRADES`` is brought up
    to date in place (its documents kept); one of any other version is dropped (it is
    derived, and rebuilt)."""
    with _immediate(conn):
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            return
        steps = UPGRADES.get(version, DROP if version else ())
        for statement in (*steps, *SCHEMA):
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


@contextlib.contextmanager
def _immediate(conn: sqlite3.Connection) -> Iterator[None]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # SQLite may have rolled back already (a full disk)
            conn.execute("ROLLBACK")
        raise

"""The one catalog of the long-term record files, kept in a derived SQLite file.

One row per record file: its stamp, its record's digest (``core.record_digest``), the keys the
learning rules look up (topic, fingerprint, counts, normalised words: ``lookups``), whether
CLAUDE.md shows it, and the generation it changed at; a posting list from each word to the
live patterns and mistakes that hold it (a contentless FTS5 index, its terms the words
prefixed by their type: ``lookups.terms_of``; a compact list of record numbers per word). A
save asks its questions of these indexes instead of reading every record of its type, and the
Markdown views render from ``rows`` and ``generations`` instead of keeping a table of their own.

Where: ``memory/contextual/longterm.sqlite3``, gitignored with the rest of ``contextual/``.
It is derived: deleting it is safe, the next look rebuilds it from the record files.

Fresh or stale, by the one freshness rule (``core.stamps``): ``meta`` keeps a stamp of each
record folder (ctime and inode). A new, removed or renamed file changes its folder's stamp, so
a folder written by anything else (git, an editor) is listed again: its files whose (ctime,
size) moved, or was too recent to trust when catalogued, are read again. ``records.save``
catalogs what it writes when the catalog was fresh before the write. A file rewritten in
place is seen by a full look (``current(full=True)``) or when a lookup picks it (``Stale``:
the caller refreshes the folder and asks again). Inside ``Store.batch()`` the catalog's
changes, stamps included, share one transaction committed when the batch ends: a process
killed mid-batch loses them together, and the folders it wrote read as stale again.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from planning_memory import readonly
from planning_memory.core import (
    LONG_TERM_DIRS,
    Layout,
    Record,
    claude_section,
    record_digest,
    stamps,
)
from planning_memory.errors import StorageError
from planning_memory.longterm import similarity
from planning_memory.longterm.live import Live
from planning_memory.longterm.lookups import (
    SIMILAR_TYPES,
    Lookups,
    _digest,
    _grams_key,
    fingerprint,
    terms_of,
    text_of,
)
from planning_memory.store import Store

CATALOG_NAME = "longterm.sqlite3"
SCHEMA_VERSION = 11
USES = {"pattern": "usage_count", "mistake": "occurrences"}
_OPEN_MAX = 8  # connections kept open per process (one per tree and thread)
WRITTEN_KEPT = 8192  # records written in a batch kept for ``load`` (the latest)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entries (
    rid INTEGER PRIMARY KEY, file TEXT NOT NULL UNIQUE, folder TEXT NOT NULL,
    ctime INTEGER NOT NULL, size INTEGER NOT NULL, digest TEXT NOT NULL DEFAULT '',
    id TEXT, type TEXT, scope TEXT, topic TEXT, fingerprint BLOB, updated_at TEXT,
    live INTEGER, pinned INTEGER, established INTEGER, uses INTEGER, shown INTEGER,
    gen INTEGER NOT NULL DEFAULT 0,
    words TEXT, code TEXT, grams BLOB, nwords INTEGER, ncode INTEGER, ngrams INTEGER,
    mask BLOB, textkey BLOB
);
CREATE INDEX IF NOT EXISTS entries_folder ON entries(folder);
CREATE INDEX IF NOT EXISTS entries_racy ON entries(folder, ctime) WHERE ctime < 0;
CREATE INDEX IF NOT EXISTS entries_broken ON entries(folder) WHERE digest = '';
CREATE INDEX IF NOT EXISTS entries_gen ON entries(gen);
CREATE TABLE IF NOT EXISTS gone (file TEXT PRIMARY KEY, gen INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS entries_topic ON entries(type, topic) WHERE topic IS NOT NULL;
CREATE INDEX IF NOT EXISTS entries_fingerprint ON entries(fingerprint);
CREATE INDEX IF NOT EXISTS entries_grams ON entries(grams) WHERE grams IS NOT NULL;
CREATE INDEX IF NOT EXISTS entries_live ON entries(type, live);
CREATE INDEX IF NOT EXISTS entries_archive ON entries(type, uses, updated_at, id, file)
    WHERE live AND NOT pinned AND NOT established;
CREATE VIRTUAL TABLE IF NOT EXISTS postings USING fts5(
    terms, content='', columnsize=0, detail=none, tokenize='ascii');
CREATE VIRTUAL TABLE IF NOT EXISTS posted USING fts5vocab(postings, instance);
"""
_COLUMNS = "file, folder, ctime, size, digest, id, type, scope, topic, fingerprint, updated_at, "
_COLUMNS += "live, pinned, established, uses, shown, gen, words, code, grams, nwords, ncode, "
_COLUMNS += "ngrams, "
_COLUMNS += "mask, textkey"


def _file_stamp(st: os.stat_result, now: int) -> tuple[int, int]:
    """A file's stamp as the catalog keeps it: ``core.stamps.file_stamp``, but a ctime too
    recent to trust kept negated rather than 0, so that the file is read again once it can be
    trusted (``refresh_folder``), not at every look before."""
    ctime, size = stamps.file_stamp(st, now)
    return (ctime or -st.st_ctime_ns), size


def path_of(layout: Layout) -> Path:
    found = _PATHS.get(layout)
    if found is None:
        if len(_PATHS) >= 64:
            _PATHS.clear()
        found = _PATHS[layout] = layout.contextual / CATALOG_NAME
    return found


_PATHS: dict[Layout, Path] = {}


class Catalog(Lookups):
    """The catalog of one tree, open. ``Catalog.of`` reuses this process's connection; its
    in-memory copy of the live patterns and mistakes is ``Lookups``'."""

    def __init__(self, layout: Layout, store: Store) -> None:
        self.layout = layout
        self.store = store
        self.path = path_of(layout)
        self._live: dict[str, Live] | None = None  # the mirror, by type
        self._version = -1  # ``data_version`` the mirror was read at
        self._lookups = 0
        self._held = False  # a transaction kept open until the store's batch ends
        self._written: dict[str, tuple[int, int, Record]] = {}  # in a batch: file -> stat, record
        self._stamps: dict[str, str] = {}  # in a batch: the stamps set in its transaction
        self._folders = {
            folder: str(layout.long_term / folder) for folder in set(LONG_TERM_DIRS.values())
        }
        self.in_memory = readonly.wanted(self.path)  # a read-only tree
        if not self.in_memory:
            store.make_dirs(self.path.parent)
        try:
            self.conn = self._connect()
        except sqlite3.DatabaseError as exc:
            self._refuse(exc)  # a full disk: the catalog is kept as it is
            self._discard()
            self.conn = self._connect()

    def _refuse(self, exc: sqlite3.Error) -> None:
        """Raise the ``StorageError`` that ``exc`` stands for, if it says the disk refused
        a write (full, over quota, read-only)."""
        refused = StorageError.of(exc, self.store.rel(self.path))
        if refused is not None:
            raise refused from None

    @classmethod
    def of(cls, layout: Layout, store: Store) -> Catalog:
        key = (str(path_of(layout)), os.getpid(), threading.get_ident())
        with _OPEN_LOCK:
            found = _OPEN.pop(key, None)
            if found is not None and not (found._held or found.in_memory or found.path.is_file()):
                found.close()  # deleted: start a new one
                found = None
            if found is None:
                found = Catalog(layout, store)
            found.store = store  # the caller's: its lock is the one held
            _OPEN[key] = found
            while len(_OPEN) > _OPEN_MAX:
                _OPEN.popitem(last=False)[1].close()
            return found

    def _connect(self) -> sqlite3.Connection:
        path = self.store.check_database(self.path)  # SQLite follows symlinks: never one
        conn = readonly.connect(path, in_memory=self.in_memory)
        try:
            conn.execute("PRAGMA busy_timeout = 10000")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = OFF")  # derived: a lost write reads as stale
            conn.execute("PRAGMA journal_size_limit = 1048576")  # the WAL back to 1 MB
            if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                conn.executescript(
                    "DROP TABLE IF EXISTS posted; DROP TABLE IF EXISTS postings;"
                    "DROP TABLE IF EXISTS entries;"
                    "DROP TABLE IF EXISTS meta; DROP TABLE IF EXISTS gone;"
                )
                conn.executescript(_SCHEMA)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("SELECT count(*) FROM meta").fetchone()
        except BaseException:
            readonly.close(conn)
            raise
        return conn

    def _discard(self) -> None:
        readonly.discard(self.path, in_memory=self.in_memory)

    def close(self) -> None:
        self._commit_batch()
        readonly.close(self.conn)

    @contextlib.contextmanager
    def _write(self) -> Iterator[None]:
        """One change of the catalog, all or nothing. Inside ``Store.batch()`` the changes
        share one transaction (each a savepoint in it), committed when the batch ends: a
        process killed mid-batch loses them all, stamps included, so the next save finds
        the folders stale and reads again the files written since. A full disk rolls the
        change back and raises ``StorageError``."""
        try:
            with self._change():
                yield
        except sqlite3.Error as exc:
            self._refuse(exc)
            raise

    @contextlib.contextmanager
    def _change(self) -> Iterator[None]:
        """``_write`` without the error translation: a transaction, or a savepoint in a batch's."""
        if self._held or self.store.batching:
            if not self._held:
                self.conn.execute("BEGIN IMMEDIATE")
                self._held = True
                self.store.at_batch_end(self._commit_batch)
            self.conn.execute("SAVEPOINT change")
            try:
                yield
            except BaseException:
                self._live = None
                self._stamps.clear()
                if self.conn.in_transaction:  # SQLite may have rolled back already
                    self.conn.execute("ROLLBACK TO change")
                    self.conn.execute("RELEASE change")
                raise
            self.conn.execute("RELEASE change")
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            self.conn.execute("COMMIT")
        except BaseException:
            self._live = None  # it may hold what was rolled back
            if self.conn.in_transaction:  # SQLite may have rolled back already (disk full)
                self.conn.execute("ROLLBACK")
            raise

    def _commit_batch(self) -> None:
        """Commit the transaction kept open through a batch (if it cannot be, it is rolled
        back: the stamps go with it and the next save reads the folders again)."""
        self._written.clear()
        self._stamps.clear()
        if not self._held:
            return
        self._held = False
        try:
            self.conn.execute("COMMIT")
        except sqlite3.Error:
            self._live = None
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("ROLLBACK")

    # -- freshness -----------------------------------------------------------------------------
    def _stamp(self, folder: str) -> str:
        try:
            st = os.stat(self._folders.get(folder) or self.layout.long_term / folder)
        except (FileNotFoundError, NotADirectoryError):
            return "absent"
        return stamps.folder_stamp(st)

    def _stored_stamp(self, folder: str) -> str | None:
        if folder in self._stamps:  # set in the transaction a batch holds: no other writer
            return self._stamps[folder]
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (f"stamp:{folder}",))
        found = row.fetchone()
        return None if found is None else str(found[0])

    def is_fresh(self, folder: str) -> bool:
        return self._stored_stamp(folder) == self._stamp(folder)

    def refresh(self, record_type: str, *, force: bool = False) -> int:
        return self.refresh_folder(LONG_TERM_DIRS[record_type], force=force)

    def refresh_folder(self, folder: str, *, force: bool = False) -> int:
        """Bring ``folder`` up to date by the freshness rule (``core.stamps``): when its stamp
        moved (or ``force``), files gone are dropped and files new or with another stamp read
        again; otherwise only the files whose stamp was too recent to trust are. A file that
        holds no record is read at every look (each command warns of it; one repaired in place
        is seen). Returns how many files were read."""
        stamp = self._stamp(folder)
        if not force and stamp == self._stored_stamp(folder):
            racy = self.conn.execute(  # stamps trusted by now; broken files, to warn again
                "SELECT file FROM entries WHERE folder = ? AND ctime < 0 AND ctime > ? UNION "
                "SELECT file FROM entries WHERE folder = ? AND digest = ''",  # two small indexes
                (folder, stamps.RACY_NS - time.time_ns(), folder),
            ).fetchall()
            if racy:
                with self._write():
                    for (file,) in racy:
                        self._read(folder, file)
            return len(racy)
        on_disk = self._listing(folder)
        known = {
            file: (ctime, size) if digest else None
            for file, ctime, size, digest in self.conn.execute(
                "SELECT file, ctime, size, digest FROM entries WHERE folder = ?", (folder,)
            )
        }
        changed = [f for f, st in on_disk.items() if st[0] < 0 or known.get(f) != st]
        gone = known.keys() - on_disk.keys()
        if not changed and not gone and stamp == self._stored_stamp(folder):
            return 0  # a full look that found nothing: nothing written
        with self._write():
            for file in gone:
                self._drop(file)
            for file in sorted(changed):
                self._read(folder, file)
            self._set_stamp(folder, stamp)
        return len(changed)

    def current(self, *, full: bool = False) -> None:
        """Bring every record folder up to date (``refresh_folder``); ``full``: stat every
        file, to see one rewritten in place too."""
        for folder in sorted(self._folders):
            self.refresh_folder(folder, force=full)

    def generations(self) -> dict[str, str]:
        """Each folder's generation, which moves whenever one of its records changes
        (``_bump``), and under "" this catalog's epoch (a new catalog file restarts them)."""
        values = dict(self.conn.execute("SELECT key, value FROM meta WHERE key LIKE 'gen:%'"))
        found = {folder: str(values.get(f"gen:{folder}", 0)) for folder in self._folders}
        return {"": self._epoch(), **found}

    def _epoch(self) -> str:
        """A random name this catalog file was given when it was made (a new file restarts
        the generations)."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'epoch'").fetchone()
        if row is not None:
            return str(row[0])
        epoch = os.urandom(8).hex()
        with self._write():
            self.conn.execute(
                "INSERT OR IGNORE INTO meta(key, value) VALUES ('epoch', ?)", (epoch,)
            )
        return str(self.conn.execute("SELECT value FROM meta WHERE key = 'epoch'").fetchone()[0])

    def _listing(self, folder: str) -> dict[str, tuple[int, int]]:
        now = time.time_ns()
        found: dict[str, tuple[int, int]] = {}
        try:
            where = self.store.check_inside(self.layout.long_term / folder)
            with os.scandir(where) as entries:
                for item in entries:
                    name = item.name
                    if (
                        name.endswith(".json")
                        and name[0] != "."
                        and self.store.usable_name(where, name)
                    ):
                        with contextlib.suppress(FileNotFoundError):  # a link or a FIFO too:
                            st = item.stat(follow_symlinks=False)  # its reading refuses it
                            found[f"{folder}/{name}"] = _file_stamp(st, now)
        except (FileNotFoundError, NotADirectoryError):
            pass
        return found

    def _set_stamp(self, folder: str, stamp: str) -> None:
        if self._held:
            self._stamps[folder] = stamp
        self.conn.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (f"stamp:{folder}", stamp)
        )

    # -- keeping it up to date -----------------------------------------------------------------
    @contextlib.contextmanager
    def writing(self, path: Path, written: Record | None = None) -> Iterator[None]:
        """Around a write (or removal) of the record file ``path``: if the catalog was fresh
        before it, it catalogs the file as written and stays fresh. ``written``: the valid
        record the file now holds, when the caller knows it (not read back then). A full
        disk after the file was written leaves the catalog stale, not the command failed: its
        change is rolled back, the folder's stamp with it, so the next save reads the folder
        again."""
        parent, name = os.path.split(path)
        folder = os.path.basename(parent)
        if folder not in self._folders:
            yield
            return
        with self.store.lock():
            fresh = self.is_fresh(folder)
            yield
            if fresh:
                with contextlib.suppress(StorageError):
                    self._catalog_written(folder, name, path, written)

    def _catalog_written(self, folder: str, name: str, path: Path, written: Record | None) -> None:
        """Catalog the record file ``writing`` saw written (or removed)."""
        file = f"{folder}/{name}"
        with self._write():
            try:
                st = None if written is None else os.stat(path)
            except FileNotFoundError:
                st = None
            if st is None:
                self._read(folder, file)
            else:
                ctime, size = _file_stamp(st, time.time_ns())
                self._put(folder, file, ctime, size, written)
                if self._held and written is not None:  # ``load`` need not read it
                    self._written.pop(file, None)
                    self._written[file] = (st.st_ctime_ns, size, written)
                    if len(self._written) > WRITTEN_KEPT:
                        del self._written[next(iter(self._written))]
            self._set_stamp(folder, self._stamp(folder))

    def _read(self, folder: str, file: str) -> None:
        """Catalog ``file`` as ``records.load_all`` reads it: a broken file (bad JSON, a
        schema problem, an id that is not its name) is kept as no record."""
        from planning_memory.longterm import records  # records.save calls into the catalog

        path = self.layout.long_term / file
        try:
            ctime, size = _file_stamp(os.lstat(path), time.time_ns())
        except FileNotFoundError:
            self._drop(file)
            return
        loaded = records.load_checked(self.store, path)
        value = None if loaded is None else loaded.value
        self._put(folder, file, ctime, size, value)

    def _drop(self, file: str) -> None:
        row = self.conn.execute("SELECT rid FROM entries WHERE file = ?", (file,)).fetchone()
        if row is not None:
            self._forget(row[0])
            gen = self._bump(file.partition("/")[0])
            self.conn.execute("INSERT OR REPLACE INTO gone(file, gen) VALUES (?, ?)", (file, gen))

    def _bump(self, folder: str) -> int:
        """A record of ``folder`` changed: its generation and the catalog's move
        (``generations``); returns the catalog's, the change's own (``changes``)."""
        for key in (f"gen:{folder}", "gen"):
            self.conn.execute(
                "INSERT INTO meta(key, value) VALUES (?, '1') ON CONFLICT(key) "
                "DO UPDATE SET value = CAST(value AS INTEGER) + 1",
                (key,),
            )
        return int(self.conn.execute("SELECT value FROM meta WHERE key = 'gen'").fetchone()[0])

    def _forget(self, rid: int) -> None:
        row = self.conn.execute("SELECT type, words, live FROM entries WHERE rid = ?", (rid,))
        kind, words, live = row.fetchone() or (None, None, None)
        if live and words:
            self._unpost(rid, str(kind), words)
        self.conn.execute("DELETE FROM entries WHERE rid = ?", (rid,))
        if self._live is not None:
            for live in self._live.values():
                live.drop(rid)

    def _post(self, rid: int, kind: str, words: str) -> None:
        """Post the words of the live record ``rid`` (a live record with words has postings,
        and nothing else has)."""
        terms = " ".join(terms_of(kind, words.split()))
        self.conn.execute("INSERT INTO postings(rowid, terms) VALUES (?, ?)", (rid, terms))

    def _unpost(self, rid: int, kind: str, words: str) -> None:
        """Drop the postings of ``rid``, posted from these words (a contentless index is told
        the terms a row had)."""
        terms = " ".join(terms_of(kind, words.split()))
        self.conn.execute(
            "INSERT INTO postings(postings, rowid, terms) VALUES ('delete', ?, ?)", (rid, terms)
        )

    def _put(self, folder: str, file: str, ctime: int, size: int, value: Any) -> None:
        old = self.conn.execute(
            "SELECT rid, textkey, words, code, grams, nwords, ncode, ngrams, mask, live, type, "
            "scope, digest, gen FROM entries WHERE file = ?",
            (file,),
        ).fetchone()
        kind = value.get("type") if isinstance(value, dict) else None
        stem = os.path.splitext(os.path.basename(file))[0]
        misnamed = value.get("id") != stem if isinstance(value, dict) else True
        record = not (kind not in LONG_TERM_DIRS or LONG_TERM_DIRS[kind] != folder or misnamed)
        digest = record_digest(value) if record else ""
        if old is None or old[12] != digest:
            gen = self._bump(folder)
            self.conn.execute("DELETE FROM gone WHERE file = ?", (file,))
        else:
            gen = old[13]  # the content is the same: the change's generation stays
        if old is not None and self._update(old, folder, file, ctime, size, value, digest, gen):
            return
        if old is not None:
            self._forget(old[0])
        if not record:
            # not a record of this folder (or named for another id: a save would duplicate
            # it): the rules never see it (kept to skip re-reading)
            self.conn.execute(
                "INSERT INTO entries(file, folder, ctime, size, gen) VALUES (?, ?, ?, ?, ?)",
                (file, folder, ctime, size, gen),
            )
            return
        live = value.get("deleted_at") is None
        words = code = grams = mask = textkey = None
        counts: tuple[int, int, int] | tuple[None, None, None] = (None, None, None)
        if kind in SIMILAR_TYPES:
            textkey = _digest(text_of(value))
            if old is not None and old[1] == textkey:  # the same text (archived, reinforced)
                words, code, grams, mask = old[2], old[3], old[4], old[8]
                counts = (old[5], old[6], old[7])
            else:
                profile = similarity.profile(text_of(value))
                words, code = " ".join(sorted(profile[0])), " ".join(sorted(profile[1]))
                grams = _grams_key(profile[2])
                counts = (len(profile[0]), len(profile[1]), len(profile[2]))
                bits = similarity.gram_mask(profile[2])
                mask = bits.to_bytes(similarity.MASK_BITS // 8, "little")
        row = (
            *(file, folder, ctime, size, digest, value.get("id"), kind, value.get("scope")),
            value.get("topic_key") or None,
            _digest(fingerprint(value)),
            value.get("updated_at"),
            *(live, bool(value.get("pinned")), bool(value.get("established"))),
            int(value.get(USES.get(str(kind), ""), 0) or 0),
            claude_section(value) is not None,
            gen,
            *(words, code, grams, *counts, mask, textkey),
        )
        marks = ", ".join("?" * len(row))
        rid = self.conn.execute(f"INSERT INTO entries({_COLUMNS}) VALUES ({marks})", row).lastrowid
        if live and words and rid is not None:
            self._post(rid, str(kind), words)
        if live and self._live is not None and kind in self._live and rid is not None:
            sizes = (counts[0] or 0, counts[1] or 0, counts[2] or 0)
            self._live[kind].add(rid, value.get("scope"), sizes, mask or b"", words or "")

    def _update(
        self,
        old: tuple[Any, ...],
        folder: str,
        file: str,
        ctime: int,
        size: int,
        value: Any,
        digest: str,
        gen: int,
    ) -> bool:
        """``_put`` of a live record rewritten with the same text, type and scope (archived,
        reinforced, counted) as an update of its row, its postings kept while it stays live
        (dropped when it leaves): the rows come out as a removal and an insertion would
        leave them, the ``rid`` aside. False (nothing done) for any other change."""
        if not digest or not old[9]:  # not a record, or was not live
            return False
        kind = value.get("type")
        if kind != old[10] or LONG_TERM_DIRS.get(str(kind)) != folder:
            return False
        if value.get("scope") != old[11] or kind not in SIMILAR_TYPES:
            return False
        if _digest(text_of(value)) != old[1]:
            return False
        rid, live = old[0], value.get("deleted_at") is None
        self.conn.execute(
            "UPDATE entries SET ctime = ?, size = ?, digest = ?, id = ?, topic = ?, "
            "fingerprint = ?, updated_at = ?, live = ?, pinned = ?, established = ?, uses = ?, "
            "shown = ?, gen = ? WHERE rid = ?",
            (
                *(ctime, size, digest, value.get("id"), value.get("topic_key") or None),
                _digest(fingerprint(value)),
                value.get("updated_at"),
                *(live, bool(value.get("pinned")), bool(value.get("established"))),
                int(value.get(USES[kind], 0) or 0),
                claude_section(value) is not None,
                gen,
                rid,
            ),
        )
        if not live:
            if old[2]:
                self._unpost(rid, kind, old[2])
            if self._live is not None:
                for mirror in self._live.values():
                    mirror.drop(rid)
        return True


_OPEN: OrderedDict[tuple[str, int, int], Catalog] = OrderedDict()  # (file, pid, thread)
_OPEN_LOCK = threading.Lock()


def close_all() -> None:
    """Close every catalog this process keeps open (a long-lived process between requests:
    a repository deleted meanwhile keeps no file open)."""
    with _OPEN_LOCK:
        while _OPEN:
            _OPEN.popitem()[1].close()


@contextlib.contextmanager
def writing(
    layout: Layout, store: Store, path: Path, written: Record | None = None
) -> Iterator[None]:
    """``Catalog.writing`` when the tree has a catalog; nothing (no file made) otherwise."""
    held = _OPEN.get((str(path_of(layout)), os.getpid(), threading.get_ident()))
    if (held is None or not held._held) and not path_of(layout).is_file():
        yield
        return
    with Catalog.of(layout, store).writing(path, written):
        yield

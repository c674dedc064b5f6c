"""The render cache: what each long-term record file gives the views, kept current by stat.

Derived and gitignored, under ``memory/contextual/views/cache/``, written through the store,
each file as a base and a small delta of what changed since (``cachefile``):

- ``index.json``: each record file's stat (ctime_ns, size), the digest of its content
  (``fileformat.record_digest``), its id and type, whether it is live and whether CLAUDE.md
  shows it; the same for ``preferences.json``; the stamp of each record folder; the views'
  source hashes; and for each rendered file, the stat and digest it had when it was last
  known to equal the render from given inputs (``Known``).
- ``patterns.items``, ``mistakes.items``, ``claude.items``: what each record gives that view
  (its item, or its CLAUDE.md entry, with the sort key) under its content digest, since it
  depends on nothing else: one JSON line, then the texts separated by NUL characters (a
  rendered text never holds one); and which items redaction would change (``clean``).

A scan stats every record file and reads only those whose stat moved or is too recent to trust
(``RACY_NS``: file systems stamp times coarsely), so the views' source hashes come from the
digests and their texts from the kept items plus the few records that changed. After a write
that names its records, only the folders whose stamp moved are stat-ed (``rescan``). When an
item is missing for a record not read in this run, every record is read again (a full render);
a cache that is missing, unreadable or from another version of the renderer is rebuilt the
same way. What a record gives a view is decided by the ``makers`` (``render``, ``claude``).
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
import time
import unicodedata
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from planning_memory.core import LONG_TERM_DIRS, Layout, Record, privacy
from planning_memory.errors import InputError, PlanningMemoryError
from planning_memory.longterm import load_record, read_preferences, record_stats
from planning_memory.store import Store
from planning_memory.views.cachefile import VERSION, CacheFiles, pack_memo, unpack_memo
from planning_memory.views.fileformat import digests_hash, record_digest
from planning_memory.views.table import Row, Stats, Table, span

RACY_NS = 100_000_000  # a stat younger than this (0.1 s) is not trusted: the file is read again
FOLDERS = sorted(set(LONG_TERM_DIRS.values()))
MEMOS = {"patterns": 2, "mistakes": 2, "claude": 3}  # memo -> its entries' length (digest, keys)
_CORE_MODULES = ("model", "privacy", "secret_table", "secret_rules")
_JOINED = 32  # past this many new items, one redaction scan of them all joined first
_MAX_BYTES = 1 << 30

# memo -> what a record gives that view: a view item (sort key, text) or a CLAUDE.md entry
# (section, sort key, line), None for nothing
Makers = Mapping[str, Callable[[Record], Any]]


class Known(NamedTuple):
    """A rendered file known to equal the render from ``inputs``: its stat and sha256."""

    inputs: str
    ctime: int
    size: int
    digest: str


def cache_dir(layout: Layout) -> Path:
    return layout.contextual / "views" / "cache"


@functools.cache
def code_stamp() -> str:
    """What the kept items depend on besides the records: this package's view code, the
    record model, the redaction rules, the Unicode tables and Python's version (the items of
    another renderer are never reused)."""
    here = Path(__file__).resolve().parent
    versions = f"{VERSION} {sys.version_info[:2]} {unicodedata.unidata_version}"
    digest = hashlib.sha256(versions.encode())
    core = [here.parent / "core" / f"{name}.py" for name in _CORE_MODULES]
    for path in [*sorted(here.glob("*.py")), *core]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _stat(path: Path | str, now: int) -> tuple[int, int]:
    """``(ctime_ns, size)``: ctime 0 when too recent to trust, size -1 when absent. The
    ctime, which no tool can set back, rather than the mtime (``table``)."""
    try:
        st = os.stat(path)
    except OSError:
        return 0, -1
    return (st.st_ctime_ns if now - st.st_ctime_ns > RACY_NS else 0), st.st_size


def _folder_stamp(path: Path, now: int) -> list[int]:
    """``[ctime_ns, inode]`` of a folder: ctime 0 when too recent to trust, inode -1 when it
    is absent. Creating, removing or renaming a file in it moves its ctime."""
    try:
        st = os.stat(path)
    except OSError:
        return [0, -1]
    return [st.st_ctime_ns if now - st.st_ctime_ns > RACY_NS else 0, st.st_ino]


def _memos_of(row: Row) -> set[str]:
    """The views whose source hash a record file's row is part of."""
    found = {name for name in ("patterns", "mistakes") if row.type == name[:-1]}
    return found | {"claude"} if row.shown or found else found  # see ``source_hash``


class RenderCache:
    """The cache of one memory tree, scanned on creation (``rescan`` after writing records)."""

    def __init__(
        self,
        layout: Layout,
        store: Store,
        makers: Makers,
        written: Collection[str] | None = None,
    ) -> None:
        self.layout, self.store, self.makers = layout, store, makers
        self.known: dict[str, Known] = {}
        self.folders: dict[str, list[int]] = {}  # record folder -> its stamp at the last look
        self.hashes: dict[str, str] = {}  # "<memo> <template digest>" -> source hash
        self.preferences = Row(0, -1, record_digest({}), "", "preferences", True, True)
        self.table = Table.empty()
        self._groups: dict[str, list[int]] | None = None  # memo -> rows in its view
        self._records: dict[str, Record] = {}  # the records read in this run
        self._made: dict[str, dict[str, list[Any]]] = {name: {} for name in MEMOS}
        self._memos: dict[str, dict[str, list[Any]]] = {}
        self._unclean: dict[str, set[str]] = {}  # memo -> digests of items redaction changes
        self._changes: dict[str, set[str]] = {}  # memo -> digests added or dropped in this run
        self._touched: set[str] = set()  # record files whose row changed in this run
        self.files = CacheFiles(cache_dir(layout), store, code_stamp())
        self._prefs_value: dict[str, Any] | None = None
        self._prefs_error: InputError | None = None  # preferences.json is broken
        self._dirty: set[str] = set()
        self._load_index()
        self.rescan(written)

    # -- the files ---------------------------------------------------------------------------
    def _load_index(self) -> None:
        base, delta = self.files.read("index.json")
        try:
            value = {**(base[0] if base else {}), **delta.get("head", {})}
            self.table = Table.from_json(value["records"]).patched(delta.get("entries", {}))
            self.known = {name: Known(*known) for name, known in value["known"].items()}
            self.preferences = Row(*value["preferences"])
            self.hashes = dict(value["hashes"])
            self.folders = {k: list(v) for k, v in value["folders"].items()}
        except (KeyError, TypeError, ValueError, AttributeError):
            self.table, self.known, self.hashes, self.folders = Table.empty(), {}, {}, {}
            self.files.serials["index.json"] = ""  # written whole next time
            self._dirty.add("index")

    def _memo(self, name: str) -> dict[str, list[Any]]:
        """``content digest -> what the record gives the view`` (its last element the text)."""
        if name not in self._memos:
            base, delta = self.files.read(f"{name}.items")
            found = unpack_memo(base, delta, MEMOS[name])
            if found is None:
                found, self.files.serials[f"{name}.items"] = ({}, set()), ""
            self._memos[name], self._unclean[name] = found
        return self._memos[name]

    def save(self) -> None:
        """Write what changed in this run (nothing when nothing did): the entries changed
        go to each file's delta (``cachefile``)."""
        for name in sorted(self._dirty - {"index"}):
            memo, changes = self._memos[name], self._changes.pop(name, set())
            self.files.save(
                f"{name}.items",
                {digest: memo.get(digest) for digest in changes},
                {"unclean": sorted(self._unclean.get(name, set()))},
                functools.partial(pack_memo, memo),
                len(memo),
            )
        if "index" in self._dirty:
            head = {
                "preferences": self.preferences,
                "hashes": self.hashes,
                "known": self.known,
                "folders": self.folders,
            }
            rows = {file: self.table.row_of(file) for file in self._touched}
            whole = lambda: ({"records": self.table.to_json()}, "")  # noqa: E731
            self.files.save("index.json", rows, head, whole, len(self.table.files))
            self._touched.clear()
        self._dirty.clear()

    # -- the records -------------------------------------------------------------------------
    def rescan(self, written: Collection[str] | None = None) -> None:
        """Stat every record file; read the ones whose stat moved (or is too recent).

        With ``written``, the ids of the records this run just wrote, a quicker look
        (``_listing``): only the folders whose stamp moved are stat-ed again (a file in them
        was created, removed, or replaced by a rename: every write of this package, git's
        and most editors'), and in the others only the written records; a record of another
        folder rewritten in place waits for the full stat of ``pmem render``, ``render
        --check`` or ``sync``."""
        now = time.time_ns()
        stamps = {folder: _folder_stamp(self.layout.long_term / folder, now) for folder in FOLDERS}
        if written is None:
            stats: Stats = record_stats(self.layout, self.store)
            looked = FOLDERS
        else:
            looked = [f for f in FOLDERS if not stamps[f][0] or self.folders.get(f) != stamps[f]]
            stats = self._listing(looked, set(written))
        for folder in looked:
            if self.folders.get(folder) != stamps[folder]:
                self.folders[folder] = stamps[folder]
                self._dirty.add("index")
        files, ctimes, sizes = stats
        trusted = [ctime if now - ctime > RACY_NS else 0 for ctime in ctimes]
        memos = set()
        if not self.table.unchanged((files, trusted, sizes)):
            old = self.table
            self.table, changed, touched = old.updated((files, trusted, sizes), self._read_record)
            self._touched.update(touched)
            self._groups = None
            # keep what changed, and stats now all trusted (the next scan reads nothing); a
            # stat still too recent is read again anyway
            if changed or (0 not in trusted and (trusted, files) != (old.ctime, old.files)):
                self._dirty.add("index")
            memos = set().union(*map(_memos_of, changed))
        if self._scan_preferences(now):
            memos.add("claude")
        if memos:
            self.hashes = {k: v for k, v in self.hashes.items() if k.split(" ")[0] not in memos}

    def _listing(self, folders: list[str], written: set[str]) -> Stats:
        """The stat a full scan would give, but for files of other folders than ``folders``
        rewritten in place since the last look: a new stat of ``folders``, the table's for
        the rest, where the files whose stat was too recent to trust and the ``written``
        records are stat-ed again."""
        table = self.table
        fresh = record_stats(self.layout, self.store, folders)
        files: list[str] = []
        ctimes: list[int] = []
        sizes: list[int] = []
        for folder in FOLDERS:
            source: Stats = (
                (fresh.files, fresh.ctimes, fresh.sizes)
                if folder in folders
                else (table.files, table.ctime, table.size)
            )
            rows = span(source[0], folder)
            files += source[0][rows]
            ctimes += source[1][rows]
            sizes += source[2][rows]
        ids = {table.files[i] for i, rid in enumerate(table.id) if rid in written}
        for i, file in enumerate(files):
            if not ctimes[i] or file in ids:
                try:
                    st = os.stat(self.layout.long_term / file)
                    ctimes[i], sizes[i] = st.st_ctime_ns, st.st_size
                except OSError:
                    ctimes[i], sizes[i] = 0, -1
        return files, ctimes, sizes

    def _read_record(self, file: str, ctime: int, size: int) -> Row:
        record = load_record(self.layout, self.store, file)
        if record is None:
            return Row(ctime, size, "", "", "", False, False)
        self._records[file] = record
        digest = record_digest(record)
        entry = self.makers["claude"](record)
        if entry is not None:
            self._made["claude"][digest] = list(entry)
        live = record.get("deleted_at") is None
        record_id, shown = str(record.get("id", "")), entry is not None
        return Row(ctime, size, digest, record_id, record["type"], live, shown)

    def _scan_preferences(self, now: int) -> bool:
        """Stat ``preferences.json``; True when its content changed. A broken one is kept
        for ``preference_values`` to raise (only CLAUDE.md, which shows the preferences, is
        held up by it) and read again by the next scan."""
        ctime, size = _stat(self.layout.preferences, now)
        old = self.preferences
        if ctime and old.ctime == ctime and old.size == size:
            return False
        self._prefs_value, self._prefs_error = None, None
        try:
            digest = record_digest(self.preference_values())
        except InputError as exc:
            self._prefs_error = exc
            ctime, digest = 0, "broken: " + exc.one_line()
        self.preferences = Row(ctime, size, digest, "", "preferences", True, True)
        if old.digest == self.preferences.digest:
            return False
        self._dirty.add("index")
        return True

    def preference_values(self) -> dict[str, Any]:
        """``preferences.json`` (empty when there is none); ``InputError`` when it is broken."""
        if self._prefs_error is not None:
            raise self._prefs_error
        if self._prefs_value is None:
            self._prefs_value = read_preferences(self.layout, self.store)
        return self._prefs_value

    def _group(self, memo: str) -> list[int]:
        """The rows the view of ``memo`` is rendered from, in the order the records are read:
        every record of its type (soft-deleted too), or for CLAUDE.md every one it shows."""
        if self._groups is None:
            types, shown = self.table.type, self.table.shown
            self._groups = {
                "patterns": [i for i, kind in enumerate(types) if kind == "pattern"],
                "mistakes": [i for i, kind in enumerate(types) if kind == "mistake"],
                "claude": [i for i, yes in enumerate(shown) if yes],
            }
        return self._groups[memo]

    def source_hash(self, memo: str, template: str) -> str:
        """The ``source-hash`` of the view of ``memo`` with ``template``: ``digests_hash`` of
        its records' digests (and the preferences' for CLAUDE.md), kept while they are.

        CLAUDE.md's covers every live pattern and mistake too, shown or not: a merge that sums
        uses or occurrences can establish a pattern or escalate a mistake that neither side
        showed, so any change to one must change the file on its side for git to hand the
        merge of CLAUDE.md to the driver (which renders it from the merged records)."""
        key = f"{memo} {hashlib.sha256(template.encode()).hexdigest()}"
        if key not in self.hashes:
            ids, digests = self.table.id, self.table.digest
            rows = self._group(memo)
            if memo == "claude":
                live = self.table.live
                both = [*self._group("patterns"), *self._group("mistakes")]
                rows = sorted({*rows, *(i for i in both if live[i])})
            pairs = [(ids[i], digests[i]) for i in rows]
            if memo == "claude":
                pairs.append(("", self.preferences.digest))
            self.hashes[key] = digests_hash(pairs, template)
            self._dirty.add("index")
        return self.hashes[key]

    # -- the items ---------------------------------------------------------------------------
    def items(self, memo: str) -> list[Any]:
        """What each live record of the view of ``memo`` gives it, in the order the records
        are read: kept for its content digest, else made from the record (``makers``)."""
        table = self.table
        rows = [i for i in self._group(memo) if table.live[i]]
        kept, made = self._memo(memo), self._made[memo]
        if any(
            table.digest[i] not in kept
            and table.digest[i] not in made
            and table.files[i] not in self._records
            for i in rows
        ):
            self._read_all()
            return self.items(memo)
        fresh: dict[str, list[Any]] = {}
        for i in rows:
            digest = table.digest[i]
            got = kept.get(digest) or made.get(digest)
            if got is None:
                got = made[digest] = list(self.makers[memo](self._records[table.files[i]]))
            fresh[digest] = got
        if fresh.keys() != kept.keys():
            unclean = self._unclean[memo] & fresh.keys()
            if memo != "claude":  # CLAUDE.md is short: it is redacted whole (``clean``)
                unclean |= _unclean({d: got[-1] for d, got in fresh.items() if d not in kept})
            self._memos[memo], self._unclean[memo] = fresh, unclean
            self._changes.setdefault(memo, set()).update(fresh.keys() ^ kept.keys())
            self._dirty.add(memo)
        return [fresh[table.digest[i]] for i in rows]

    def clean(self, memo: str) -> bool:
        """True when redaction changes none of the items ``items(memo)`` gave (so it changes
        nothing in a view of them: every shape that spans lines starts inside one item, and
        an item is whole lines, starting with its heading and ending with a fixed line)."""
        return memo in self._unclean and memo != "claude" and not self._unclean[memo]

    def _read_all(self) -> None:
        """Read every record again (the kept items do not match them): a full render."""
        self.table = Table.empty()
        self.rescan()

    # -- the rendered files ------------------------------------------------------------------
    def untouched(self, name: str, path: Path) -> str | None:
        """The inputs of the render that rendered file ``name`` was last seen equal to, when
        it still is (nobody edited it since), else None. Told by its stat, or when that is
        too recent to trust, by its bytes."""
        known = self.known.get(name)
        if known is None:
            return None
        ctime, size = _stat(path, time.time_ns())
        if size != known.size:
            return None
        if ctime and ctime == known.ctime:
            return known.inputs
        try:
            data = self.store.read_bytes(path, max_bytes=_MAX_BYTES)
        except PlanningMemoryError:
            return None
        if hashlib.sha256(data).hexdigest() != known.digest:
            return None
        if ctime:  # trusted now: the next run needs only the stat
            self.known[name] = known._replace(ctime=ctime)
            self._dirty.add("index")
        return known.inputs

    def remember(self, name: str, path: Path, inputs: str, text: str, data: bytes) -> None:
        """``data`` is now in rendered file ``name``; it is the render from ``inputs`` when it
        is ``text`` (redaction changed nothing)."""
        if data != text.encode("utf-8"):
            if self.known.pop(name, None) is not None:
                self._dirty.add("index")
            return
        ctime, size = _stat(path, time.time_ns())
        known = Known(inputs, ctime, size, hashlib.sha256(data).hexdigest())
        if self.known.get(name) != known:
            self.known[name] = known
            self._dirty.add("index")


def _unclean(texts: dict[str, str]) -> set[str]:
    """The digests of the ``texts`` that redaction changes. Many at once (a first render)
    are scanned joined first: almost always nothing is found, and one scan is cheaper."""
    if len(texts) > _JOINED:
        joined = "\n".join(texts.values())
        if privacy.redact(joined) == joined:
            return set()
    return {digest for digest, text in texts.items() if privacy.redact(text) != text}

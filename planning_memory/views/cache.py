"""The render cache: what each long-term record file gives the views, kept current by stat.

Derived and gitignored, under ``memory/contextual/views/cache/``, written through the store:

- ``index.json``: each record file's stat (mtime_ns, size), the digest of its content
  (``fileformat.record_digest``), its id and type, whether it is live and whether CLAUDE.md
  shows it; the same for ``preferences.json``; the views' source hashes; and for each rendered
  file, the stat and digest it had when it was last known to equal the render from given
  inputs (``Known``).
- ``patterns.items``, ``mistakes.items``, ``claude.items``: what each record gives that view
  (its item, or its CLAUDE.md entry, with the sort key) under its content digest, since it
  depends on nothing else: one JSON line, then the texts separated by NUL characters (a
  rendered text never holds one).

A scan stats every record file and reads only those whose stat moved or is too recent to trust
(``RACY_NS``: file systems stamp times coarsely), so the views' source hashes come from the
digests and their texts from the kept items plus the few records that changed. When an item
is missing for a record not read in this run, every record is read again (a full render); a
cache that is missing, unreadable or from another version of the renderer is rebuilt the same
way. What a record gives a view is decided by the ``makers`` (``render``, ``claude``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import time
import unicodedata
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from planning_memory.core import Layout, Record
from planning_memory.errors import PlanningMemoryError
from planning_memory.longterm import load_record, record_stats
from planning_memory.store import Store
from planning_memory.views.fileformat import digests_hash, record_digest
from planning_memory.views.table import Row, Table

RACY_NS = 100_000_000  # a stat younger than this (0.1 s) is not trusted: the file is read again
VERSION = 1
MEMOS = {"patterns": 2, "mistakes": 2, "claude": 3}  # memo -> its entries' length (digest, keys)
_SEP = "\x00"
_MAX_BYTES = 1 << 30

# memo -> what a record gives that view: a view item (sort key, text) or a CLAUDE.md entry
# (section, sort key, line), None for nothing
Makers = Mapping[str, Callable[[Record], Any]]


class Known(NamedTuple):
    """A rendered file known to equal the render from ``inputs``: its stat and sha256."""

    inputs: str
    mtime: int
    size: int
    digest: str


def cache_dir(layout: Layout) -> Path:
    return layout.contextual / "views" / "cache"


@functools.cache
def code_stamp() -> str:
    """What the kept items depend on besides the records: this package's view code, the
    record model, the Unicode tables and Python's version (the items of another renderer are
    never reused)."""
    here = Path(__file__).resolve().parent
    versions = f"{VERSION} {sys.version_info[:2]} {unicodedata.unidata_version}"
    digest = hashlib.sha256(versions.encode())
    for path in [*sorted(here.glob("*.py")), here.parent / "core" / "model.py"]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _stat(path: Path | str, now: int) -> tuple[int, int]:
    """``(mtime_ns, size)``: mtime 0 when too recent to trust, size -1 when absent."""
    try:
        st = os.stat(path)
    except OSError:
        return 0, -1
    return (st.st_mtime_ns if now - st.st_mtime_ns > RACY_NS else 0), st.st_size


def _memos_of(row: Row) -> set[str]:
    """The views whose source hash a record file's row is part of."""
    found = {name for name in ("patterns", "mistakes") if row.type == name[:-1]}
    return found | {"claude"} if row.shown or found else found  # see ``source_hash``


class RenderCache:
    """The cache of one memory tree, scanned on creation (``rescan`` after writing records)."""

    def __init__(self, layout: Layout, store: Store, makers: Makers) -> None:
        self.layout, self.store, self.makers = layout, store, makers
        self.known: dict[str, Known] = {}
        self.hashes: dict[str, str] = {}  # "<memo> <template digest>" -> source hash
        self.preferences = Row(0, -1, record_digest({}), "", "preferences", True, True)
        self.table = Table.empty()
        self._groups: dict[str, list[int]] | None = None  # memo -> rows in its view
        self._records: dict[str, Record] = {}  # the records read in this run
        self._made: dict[str, dict[str, list[Any]]] = {name: {} for name in MEMOS}
        self._memos: dict[str, dict[str, list[Any]]] = {}
        self._prefs_value: dict[str, Any] | None = None
        self._dirty: set[str] = set()
        self._load_index()
        self.rescan()

    # -- the files ---------------------------------------------------------------------------
    def _read(self, name: str) -> tuple[dict[str, Any], str] | None:
        """A cache file's JSON line and the rest, or None when it is missing, unreadable or
        from another renderer."""
        path = cache_dir(self.layout) / name
        try:
            head, _, rest = self.store.read_bytes(path, max_bytes=_MAX_BYTES).partition(b"\n")
            value = json.loads(head)
            if isinstance(value, dict) and value.get("code") == code_stamp():
                return value, rest.decode("utf-8", "surrogatepass")
        except (PlanningMemoryError, ValueError):
            pass
        return None

    def _write(self, name: str, value: dict[str, Any], rest: str = "") -> None:
        head = json.dumps({"version": VERSION, "code": code_stamp(), **value})
        data = (head + "\n" + rest).encode("utf-8", "surrogatepass")
        self.store.write_bytes(cache_dir(self.layout) / name, data)

    def _load_index(self) -> None:
        found = self._read("index.json")
        try:
            value = found[0] if found else {}
            self.table = Table.from_json(value["records"])
            self.known = {name: Known(*known) for name, known in value["known"].items()}
            self.preferences = Row(*value["preferences"])
            self.hashes = dict(value["hashes"])
        except (KeyError, TypeError, ValueError, AttributeError):
            self.table, self.known, self.hashes = Table.empty(), {}, {}
            self._dirty.add("index")

    def _memo(self, name: str) -> dict[str, list[Any]]:
        """``content digest -> what the record gives the view`` (its last element the text)."""
        if name not in self._memos:
            found = self._read(f"{name}.items")
            self._memos[name] = _unpack(*found, MEMOS[name]) if found else {}
        return self._memos[name]

    def save(self) -> None:
        """Write what changed in this run (nothing when nothing did)."""
        for name in sorted(self._dirty - {"index"}):
            packed = _pack(self._memos[name])
            if packed is not None:
                self._write(f"{name}.items", *packed)
        if "index" in self._dirty:
            index = {
                "records": self.table.to_json(),
                "preferences": self.preferences,
                "hashes": self.hashes,
                "known": self.known,
            }
            self._write("index.json", index)
        self._dirty.clear()

    # -- the records -------------------------------------------------------------------------
    def rescan(self) -> None:
        """Stat every record file; read the ones whose stat moved (or is too recent)."""
        now = time.time_ns()
        stats = record_stats(self.layout)
        trusted = [mtime if now - mtime > RACY_NS else 0 for mtime in stats.mtimes]
        memos = set()
        if not self.table.unchanged(stats.files, trusted, stats.sizes):
            old = self.table
            self.table, changed = old.updated(stats.files, trusted, stats.sizes, self._read_record)
            self._groups = None
            # keep what changed, and stats now all trusted (the next scan reads nothing); a
            # stat still too recent is read again anyway
            if changed or (0 not in trusted and (trusted, stats.files) != (old.mtime, old.files)):
                self._dirty.add("index")
            memos = set().union(*map(_memos_of, changed))
        if self._scan_preferences(now):
            memos.add("claude")
        if memos:
            self.hashes = {k: v for k, v in self.hashes.items() if k.split(" ")[0] not in memos}

    def _read_record(self, file: str, mtime: int, size: int) -> Row:
        record = load_record(self.layout, self.store, file)
        if record is None:
            return Row(mtime, size, "", "", "", False, False)
        self._records[file] = record
        digest = record_digest(record)
        entry = self.makers["claude"](record)
        if entry is not None:
            self._made["claude"][digest] = list(entry)
        live = record.get("deleted_at") is None
        record_id, shown = str(record.get("id", "")), entry is not None
        return Row(mtime, size, digest, record_id, record["type"], live, shown)

    def _scan_preferences(self, now: int) -> bool:
        """Stat ``preferences.json``; True when its content changed."""
        mtime, size = _stat(self.layout.preferences, now)
        old = self.preferences
        if mtime and old.mtime == mtime and old.size == size:
            return False
        self._prefs_value = None
        value = self.preference_values() if size >= 0 else {}
        self.preferences = Row(mtime, size, record_digest(value), "", "preferences", True, True)
        if old.digest == self.preferences.digest:
            return False
        self._dirty.add("index")
        return True

    def preference_values(self) -> dict[str, Any]:
        """``preferences.json`` (empty when there is none)."""
        if self._prefs_value is None:
            path = self.layout.preferences
            self._prefs_value = self.store.read_json(path) if path.is_file() else {}
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
            self._memos[memo] = fresh
            self._dirty.add(memo)
        return [fresh[table.digest[i]] for i in rows]

    def _read_all(self) -> None:
        """Read every record again (the kept items do not match them): a full render."""
        self.table = Table.empty()
        self.rescan()

    # -- the rendered files ------------------------------------------------------------------
    def unchanged(self, name: str, path: Path, inputs: str) -> bool:
        """True when rendered file ``name`` is the one last seen equal to the render from
        ``inputs`` (its stat, or when that is too recent to trust, its bytes)."""
        known = self.known.get(name)
        if known is None or known.inputs != inputs:
            return False
        mtime, size = _stat(path, time.time_ns())
        if size != known.size:
            return False
        if mtime and mtime == known.mtime:
            return True
        try:
            data = self.store.read_bytes(path, max_bytes=_MAX_BYTES)
        except PlanningMemoryError:
            return False
        if hashlib.sha256(data).hexdigest() != known.digest:
            return False
        if mtime:  # trusted now: the next run needs only the stat
            self.known[name] = known._replace(mtime=mtime)
            self._dirty.add("index")
        return True

    def remember(self, name: str, path: Path, inputs: str, text: str, data: bytes) -> None:
        """``data`` is now in rendered file ``name``; it is the render from ``inputs`` when it
        is ``text`` (redaction changed nothing)."""
        if data != text.encode("utf-8"):
            if self.known.pop(name, None) is not None:
                self._dirty.add("index")
            return
        mtime, size = _stat(path, time.time_ns())
        known = Known(inputs, mtime, size, hashlib.sha256(data).hexdigest())
        if self.known.get(name) != known:
            self.known[name] = known
            self._dirty.add("index")


def _pack(memo: dict[str, list[Any]]) -> tuple[dict[str, Any], str] | None:
    """A memo as its JSON line (digests and keys) and its texts joined by NUL; None when a
    text holds a NUL (never: rendered texts hold none)."""
    texts = [got[-1] for got in memo.values()]
    if any(_SEP in text for text in texts):
        return None
    entries = [[digest, *got[:-1]] for digest, got in memo.items()]
    return {"entries": entries}, _SEP.join(texts)


def _unpack(value: dict[str, Any], rest: str, width: int) -> dict[str, list[Any]]:
    """A memo from what ``_pack`` wrote, entries of ``width`` values (empty when that does not
    hold together)."""
    entries, texts = value.get("entries"), rest.split(_SEP) if rest else []
    if not isinstance(entries, list) or len(entries) != len(texts):
        return {}
    if not all(isinstance(e, list) and len(e) == width and isinstance(e[0], str) for e in entries):
        return {}
    return {e[0]: [*e[1:], t] for e, t in zip(entries, texts, strict=True)}

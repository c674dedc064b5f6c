"""The render cache: what each long-term record gives the views, keyed by its content digest.

The record files themselves are known from the one catalog of them (``longterm.Catalog``):
each file's stamp, its record's digest, id, type, whether it is live and whether CLAUDE.md
shows it, kept current by the one freshness rule (``core.stamps``). What is kept here, derived
and gitignored under ``memory/contextual/views/cache/``, written through the store, each file as
a base and a small delta of what changed since (``cachefile``):

- ``index.json``: the stamp and digest of ``preferences.json``; the views' source hashes with
  the catalog generations they were computed at; and for each rendered file, the stamp it
  had when it was last known to equal the render from given inputs, with its header line
  (which holds its body's hash) to tell its bytes by when that stamp is too recent to trust
  (``Known``).
- ``patterns.items``, ``mistakes.items``, ``claude.items``: what each record gives that view
  (its item, or its CLAUDE.md entry, with the sort key) under its content digest, since it
  depends on nothing else: one JSON line, then the texts separated by NUL characters (a
  rendered text never holds one); and which items redaction would change (``clean``).

So a view's text comes from the kept items plus the few records that changed (read by their
file, checked against the catalog's digest), and its source hash is worked out again only
when a catalog generation it depends on moved. The live rows each view shows and the pairs
its source hash covers are kept in this process, patched from the rows the catalog says
changed (``liverows``, ``sourcepairs``): one save moves one item of 10k, not all. After a
write that names its records, the catalog looks only at the folders whose stamp moved; a full
look (``written`` None: ``pmem render``, ``render --check``, ``sync``) stats every record file.
What a record gives a view is decided by the ``makers`` (``render``, ``claude``).
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
import threading
import time
import unicodedata
from bisect import bisect_right
from collections import Counter, OrderedDict
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any, NamedTuple, TypeVar, cast

from planning_memory.core import Layout, Record, privacy, record_digest, stamps
from planning_memory.errors import InputError, PlanningMemoryError
from planning_memory.longterm import Catalog, load_record, read_preferences
from planning_memory.store import Store
from planning_memory.views.base import Since
from planning_memory.views.cachefile import VERSION, CacheFiles, pack_memo, unpack_memo
from planning_memory.views.fileformat import HEADER_RE, buckets_hash, hash_body
from planning_memory.views.liverows import LiveRows
from planning_memory.views.render import Sections, item_sections
from planning_memory.views.sourcepairs import SortedPairs
from planning_memory.views.table import Row, Table

MEMOS = {"patterns": 2, "mistakes": 2, "claude": 3}  # memo -> its entries' length (digest, keys)
_BASED = {"patterns.md": "patterns", "mistakes.md": "mistakes"}  # imported against a base
_CORE_MODULES = ("model", "privacy", "secret_table", "secret_rules")
_JOINED = 32  # past this many new items, one redaction scan of them all joined first
_MAX_BYTES = 1 << 30
_T = TypeVar("_T")

# memo -> what a record gives that view: a view item (sort key, text) or a CLAUDE.md entry
# (section, sort key, line), None for nothing
Makers = Mapping[str, Callable[[Record], Any]]


class Known(NamedTuple):
    """A rendered file known to equal the render from ``inputs``: its stat, and what tells
    its bytes (``_digest``)."""

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
    """``(ctime_ns, size)`` by the freshness rule (``core.stamps``); size -1 when absent."""
    try:
        return stamps.file_stamp(os.stat(path), now)
    except OSError:
        return 0, -1


class RenderCache:
    """The cache of one memory tree, looked at on creation (``rescan`` after writing records).
    ``RenderCache.of`` keeps it in this process for the next run (the MCP server, a bulk
    import, the API): what it holds is checked again rather than read again."""

    @classmethod
    def of(
        cls,
        layout: Layout,
        store: Store,
        makers: Makers,
        written: Collection[str] | None = None,
    ) -> RenderCache:
        """This process's cache of ``layout``, looked at again (``rescan``), or a new one. Its
        files changed by another run since are read again."""
        key = (str(cache_dir(layout)), os.getpid(), threading.get_ident())
        found = _KEPT.pop(key, None)
        if found is None or found.makers is not makers or not found.files.unchanged():
            found = cls(layout, store, makers, written)
        else:
            found.store = found.files.store = store  # the caller's: its lock is the one held
            found.rescan(written)
        _KEPT[key] = found
        while len(_KEPT) > _KEPT_MAX:
            _KEPT.popitem(last=False)
        return found

    def __init__(
        self,
        layout: Layout,
        store: Store,
        makers: Makers,
        written: Collection[str] | None = None,
    ) -> None:
        self.layout, self.store, self.makers = layout, store, makers
        self.known: dict[str, Known] = {}
        self._wrote: dict[str, bytes] = {}  # rendered file -> the bytes this process wrote to it
        self._order: dict[str, _Order] = {}  # memo -> its items in the view's order
        self.hashes: dict[str, list[str]] = {}  # "<memo> <template digest>" -> [inputs, hash]
        self.preferences = Row(0, -1, record_digest({}), "", "preferences", True, True)
        self.catalog = Catalog.of(layout, store)
        self.table = Table.empty()
        self.generations: dict[str, str] = {}  # the catalog's, when the table was read
        self._gen = -1  # the catalog's generation the table holds
        self._rows: dict[str, LiveRows] = {}  # memo -> the live rows its view shows
        self._synced: set[str] = set()  # memos whose kept items are in step with ``_rows``
        self._syncs: Counter[str] = Counter()  # memo -> its ``_sync`` calls
        self._pairs: dict[str, SortedPairs] = {}  # memo -> its source hash's pairs, in order
        self._made: dict[str, dict[str, list[Any]]] = {name: {} for name in MEMOS}
        self._memos: dict[str, dict[str, list[Any]]] = {}
        self._unclean: dict[str, set[str]] = {}  # memo -> digests of items redaction changes
        self._since: dict[str, Since] = {}  # memo -> its changes since its file was written
        self._changes: dict[str, set[str]] = {}  # memo -> digests added or dropped in this run
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
            self.known = {name: Known(*known) for name, known in value["known"].items()}
            self.preferences = Row(*value["preferences"])
            self.hashes = {key: list(pair) for key, pair in value["hashes"].items()}
        except (KeyError, TypeError, ValueError, AttributeError):
            self.known, self.hashes = {}, {}
            self.files.serials["index.json"] = ""  # written whole next time
            self._dirty.add("index")

    def _memo(self, name: str) -> dict[str, list[Any]]:
        """``content digest -> what the record gives the view`` (its last element the text)."""
        if name not in self._memos:
            base, delta = self.files.read(f"{name}.items")
            found = unpack_memo(base, delta, MEMOS[name])
            head = {**(base[0] if base else {}), **delta.get("head", {})}
            self._since[name] = Since.of(head.get("since") if found else None)
            if found is None:
                found, self.files.serials[f"{name}.items"] = ({}, set()), ""
            self._memos[name], self._unclean[name] = found
        return self._memos[name]

    def save(self) -> None:
        """Write what changed in this run (nothing when nothing did): the entries changed
        go to each file's delta (``cachefile``)."""
        for name in sorted(self._dirty - {"index"}):
            memo, changes = self._memos[name], self._changes.pop(name, set())
            since = self._since[name]
            self.files.save(
                f"{name}.items",
                {digest: memo.get(digest) for digest in changes},
                {"unclean": sorted(self._unclean.get(name, set())), "since": since.as_json()},
                functools.partial(pack_memo, memo),
                len(memo),
            )
        if "index" in self._dirty:
            head = {"preferences": self.preferences, "hashes": self.hashes, "known": self.known}
            self.files.save("index.json", {}, head, lambda: ({}, ""), 0)
        self._dirty.clear()

    # -- the records -------------------------------------------------------------------------
    def rescan(self, written: Collection[str] | None = None) -> None:
        """Bring the catalog up to date and read its table of the record files again when a
        generation moved. ``written``: the ids of the records this run just wrote (the
        catalog keeps them as it writes them): only the folders whose stamp moved are looked
        at; None: a full look, every record file stat-ed (one rewritten in place is seen)."""
        self.catalog = catalog = Catalog.of(self.layout, self.store)
        catalog.current(full=written is None)
        generations = catalog.generations()
        if generations != self.generations:
            if generations[""] == self.generations.get("") and self._gen >= 0:
                self._gen, rows, gone = catalog.rows(self._gen)  # what changed since
                for memo, pairs in self._pairs.items():
                    pairs.patch(self.table, rows, gone, memo)
                for memo, live in self._rows.items():
                    live.patch(self.table, rows, gone, memo)
                self.table.patch(rows, gone)
            else:
                self._gen, rows, _gone = catalog.rows()
                self.table = Table.of(rows)
                self._pairs.clear()
                self._rows.clear()
            self.generations = generations
        self._scan_preferences(time.time_ns())

    def _record(self, file: str, digest: str) -> Record:
        """The record in ``file``; ``_Moved`` when it is not the one catalogued."""
        record = load_record(self.layout, self.store, file)
        if record is None or record_digest(record) != digest:
            raise _Moved(file)
        return record

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
        if old == self.preferences:
            return False
        self._dirty.add("index")
        return old.digest != self.preferences.digest

    def preference_values(self) -> dict[str, Any]:
        """``preferences.json`` (empty when there is none); ``InputError`` when it is broken."""
        if self._prefs_error is not None:
            raise self._prefs_error
        if self._prefs_value is None:
            self._prefs_value = read_preferences(self.layout, self.store)
        return self._prefs_value

    def _live(self, memo: str) -> LiveRows:
        """The live rows the view of ``memo`` shows, kept patched (``rescan``)."""
        if memo not in self._rows:
            self._rows[memo] = LiveRows.of(self.table, memo)
            self._synced.discard(memo)
        return self._rows[memo]

    def _inputs(self, memo: str) -> str:
        """What the source hash of ``memo`` depends on besides the template: the catalog
        generations of the folders it shows (and the preferences' digest for CLAUDE.md)."""
        gens = self.generations
        if memo == "claude":
            return (
                f"{' '.join(f'{k}:{v}' for k, v in sorted(gens.items()))} {self.preferences.digest}"
            )
        return f"{gens.get('', '')} {gens.get(memo, '')}"

    def source_hash(self, memo: str, template: str) -> str:
        """The ``source-hash`` of the view of ``memo`` with ``template``: ``digests_hash`` of
        its records' digests (and the preferences' for CLAUDE.md), kept while the catalog
        generations it depends on hold.

        CLAUDE.md's covers every live pattern and mistake too, shown or not: a merge that sums
        uses or occurrences can establish a pattern or escalate a mistake that neither side
        showed, so any change to one must change the file on its side for git to hand the
        merge of CLAUDE.md to the driver (which renders it from the merged records)."""
        key = f"{memo} {hashlib.sha256(template.encode()).hexdigest()}"
        inputs = self._inputs(memo)
        kept = self.hashes.get(key)
        if kept is None or kept[0] != inputs:
            if memo not in self._pairs:
                self._pairs[memo] = SortedPairs.of(self.table, memo)
            more = [("", self.preferences.digest)] if memo == "claude" else []
            hashes = self._pairs[memo].hashes(*more)
            kept = self.hashes[key] = [inputs, buckets_hash(hashes, template)]
            self._dirty.add("index")
        return kept[1]

    # -- the items ---------------------------------------------------------------------------
    def items(self, memo: str) -> list[Any]:
        """What each live record of the view of ``memo`` gives it, in the order the records
        are read: kept for its content digest, else made from the record (``makers``). A
        record file that no longer holds the record catalogued has the catalog look at every
        file again, then the items are worked out anew."""
        self._retried(self._sync, memo)
        return list(map(self._memos[memo].__getitem__, self._live(memo).digests))

    def _retried(self, step: Callable[[str], _T], memo: str) -> _T:
        """``step(memo)``; when a record file no longer holds the record catalogued, again
        after the catalog looked at every file (twice), then ``InputError``."""
        for _ in range(2):
            try:
                return step(memo)
            except _Moved:
                self.rescan()
        try:
            return step(memo)
        except _Moved as moved:  # rewritten at every look: a writer is at it right now
            raise InputError(
                "changed while the views were rendered from it",
                path=self.store.rel(self.layout.long_term / str(moved)),
                hint="wait for what writes it to finish, then run `pmem render`",
            ) from None

    def _sync(self, memo: str) -> tuple[set[str], set[str]]:
        """Bring the kept items of ``memo`` to the digests of its live rows; the digests
        dropped and added. Told by the rows' changes when the items were in step with them
        (one save: one item of 10k), else by comparing the digests as sets."""
        live, kept = self._live(memo), self._memo(memo)
        went, came = live.take()
        if memo not in self._synced:
            now = set(live.counts)
            went = kept.keys() - now
            came = {d: live.files[live.digests.index(d)] for d in now - kept.keys()}
        self._synced.discard(memo)  # until the kept items are in step again
        self._syncs[memo] += 1
        if not went and not came:
            self._synced.add(memo)
            return set(), set()
        made = self._made[memo]
        for digest, file in came.items():
            if digest not in made:
                made[digest] = list(self.makers[memo](self._record(file, digest)))
        self._since[memo].moved({digest: kept[digest] for digest in went}, came)
        for digest in went:
            del kept[digest]
        kept.update((digest, made[digest]) for digest in came)
        unclean = self._unclean[memo] - went
        if memo != "claude":  # CLAUDE.md is short: it is redacted whole (``clean``)
            unclean |= _unclean({d: kept[d][-1] for d in came})
        self._unclean[memo] = unclean
        self._changes.setdefault(memo, set()).update(went, came)
        self._dirty.add(memo)
        self._synced.add(memo)
        return went, set(came)

    def in_order(self, memo: str) -> tuple[list[str], Sections]:
        """The texts of ``items(memo)`` in the view's order (by sort key, the records' read
        order among equal keys: ``render.assemble_view``) and their section digests
        (``render.item_sections``; None when a text has none). Kept in this process, and when
        few items changed since, patched: sorting 10k keys, or hashing their megabytes, costs
        more than the rest of a save."""
        went, came = self._retried(self._sync, memo)
        order, live, kept = self._order.get(memo), self._live(memo), self._memos[memo]
        if order is None or order.ties or order.at != self._syncs[memo] - 1 or not live.unique():
            order = None
        elif went or came:
            order = _patched(order, went, {d: kept[d] for d in came})
        if order is None:
            order = _sorted(list(map(kept.__getitem__, live.digests)), live.digests)
        order.at = self._syncs[memo]
        self._order[memo] = order
        return order.texts, order.kept_sections()

    def clean(self, memo: str) -> bool:
        """True when redaction changes none of the items ``items(memo)`` gave (so it changes
        nothing in a view of them: every shape that spans lines starts inside one item, and
        an item is whole lines, starting with its heading and ending with a fixed line)."""
        return memo in self._unclean and memo != "claude" and not self._unclean[memo]

    def base(self, memo: str) -> tuple[str, list[Any]] | None:
        """The header line and the items (in the view's order) of the render the file of the
        view of ``memo`` last got, when known (``base.Since``)."""
        kept = self._memo(memo)
        items = self._since[memo].items(kept) if memo in _BASED.values() else None
        if items is None:
            return None
        return self._since[memo].header, sorted(items.values(), key=_first)

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
        wrote = self._wrote.get(name)  # what this process wrote there: compared, not hashed
        if data != wrote if wrote is not None else not _matches(data, known.digest):
            return None
        if ctime:  # trusted now: the next run needs only the stat
            self.known[name] = known._replace(ctime=ctime)
            self._dirty.add("index")
        return known.inputs

    def remember(
        self, name: str, path: Path, inputs: str, text: str, data: bytes, *, same: bool = False
    ) -> None:
        """``data`` is now in rendered file ``name``; it is the render from ``inputs`` when it
        is ``text`` (redaction changed nothing; ``same``: the caller knows it is)."""
        self._wrote.pop(name, None)
        memo = _BASED.get(name, "")
        cut = data.find(b"\n")  # sliced: a partition would copy the megabytes after it
        header = data[: cut if cut >= 0 else len(data)].decode("utf-8", "replace")
        if memo in self._memos and self._since[memo].written(header):
            self._dirty.add(memo)
        if not same and data != text.encode("utf-8"):
            if self.known.pop(name, None) is not None:
                self._dirty.add("index")
            return
        ctime, size = _stat(path, time.time_ns())
        known = Known(inputs, ctime, size, _digest(text, data))
        self._wrote[name] = data
        if self.known.get(name) != known:
            self.known[name] = known
            self._dirty.add("index")


_KEPT: OrderedDict[tuple[str, int, int], RenderCache] = OrderedDict()  # (folder, pid, thread)
_KEPT_MAX = 4


def _digest(text: str, data: bytes) -> str:
    """What tells a rendered file's bytes ``data`` (``text`` encoded): its header line, which
    holds the sha256 of the body below it (hashed as it was rendered, not once more), else
    the sha256 of all of them."""
    cut = text.find("\n")
    first = text if cut < 0 else text[:cut]
    return first if cut >= 0 and HEADER_RE.match(first) else hashlib.sha256(data).hexdigest()


def _matches(data: bytes, digest: str) -> bool:
    """``data`` are the bytes ``_digest`` told: that header line, then a body ending in one
    newline whose sha256 (without it) is the header's body hash; or bytes of that sha256."""
    match = HEADER_RE.match(digest)
    if match is None:
        return hashlib.sha256(data).hexdigest() == digest
    head = digest.encode("utf-8") + b"\n"
    if not data.startswith(head) or not data.endswith(b"\n") or data.endswith(b"\n\n"):
        return False
    scheme = match["body"].partition(":")[0]
    return hash_body(data, scheme, len(head), len(data) - 1) == match["body"]


@dataclass
class _Order:
    """A view's item texts in its order, with each one's record digest, sort key and section
    digests (``render.item_sections``: the body hash is built from them)."""

    digests: list[str]
    keys: list[Any]
    texts: list[str]
    sections: list[bytes | None]
    ties: bool  # two items have equal keys: their order is the read order, so sorted anew
    at: int = -1  # the ``RenderCache._sync`` of its memo it is the order at
    odd: int = 0  # texts without section digests (never: an item starts with its heading)

    def kept_sections(self) -> Sections:
        """``sections``, when every text has its own."""
        return None if self.odd else cast(list[bytes], self.sections)

    def insert(self, at: int, digest: str, item: Any) -> None:
        """Item ``item`` (sort key, text) of record digest ``digest`` at index ``at``."""
        sections = item_sections(item[1])
        self.digests.insert(at, digest)
        self.keys.insert(at, item[0])
        self.texts.insert(at, item[1])
        self.sections.insert(at, sections)
        self.odd += sections is None

    def remove(self, digest: str) -> None:
        """The item of record digest ``digest``."""
        at = self.digests.index(digest)
        self.odd -= self.sections[at] is None
        del self.digests[at], self.keys[at], self.texts[at], self.sections[at]


_PATCHED = 64  # past this many items in or out, a view's order is sorted anew


def _patched(order: _Order, went: set[str], came: dict[str, Any]) -> _Order | None:
    """``order`` (no two keys equal) patched in place: the items of the digests ``went``
    removed and the items ``came`` (by digest) inserted by key; None, and ``order`` no
    longer to be used, when they are too many or an inserted key ties with one kept (then
    the read order decides: ``_sorted``)."""
    if len(went) + len(came) > _PATCHED:
        return None
    for digest in went:
        order.remove(digest)
    for digest in sorted(came):
        item = came[digest]
        i = bisect_right(order.keys, item[0])
        if (i and order.keys[i - 1] == item[0]) or (
            i < len(order.keys) and order.keys[i] == item[0]
        ):
            return None
        order.insert(i, digest, item)
    return order


def _sorted(items: list[Any], digests: list[str]) -> _Order:
    """``items`` (with their ``digests``, in the records' read order) in the view's order."""
    pairs = sorted(zip(items, digests, strict=True), key=_key)
    keys = [item[0] for item, _ in pairs]
    ties = any(a == b for a, b in pairwise(keys))
    texts = [item[1] for item, _ in pairs]
    sections = list(map(item_sections, texts))
    odd = sections.count(None)
    return _Order([d for _, d in pairs], keys, texts, sections, ties, odd=odd)


def _key(pair: tuple[Any, str]) -> Any:
    return pair[0][0]


def _first(item: list[Any]) -> Any:
    return item[0]


class _Moved(Exception):
    """A record file holds another record than the one catalogued."""


def _unclean(texts: dict[str, str]) -> set[str]:
    """The digests of the ``texts`` that redaction changes. Many at once (a first render)
    are scanned joined first: almost always nothing is found, and one scan is cheaper."""
    if len(texts) > _JOINED:
        joined = "\n".join(texts.values())
        if privacy.redact(joined) == joined:
            return set()
    return {digest for digest, text in texts.items() if privacy.redact(text) != text}

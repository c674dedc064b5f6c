"""Keeping the search index current: rebuild, sync from files, and per-write updates.

Three ways in, all idempotent:

- ``rebuild`` empties the index and indexes every source (records, sessions, entity shards and,
  for a repository, its code and Markdown). It runs in one transaction: readers keep seeing the
  old index until it commits.
- ``sync`` compares what is on disk with what the index last saw (folder stamps, then each
  file's stamp, then a content hash) and re-indexes only what changed, by the one freshness
  rule (``core.stamps``: ctime and size, a stamp too recent to trust looked at again next
  time). Search and the context packer call it first, so an index left behind by ``git pull``
  or a hand edit catches up by itself. (The index's ``mtime_ns`` columns hold the stamps'
  ctimes.)
- ``index_record`` / ``remove_record`` / ``index_session`` / ``remove_session`` /
  ``index_files`` are what a writer calls right after it wrote, so the next read is current
  without a folder scan.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planning_memory import background, longterm
from planning_memory.core import Layout, effective_config, stamps, timestamp
from planning_memory.search import documents as sources
from planning_memory.search import repo_documents as codebase
from planning_memory.search import semantic, vectors
from planning_memory.search.database import Index
from planning_memory.search.documents import Doc
from planning_memory.store import Store

ENTITY_PREFIX = "memory/entity/"
CODE_PREFIX = "file:"
CODE_BATCH = 2000  # files indexed per transaction
PENDING = "pending_since"  # meta: the code map and the code are still to index
EMBED_PER_CALL = 32  # texts a search or context call embeds; the rest in the background
HOOK_EMBED = 4  # texts a hook may embed (20-50 ms each); the rest waits for the next call
BROKEN = "broken_records"  # meta: the record files (groups) that were broken when last read
CATALOG = "record_catalog"  # meta: the catalog epoch and generation the records were synced at

Reader = Callable[[Path], list[Doc]]


@dataclass(frozen=True)
class IndexReport:
    """What one sync or rebuild did."""

    changed: int = 0
    removed: int = 0
    seen: int = 0
    embedded: int = 0  # texts given a vector

    def __add__(self, other: IndexReport) -> IndexReport:
        return IndexReport(
            self.changed + other.changed,
            self.removed + other.removed,
            self.seen + other.seen,
            self.embedded + other.embedded,
        )


def _rel(layout: Layout, path: Path) -> str:
    """``path`` relative to the memory folder it lies in (the main worktree's for the
    sessions a linked worktree shares), ``/``-separated (the group name)."""
    tree = layout.tree_of(path)
    base = str(tree) + os.sep
    text = str(path)
    if text.startswith(base):
        return text[len(base) :].replace(os.sep, "/")
    return Path(path).relative_to(tree).as_posix()


def _stat(path: Path) -> tuple[int, int]:
    """``path``'s stamp (``core.stamps``: ctime 0 when too recent to trust); (0, -1) if absent."""
    try:
        return stamps.file_stamp(os.stat(path), time.time_ns())
    except OSError:
        return 0, -1


def _settings(config: Mapping[str, Any] | None) -> dict[str, Any]:
    memory = effective_config(config)["memory"]
    return {
        "size": int(memory["contextual"]["chunkSize"]),
        "overlap": int(memory["contextual"]["chunkOverlap"]),
        "exclude": list(memory["entity"]["excludePatterns"]),
        "include": list(memory["entity"]["includePatterns"]),
        "max_bytes": int(memory["entity"].get("maxFileBytes", 1 << 20)),
    }


# -- per-write updates --------------------------------------------------------------------------
def index_record(index: Index, layout: Layout, record: Mapping[str, Any]) -> bool:
    """Index (or, when soft-deleted, drop) one long-term record; False if nothing changed."""
    path = layout.record_path(str(record["type"]), str(record["id"]))
    doc = sources.record_doc(record)
    docs = [doc] if doc else []
    mtime, size = _stat(path)
    return index.replace_group(_rel(layout, path), docs, sources.content_hash(docs), mtime, size)


def remove_record(index: Index, layout: Layout, record_id: str) -> int:
    """Forget a (hard-deleted) record; the number of documents removed."""
    row = index.by_key(f"record:{record_id}")
    if row is None:
        return 0
    return index.remove_group(row.group)


def index_session(index: Index, layout: Layout, session: Mapping[str, Any]) -> bool:
    """Index a session's messages, decisions and summaries (replacing what was there)."""
    path = layout.session_path(str(session["id"]))
    docs = sources.session_docs(session)
    mtime, size = _stat(path)
    return index.replace_group(_rel(layout, path), docs, sources.content_hash(docs), mtime, size)


def remove_session(index: Index, layout: Layout, session_id: str) -> int:
    """Forget everything indexed from a deleted session."""
    return index.remove_group(_rel(layout, layout.session_path(session_id)))


def index_files(
    index: Index, root: Path, paths: Iterable[str], config: Mapping[str, Any] | None = None
) -> IndexReport:
    """Re-index repository files (relative paths) after they changed or were deleted."""
    opts = _settings(config)
    names = list(paths)
    report = IndexReport(seen=len(names))
    takes = codebase.selection(opts["exclude"], opts["include"])
    with index.write():
        for rel in names:
            if not takes(rel):
                report += IndexReport(removed=index.remove_group(CODE_PREFIX + rel))
                continue
            report += _sync_one(index, CODE_PREFIX + rel, root / rel, _code_reader(root, rel, opts))
    return report


def _code_reader(root: Path, rel: str, opts: Mapping[str, Any]) -> Reader:
    def read(_path: Path) -> list[Doc]:
        got = codebase.read_source_text(root, rel, opts["max_bytes"])
        if got is None:
            return []
        return codebase.file_docs(rel, got[0], got[1], opts["size"], opts["overlap"])

    return read


def _sync_one(index: Index, group: str, path: Path, reader: Reader) -> IndexReport:
    mtime, size = _stat(path)
    if size < 0:
        return IndexReport(removed=index.remove_group(group))
    docs = reader(path)
    changed = index.replace_group(group, docs, sources.content_hash(docs), mtime, size)
    return IndexReport(changed=int(changed))


# -- sync from files ----------------------------------------------------------------------------
Entry = tuple[str, Path, int, int]  # group, file, its stamp: ctime_ns (0: do not trust), size


def _scan(store: Store, folder: Path, prefix: str, accept: Callable[[str], bool]) -> list[Entry]:
    """The entries directly in ``folder`` whose name ``accept``s: regular files, and anything
    else too (a FIFO, a symlink, a folder named ``x.json``) so that its reader refuses it out
    loud; a name that is not valid UTF-8 is warned about and left out (``usable_name``)."""
    now = time.time_ns()
    found: list[Entry] = []
    try:
        with os.scandir(store.check_inside(folder)) as entries:
            for entry in entries:
                if not accept(entry.name) or not store.usable_name(folder, entry.name):
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                found.append((prefix + entry.name, Path(entry.path), *stamps.file_stamp(st, now)))
    except (FileNotFoundError, NotADirectoryError):
        pass
    return found


def _sync_entries(
    index: Index, prefix: str, entries: Sequence[Entry], reader: Reader, *, nested: bool = False
) -> IndexReport:
    """Bring the groups under ``prefix`` in line with ``entries`` (stamp, then hash);
    unless ``nested``, groups in sub-folders of ``prefix`` are left alone."""
    known = {
        g: state
        for g, state in index.group_state(prefix).items()
        if nested or "/" not in g[len(prefix) :]
    }
    report = IndexReport(seen=len(entries))
    with index.write():
        for group, path, mtime, size in entries:
            state = known.pop(group, None)
            if state is not None and mtime and state[1] == mtime and state[2] == size:
                continue
            docs = reader(path)
            if index.replace_group(group, docs, sources.content_hash(docs), mtime, size):
                report += IndexReport(changed=1)
        for group in known:
            report += IndexReport(removed=index.remove_group(group))
    return report


def _folder_stamp(folder: Path) -> str:
    """The folder's stamp (``core.stamps``); "" when too recent to trust; "absent" when there
    is none."""
    try:
        st = os.stat(folder)
    except OSError:
        return "absent"
    return stamps.folder_stamp(st) if stamps.trusted(st.st_ctime_ns, time.time_ns()) else ""


def _sync_folder(
    index: Index,
    layout: Layout,
    store: Store,
    folder: Path,
    accept: Callable[[str], bool],
    reader: Reader,
    *,
    force: bool,
) -> IndexReport:
    """Sync one folder's files when its stamp moved since the last sync (or when forced)."""
    prefix = _rel(layout, folder) + "/"
    key = f"folder:{prefix}"
    stamp = _folder_stamp(folder)
    if not force and stamp and index.get_meta(key) == stamp:
        return IndexReport()
    report = _sync_entries(index, prefix, _scan(store, folder, prefix, accept), reader)
    index.set_meta(key, stamp)
    return report


def _is_json(name: str) -> bool:
    return name.endswith(".json") and not name.startswith(".")


def _is_session(name: str) -> bool:
    return name.startswith("session-") and name.endswith(".json")


def _entities_unchanged(index: Index, layout: Layout) -> bool:
    """True when no folder of the entity tree changed since the last entity sync (shards are
    replaced by rename, which moves their folder's stamp)."""
    saved = index.get_meta("entity_dirs")
    if not saved:
        return False
    seen: dict[str, str] = json.loads(saved)
    base = str(layout.planning) + os.sep
    return all(
        isinstance(stamp, str)
        and stamp not in ("", "absent")
        and _folder_stamp(Path(base + d)) == stamp
        for d, stamp in seen.items()
    )


def _sync_entities(
    index: Index, layout: Layout, store: Store, *, force: bool = False
) -> IndexReport:
    """Re-index changed entity shards: a stat of each known folder when nothing changed,
    else a walk of the tree with a stat of every shard."""
    if not force and _entities_unchanged(index, layout):
        return IndexReport()
    dirs = {_rel(layout, layout.entity): _folder_stamp(layout.entity)}
    entries: list[Entry] = []
    for folder, subdirs, _files in os.walk(store.check_inside(layout.entity)):
        subdirs[:] = sorted(
            d for d in subdirs if not d.startswith(".") and store.usable_name(folder, d)
        )
        base = Path(folder)
        prefix = _rel(layout, base) + "/"
        dirs[prefix[:-1]] = _folder_stamp(base)
        entries += _scan(store, base, prefix, _is_json)
    report = _sync_entries(
        index,
        ENTITY_PREFIX,
        entries,
        lambda p: sources.read_entity_file(layout, store, p),
        nested=True,
    )
    index.set_meta("entity_dirs", json.dumps(dirs, sort_keys=True))
    return report


def sync(
    index: Index, layout: Layout, store: Store, *, force: bool = False, entities: bool = True
) -> IndexReport:
    """Re-index the records, sessions and (unless ``entities`` is false) entity shards that
    changed on disk. Each folder is listed only when its stamp moved since the last sync."""
    report = _sync_records(index, layout, store, force=force)
    report += _sync_folder(
        index,
        layout,
        store,
        layout.short_term,
        _is_session,
        lambda p: _read_session_file(store, p),
        force=force,
    )
    report += _sync_folder(
        index,
        layout,
        store,
        layout.short_term / "archive",
        _is_json,
        lambda p: sources.read_archive(store, p),
        force=force,
    )
    if not entities:
        return report
    return report + _sync_entities(index, layout, store, force=force)


def _sync_records(index: Index, layout: Layout, store: Store, *, force: bool) -> IndexReport:
    """Sync the record files by the one catalog of them (``longterm.Catalog``): those changed
    since the catalog generation of the last sync are read again, those gone dropped; a new
    catalog (or ``force``) compares every record file. A record file found broken
    (``store.broken``) is listed in the meta ``BROKEN`` and read again by every later sync:
    each command that answers from the index warns of it (as every command that reads the
    records does), and a file repaired in place is indexed."""
    read: dict[str, bool] = {}  # group -> broken, for each record file read in this sync

    def reader(path: Path) -> list[Doc]:
        docs = sources.read_record_file(store, path)
        read[_rel(layout, path)] = store.rel(path) in store.broken
        return docs

    shelf = longterm.Catalog.of(layout, store)
    shelf.current(full=force)
    epoch = shelf.generations()[""]
    synced = (index.get_meta(CATALOG) or "").split()
    since = int(synced[1]) if not force and len(synced) == 2 and synced[0] == epoch else -1
    gen, rows, gone = shelf.rows(since)
    base = _rel(layout, layout.long_term) + "/"
    entries = [(base + row[0], layout.long_term / row[0], max(row[1], 0), row[2]) for row in rows]
    report = IndexReport()
    if since < 0:  # every record file, folder by folder (an unchanged one is not read)
        for name in ("patterns", "mistakes", "learnings"):
            mine = [e for e in entries if e[0].startswith(f"{base}{name}/")]
            report += _sync_entries(index, f"{base}{name}/", mine, reader)
    else:
        with index.write():
            for group, path, _ctime, _size in entries:
                report += _sync_one(index, group, path, reader)
            for file in gone:
                report += IndexReport(removed=index.remove_group(base + file))
    index.set_meta(CATALOG, f"{epoch} {gen}")
    known = index.get_meta(BROKEN)
    before = [] if known is None else json.loads(known)
    for group in before:
        if group not in read:
            report += _sync_one(index, group, layout.planning / group, reader)
    broken = sorted(group for group, bad in read.items() if bad)
    if broken != before:
        index.set_meta(BROKEN, json.dumps(broken))
    return report


def _read_session_file(store: Store, path: Path) -> list[Doc]:
    session = sources.read_session(store, path)
    return sources.session_docs(session) if session else []


# -- code ---------------------------------------------------------------------------------------
def reindex_codebase(
    index: Index, layout: Layout, config: Mapping[str, Any] | None = None
) -> IndexReport:
    """Index the repository's code and Markdown: new and changed files, and forget files that
    are gone or now ignored."""
    opts = _settings(config)
    root = layout.repo_root
    names = codebase.repo_files(root, opts["exclude"], opts["include"])
    known = index.group_state(CODE_PREFIX)
    report = IndexReport(seen=len(names))
    # one transaction per batch (unless the caller holds one): a killed run keeps what it
    # indexed, and the next run skips those files (their stamps match)
    for start in range(0, len(names), CODE_BATCH):
        with index.write():
            for rel in names[start : start + CODE_BATCH]:
                group = CODE_PREFIX + rel
                mtime, size = _stat(root / rel)
                state = known.pop(group, None)
                if state is not None and mtime and state[1] == mtime and state[2] == size:
                    continue
                report += _sync_one(index, group, root / rel, _code_reader(root, rel, opts))
    with index.write():
        for group in known:
            report += IndexReport(removed=index.remove_group(group))
        index.set_meta("code_indexed_at", timestamp_now())
    return report


def timestamp_now() -> str:
    from datetime import UTC, datetime

    return timestamp(datetime.now(UTC))


# -- rebuild ------------------------------------------------------------------------------------
def rebuild(
    index: Index,
    layout: Layout,
    store: Store,
    config: Mapping[str, Any] | None = None,
    *,
    code: bool = True,
    embed_limit: int | None = None,
) -> IndexReport:
    """Empty the index and index every source again, in one transaction; then embed what
    has no vector yet (at most ``embed_limit`` texts, the rest in the background; all of
    them by default, as ``pmem reindex`` does)."""
    with index.write():
        index.clear()
        with index.bulk():
            report = sync(index, layout, store, force=True)
            if code and layout.planning.name == ".planning":
                report += reindex_codebase(index, layout, config)
        index.set_meta("built_at", timestamp_now())
        if code:
            index.delete_meta(PENDING)
    index.optimize()
    return report + embed(index, config, limit=embed_limit)


def ensure_ready(
    index: Index, layout: Layout, store: Store, config: Mapping[str, Any] | None = None
) -> IndexReport:
    """Rebuild a new (or deleted) index; finish one that ``ensure_memories`` started;
    otherwise sync what changed on disk."""
    if not index.built:  # a fresh clone's first search: its vectors mostly in the background
        return rebuild(index, layout, store, config, embed_limit=EMBED_PER_CALL)
    if index.get_meta(PENDING) is None:
        return sync(index, layout, store) + embed(index, config, limit=EMBED_PER_CALL)
    report = sync(index, layout, store, force=True)
    if layout.planning.name == ".planning":
        report += reindex_codebase(index, layout, config)
    with index.write():
        index.delete_meta(PENDING)
    return report + embed(index, config, limit=EMBED_PER_CALL)


def embed(
    index: Index, config: Mapping[str, Any] | None, *, limit: int | None = None
) -> IndexReport:
    """Give the records and session summaries indexed since the last call their vectors (at
    most ``limit`` texts; the rest in the background, ``backfill``, else next time), when
    embeddings are on and the model is installed; with embeddings turned off, drop the
    vectors. The model is loaded only when there is something to embed."""
    if not semantic.enabled(config):
        if vectors.count(index):
            vectors.clear(index)
        return IndexReport()
    if not vectors.stale(index) or not semantic.installed():
        return IndexReport()
    embedder, _problem = semantic.load_embedder()
    if embedder is None:
        return IndexReport()
    report = IndexReport(embedded=vectors.refresh(index, embedder, limit=limit))
    if limit is not None and vectors.stale(index):
        tree = str(index.tree)
        background.detach("planning_memory.search.backfill", tree, cwd=tree)
    return report


def ensure_memories(
    index: Index, layout: Layout, store: Store, config: Mapping[str, Any] | None = None
) -> bool:
    """What a hook may do in its time: when no index was built, index the memories (records
    and sessions: quick at any repository size) and leave the code map and the code pending
    (``ensure_ready`` finishes them, resumably); otherwise sync the memories that changed.
    At most ``HOOK_EMBED`` new texts are embedded (the rest by the next call). Returns
    whether the rest is still pending."""
    if not index.built:
        with index.write():
            index.clear()
            with index.bulk():
                sync(index, layout, store, force=True, entities=False)
            index.set_meta(PENDING, timestamp_now())
            index.set_meta("built_at", timestamp_now())
        embed(index, config, limit=HOOK_EMBED)
        return True
    sync(index, layout, store, entities=False)
    embed(index, config, limit=HOOK_EMBED)
    return index.get_meta(PENDING) is not None

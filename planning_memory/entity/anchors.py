"""Anchors: links from long-term memories to code, and which of them point at changed code.

An anchor is ``{path, symbol, hash}``. Its hash is, by what the symbol names:

- nothing: the file's content hash (git's blob id, as in the file entity);
- a function or method (``validateCredentials``, ``AuthService.register``): the hash of its
  source text (16 hex digits);
- a class, object or module block holding functions (``AuthService``): a digest of the
  hashes of the functions inside it;
- anything else (a constant, a type, a symbol in a file the scanner does not parse, such as
  ``prisma/schema.prisma``): the file's content hash again, read from disk when the file has
  no entity -- any edit to the file then counts, which errs on the side of review.

An anchor whose code now hashes differently, or no longer exists, has changed; an anchor
without a hash has no baseline and never counts as changed. ``current_anchor_hash`` gives
the value to store when a memory is written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from planning_memory.core import Layout
from planning_memory.entity.entities import name_of, qualified_of
from planning_memory.entity.parsefile import blob_id, read_source
from planning_memory.entity.query import repo_path
from planning_memory.entity.shards import Shards, file_of, folder_of
from planning_memory.errors import ConflictError, PlanningMemoryError
from planning_memory.store import Store

Entity = dict[str, Any]
MAX_ANCHORED_BYTES = 16 * 1024 * 1024


class _Lookup:
    """Current entity hashes, loading each folder's shards once."""

    def __init__(self, layout: Layout, store: Store) -> None:
        self.layout = layout
        self.shards = Shards(layout, store)
        self._files: dict[str, dict[str, Entity]] = {}
        self._functions: dict[str, dict[str, Entity]] = {}

    def file(self, path: str) -> Entity | None:
        folder = folder_of(path)
        self._load(folder)
        return self._files[folder].get(path)

    def _load(self, folder: str) -> None:
        if folder not in self._files:
            shard = self.shards.load_dir(folder)
            self._files[folder] = shard.files
            self._functions[folder] = shard.functions

    def functions(self, path: str) -> list[Entity]:
        folder = folder_of(path)
        self._load(folder)
        return [
            {"qualified_name": qualified_of(k), "name": name_of(k, e), "hash": e.get("hash")}
            for k, e in sorted(self._functions[folder].items())
            if file_of(k) == path
        ]

    def hash(self, path: str, symbol: str | None) -> str | None:
        try:
            path = repo_path(self.layout, path)
        except PlanningMemoryError:
            return None
        entity = self.file(path)
        if symbol and entity is not None:
            found = self._symbol_hash(path, symbol)
            if found is not None:
                return found
        if entity is not None and entity.get("hash"):
            return str(entity["hash"])
        return self._disk_hash(path)

    def _symbol_hash(self, path: str, symbol: str) -> str | None:
        functions = self.functions(path)
        exact = [f for f in functions if symbol in (f["qualified_name"], f["name"])]
        if len(exact) == 1:
            return str(exact[0]["hash"])
        inside = exact or [f for f in functions if f["qualified_name"].startswith(symbol + ".")]
        if not inside:
            return None
        joined = "\n".join(f"{f['qualified_name']}={f['hash']}" for f in inside)
        return hashlib.blake2b(joined.encode(), digest_size=8).hexdigest()

    def _disk_hash(self, path: str) -> str | None:
        status, data = read_source(str(self.layout.repo_root / path), MAX_ANCHORED_BYTES)
        return blob_id(data) if status == "ok" else None


def current_anchor_hash(
    layout: Layout, store: Store, path: str, symbol: str | None = None
) -> str | None:
    """The hash an anchor to ``path`` (and ``symbol``) should carry now, or None if unknown."""
    return _Lookup(layout, store).hash(path, symbol)


def complete_anchors(
    layout: Layout, store: Store, anchors: Sequence[Mapping[str, Any] | str]
) -> list[dict[str, Any]]:
    """Anchors (``path`` or ``path::symbol`` strings, or dicts) completed with the hash the
    code map gives them now; one the code map does not know keeps ``hash: None``."""
    lookup = _Lookup(layout, store)
    done = []
    for given in anchors:
        if isinstance(given, str):
            text_path, _, text_symbol = given.partition("::")
            item: dict[str, Any] = {"path": text_path, "symbol": text_symbol or None}
        else:
            item = dict(given)
        path, symbol = str(item["path"]), item.get("symbol")
        digest = item.get("hash") or lookup.hash(path, symbol)
        done.append({"path": path, "symbol": symbol, "hash": digest})
    return done


def changed_anchors(
    layout: Layout, store: Store, anchors: Iterable[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The anchors whose code changed since their hash was taken (gone counts as changed)."""
    return _changed(_Lookup(layout, store), anchors)


def _changed(lookup: _Lookup, anchors: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    changed = []
    for anchor in anchors:
        recorded = anchor.get("hash")
        path = anchor.get("path")
        if not recorded or not isinstance(path, str):
            continue
        symbol = anchor.get("symbol")
        if lookup.hash(path, symbol if isinstance(symbol, str) else None) != recorded:
            changed.append(dict(anchor))
    return changed


def mark_stale_anchors(layout: Layout, store: Store, *, now: str | None = None) -> list[str]:
    """Set ``needs_review`` (and ``updated_at``) on every live long-term record with a changed
    anchor; returns their ids. Nothing else in a record is touched; a record edited by someone
    else meanwhile is left for the next run."""
    stamp = now or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    lookup = _Lookup(layout, store)
    marked: list[str] = []
    with store.lock():
        for folder in layout.record_dirs():
            for path in store.list_json(folder):
                try:
                    loaded = store.load(path)
                except PlanningMemoryError:
                    continue
                record = loaded.value
                if not _reviewable(record) or not _changed(lookup, record["anchors"]):
                    continue
                try:
                    store.write_json(
                        path,
                        {**record, "needs_review": True, "updated_at": stamp},
                        expect=loaded.digest,
                    )
                except ConflictError:
                    continue
                marked.append(str(record.get("id", path.stem)))
    return sorted(marked)


def _reviewable(record: Any) -> bool:
    return (
        isinstance(record, dict)
        and isinstance(record.get("anchors"), list)
        and bool(record["anchors"])
        and record.get("needs_review") is not True
        and not record.get("deleted_at")
    )

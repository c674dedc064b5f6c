"""The file entities of one scan: stored ones read per folder on first use, changes on top.

A scan that changes a few files reads the folders of those files (and of the files whose
``called_by`` they touch), not every shard: the hash index gives every stored path with its
hash and import links (``hashindex.links_of``), which is all the call graph needs of the files
left alone. ``everything`` reads the rest, for the steps that need every entity (feature
areas when their inputs changed, coverage reports, imports resolved again after files came
or went).
"""

from __future__ import annotations

from typing import Any

from planning_memory.entity.hashindex import links_of
from planning_memory.entity.languages import language_for
from planning_memory.entity.shards import Shards, folder_of

Entity = dict[str, Any]


class FileTable:
    """The stored file entities of one scan (read per folder on first use) and its changes."""

    def __init__(
        self, shards: Shards, stored: dict[str, str | None], links: dict[str, list[list[str]]]
    ) -> None:
        self.shards = shards
        self.stored = stored  # every stored path -> its hash (None: annotations only)
        self.stored_links = links
        self.changes: dict[str, Entity | None] = {}  # this scan's: None removes the entry
        self._old: dict[str, Entity] = {}
        self._read: set[str] = set()  # folders read
        self._everything = False

    # -- the stored state --------------------------------------------------------------------
    def _folder(self, folder: str) -> None:
        if folder not in self._read:
            self._read.add(folder)
            found = self.shards.load_dir_files(folder)
            self._old.update((p, e) for p, e in found.items() if p in self.stored)

    def old(self, path: str) -> Entity | None:
        """The entity stored for ``path`` before this scan, or None."""
        if path not in self.stored:
            return None
        self._folder(folder_of(path))
        return self._old.get(path)

    def old_everything(self) -> dict[str, Entity]:
        if not self._everything:
            for folder in {folder_of(p) for p in self.stored} - self._read:
                self._folder(folder)
            self._everything = True
        return {p: self._old[p] for p in self.stored if p in self._old}

    # -- the state this scan leaves ----------------------------------------------------------
    def get(self, path: str) -> Entity | None:
        if path in self.changes:
            return self.changes[path]
        return self.old(path)

    def __getitem__(self, path: str) -> Entity:
        entity = self.get(path)
        if entity is None:
            raise KeyError(path)
        return entity

    def put(self, path: str, entity: Entity | None) -> bool:
        """Record ``entity`` (None: no entry) for ``path``; False when that is what it has."""
        if self.get(path) == entity:
            return False
        self.changes[path] = entity
        return True

    def paths(self) -> set[str]:
        """Every path with an entry after this scan's changes."""
        found = set(self.stored)
        for path, entity in self.changes.items():
            if entity is None:
                found.discard(path)
            else:
                found.add(path)
        return found

    def sources(self, *, before: bool = False) -> frozenset[str]:
        """Paths of scanned source files (entries that are more than annotations), as stored
        or (``before=False``) after this scan's changes."""
        found = {p for p, h in self.stored.items() if h}
        if not before:
            for path, entity in self.changes.items():
                if entity is not None and entity.get("language"):
                    found.add(path)
                else:
                    found.discard(path)
        return frozenset(found)

    def everything(self) -> dict[str, Entity]:
        files = self.old_everything()
        for path, entity in self.changes.items():
            if entity is None:
                files.pop(path, None)
            else:
                files[path] = entity
        return files

    def by_folder(self, folders: set[str]) -> dict[str, dict[str, Entity]]:
        """The entries of the files directly in each of ``folders`` after this scan's
        changes (paths in order)."""
        grouped: dict[str, dict[str, Entity]] = {f: {} for f in folders}
        for path in self.stored:
            folder = folder_of(path)
            if folder in grouped:
                self._folder(folder)
        for path, entity in self._old.items():
            group = grouped.get(folder_of(path))
            if group is not None and path not in self.changes:
                group[path] = entity
        for path, change in self.changes.items():
            group = grouped.get(folder_of(path))
            if group is not None and change is not None:
                group[path] = change
        return {f: dict(sorted(files.items())) for f, files in grouped.items()}

    def changed_paths(self) -> list[str]:
        """Paths whose entry this scan changed (added, replaced or removed)."""
        return [p for p, e in self.changes.items() if e is not self._old.get(p)]

    # -- what the call graph reads -----------------------------------------------------------
    def graph_views(self) -> tuple[dict[str, Entity], dict[str, Entity]]:
        """``(before, after)``: every entry reduced to what ``callgraph.Graph`` reads
        (language, import targets, re-export targets), as stored and after this scan's
        changes; the two share the entries this scan left alone."""
        if not self.stored:  # a first scan: the entities themselves serve
            return {}, {p: e for p, e in self.changes.items() if e is not None}
        links = self.stored_links
        before = {
            p: _light(language_for(p) if h else None, links.get(p) or [[], []])
            for p, h in self.stored.items()
        }
        after = dict(before)
        for path, entity in self.changes.items():
            if entity is None:
                after.pop(path, None)
            else:
                after[path] = _light(entity.get("language"), links_of(entity))
        return before, after


def _light(language: str | None, links: list[list[str]]) -> Entity:
    """An entry as ``callgraph.Graph`` reads it: language, import and re-export targets."""
    targets, reexports = links
    return {"language": language, "imports": {t: t for t in targets}, "reexports": reexports}

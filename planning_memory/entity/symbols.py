"""Functions and components of a scan, loaded from the shards one folder at a time."""

from __future__ import annotations

from typing import Any

from planning_memory.entity.shards import Shard, Shards, file_of, folder_of

Entity = dict[str, Any]


class Symbols:
    """Functions and components grouped by folder then file; ``of``/``touch`` make it the
    ``callgraph.Functions`` of a scan."""

    def __init__(self, shards: Shards, existing: set[str]) -> None:
        self.shards = shards
        self.existing = existing  # source folders that have shards on disk
        self.folders: dict[str, dict[str, dict[str, dict[str, Entity]]]] = {}
        self.dirty: set[str] = set()

    def _folder(self, folder: str) -> dict[str, dict[str, dict[str, Entity]]]:
        grouped = self.folders.get(folder)
        if grouped is None:
            shard = self.shards.load_dir(folder) if folder in self.existing else Shard()
            grouped = {"functions": {}, "components": {}}
            for kind, by_file in grouped.items():
                for key, entity in shard.kind(kind).items():
                    by_file.setdefault(file_of(key), {})[key] = entity
            self.folders[folder] = grouped
        return grouped

    def of(self, path: str) -> dict[str, Entity]:
        return self._folder(folder_of(path))["functions"].get(path, {})

    def components_of(self, path: str) -> dict[str, Entity]:
        return self._folder(folder_of(path))["components"].get(path, {})

    def touch(self, path: str) -> None:
        self.dirty.add(folder_of(path))

    def replace(self, path: str, kind: str, entries: dict[str, Entity]) -> None:
        grouped = self._folder(folder_of(path))[kind]
        if grouped.get(path, {}) == entries:
            return
        if entries:
            grouped[path] = entries
        else:
            grouped.pop(path, None)
        self.dirty.add(folder_of(path))

    def flat(self, folder: str, kind: str) -> dict[str, Entity]:
        out: dict[str, Entity] = {}
        for entries in self._folder(folder)[kind].values():
            out.update(entries)
        return out

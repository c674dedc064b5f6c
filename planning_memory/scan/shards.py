"""Sharded storage of entity memory: one small JSON file per source folder and kind.

``entity/<kind>/<source folder>/_shard.json`` holds the entities of the files directly in that
folder (``kind`` is ``files``, ``functions`` or ``components``; the repository root's shard is
``entity/<kind>/_shard.json``). A folder with more than ``SPLIT_AT`` source files is split into
``_shard-<n>.json`` buckets by a CRC-32 of the file name, so no shard grows past about a
megabyte. A shard is ``{"directory": ..., "<kind>": {key: entity}, "version": 1}``; keys are
repository paths (files) or ``<path>::<qualified name>`` (functions, components).

Folder names are kept as they are except that ``%`` is written ``%25`` and a name starting with
``_shard`` is written ``%5Fshard...``, so no source folder can collide with a shard file.
Shards are read with the fast standard ``json`` reader; a shard that does not parse (a merge
conflict) is reported and treated as absent, so the scan rebuilds it.
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from planning_memory import codec
from planning_memory.errors import InputError
from planning_memory.layout import Layout
from planning_memory.store import Store

KINDS = ("files", "functions", "components")
SHARD = "_shard"
SPLIT_AT = 400
VERSION = 1


def folder_of(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def file_of(key: str) -> str:
    """The source path part of an entity key (``path`` or ``path::name``)."""
    return key.split("::", 1)[0]


def _escape(segment: str) -> str:
    segment = segment.replace("%", "%25")
    return "%5F" + segment[1:] if segment.startswith(SHARD) else segment


def bucket_count(file_count: int) -> int:
    count = 1
    while file_count > SPLIT_AT * count:
        count *= 2
    return count


def shard_name(file_name: str, buckets: int) -> str:
    if buckets == 1:
        return SHARD + ".json"
    index = zlib.crc32(file_name.encode("utf-8", "surrogateescape")) % buckets
    return f"{SHARD}-{index:03d}.json"


class Shards:
    """Reads and writes the shards of one memory tree (writes go through ``Store``)."""

    def __init__(self, layout: Layout, store: Store) -> None:
        self.layout = layout
        self.store = store
        self.broken: list[str] = []

    def folder(self, kind: str, directory: str) -> Path:
        base = self.layout.entity / kind
        if not directory:
            return base
        return base.joinpath(*(_escape(s) for s in directory.split("/")))

    # -- reading -----------------------------------------------------------------------------
    def _read(self, path: Path) -> dict[str, Any] | None:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            return None
        try:
            value = json.loads(data)
        except ValueError:
            value = None
        if not isinstance(value, dict):
            self.broken.append(self.layout.relative(path))
            return None
        return value

    def _shard_files(self, folder: Path) -> list[Path]:
        try:
            names = os.listdir(folder)
        except (FileNotFoundError, NotADirectoryError):
            return []
        return [folder / n for n in sorted(names) if n.startswith(SHARD) and n.endswith(".json")]

    def load_dir(self, kind: str, directory: str) -> dict[str, dict[str, Any]]:
        """Entities of ``kind`` for the files directly in source folder ``directory``."""
        entries: dict[str, dict[str, Any]] = {}
        for path in self._shard_files(self.folder(kind, directory)):
            value = self._read(path)
            if value is not None and isinstance(value.get(kind), dict):
                entries.update(value[kind])
        return entries

    def iter_all(self, kind: str) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every ``(key, entity)`` of ``kind`` in the tree."""
        base = self.layout.entity / kind
        for folder, _dirs, names in os.walk(base):
            for name in sorted(names):
                if not (name.startswith(SHARD) and name.endswith(".json")):
                    continue
                value = self._read(Path(folder) / name)
                if value is not None and isinstance(value.get(kind), dict):
                    yield from value[kind].items()

    def load_all(self, kind: str) -> dict[str, dict[str, Any]]:
        return dict(self.iter_all(kind))

    # -- writing -----------------------------------------------------------------------------
    def write_dir(
        self, kind: str, directory: str, entries: dict[str, dict[str, Any]], file_count: int
    ) -> int:
        """Make the shards of ``directory`` hold exactly ``entries``; returns files changed."""
        folder = self.folder(kind, directory)
        buckets = bucket_count(file_count)
        grouped: dict[str, dict[str, dict[str, Any]]] = {}
        for key, entity in entries.items():
            name = file_of(key).rsplit("/", 1)[-1]
            grouped.setdefault(shard_name(name, buckets), {})[key] = entity
        changed = 0
        for name, group in sorted(grouped.items()):
            value = {"directory": directory or ".", kind: group, "version": VERSION}
            try:
                changed += self.store.write_json(folder / name, value)
            except InputError as exc:  # e.g. a source folder name that is not valid here
                self.broken.append(f"{self.layout.relative(folder / name)}: {exc.message}")
        for path in self._shard_files(folder):
            if path.name not in grouped:
                changed += self.store.delete(path)
        return changed


def dump_size(value: Any) -> int:
    return len(codec.dump_bytes(value))

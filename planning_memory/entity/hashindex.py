"""The hash index: a derived, gitignored cache of what a scan needs of every stored file.

Per shard folder it keeps the shard files' signature (size, mtime, inode), each file's
stored hash, its import links (``links_of``) and the files with parse errors, so that a
scan that changes a few files neither reads every shard to compare hashes, nor to know who
imports whom, nor to count the files with syntax errors. ``Shards.index`` reads it (and the
shards whose signature changed), ``Shards.save_index`` writes it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Entity = dict[str, Any]
VERSION = 3


def links_of(entity: Entity) -> list[list[str]]:
    """What the call graph needs of a file entity: ``[import targets, re-export targets]``
    (repository paths, sorted, without repeats: the same whether the entity comes from a
    worker or from a shard, whose keys are sorted)."""
    imports = entity.get("imports")
    if not imports:
        return [[], []]
    targets = sorted({t for t in imports.values() if t})
    reexported = entity.get("reexports")
    if not reexported:
        return [targets, []]
    return [targets, sorted({t for m in reexported if (t := imports.get(m))})]


@dataclass
class HashIndex:
    """Stored hash of every file (``None`` for an entry that only carries annotations), its
    import links (``links_of``) and whether it has parse errors, so that a scan that changes
    a few files neither reads every shard to compare hashes, nor to know who imports whom,
    nor to count the files with syntax errors."""

    # shard folder -> [signature, {path: hash}, {path: links}, [paths with parse errors]]
    # (files without links left out)
    folders: dict[str, list[Any]]
    stale: bool
    notes: dict[str, Any] = field(default_factory=dict)  # other derived state (coverage)

    @property
    def hashes(self) -> dict[str, str | None]:
        return {p: h for entry in self.folders.values() for p, h in entry[1].items()}

    def links(self) -> dict[str, list[list[str]]]:
        return {p: v for entry in self.folders.values() for p, v in entry[2].items()}

    def failed(self) -> list[str]:
        """Files stored with ``parse_errors``: syntax errors, or an extractor that failed."""
        return [p for entry in self.folders.values() for p in entry[3]]


def entry(signature: list[list[Any]], files: dict[str, Entity]) -> list[Any]:
    links = {}
    for path, entity in files.items():
        found = links_of(entity)
        if found[0]:
            links[path] = found
    failed = sorted(p for p, e in files.items() if e.get("parse_errors"))
    return [signature, {p: e.get("hash") for p, e in files.items()}, links, failed]


def signature(folder: Path | str, names: list[str]) -> list[list[Any]]:
    found = []
    for name in names:
        try:
            st = os.stat(os.path.join(folder, name))
        except OSError:
            continue
        found.append([name, st.st_size, st.st_mtime_ns, st.st_ino])
    return found


def parse(value: Any) -> tuple[dict[str, list[Any]], dict[str, Any]]:
    """The folders and notes of a decoded cache file; empty when it is not a valid one."""
    if not isinstance(value, dict) or value.get("version") != VERSION:
        return {}, {}
    folders = value.get("folders")
    notes = value.get("notes")
    if not isinstance(folders, dict) or not isinstance(notes, dict):
        return {}, {}
    valid = {
        k: v
        for k, v in folders.items()
        if isinstance(v, list)
        and len(v) == 4
        and isinstance(v[1], dict)
        and isinstance(v[2], dict)
        and isinstance(v[3], list)
    }
    return valid, notes

"""The code map's reverse look-ups, read once from its shards and kept current folder by folder.

Who imports a file, which components render a component, where a function of a bare name is
defined: each answer needs every folder of the map, which at 100k files is seconds of reading.
So the viewer reads the map once, in a job (with its progress line), into ``CodeIndex``:
importers per import target, parents per component name, the keys of each function and
component name. Each folder's part is kept apart, so a later look at the map re-reads only the
folders whose shard files changed (a walk of the shard tree's ``stat``s, at most every
``CHECK_EVERY_S``, in the background; pages answer from the index they have meanwhile).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from planning_memory.errors import PlanningMemoryError
from planning_memory.viewer.jobs import Job

if TYPE_CHECKING:
    from planning_memory.memory import Memory
    from planning_memory.viewer.reads import Reads

CHECK_EVERY_S = 5.0
SHARD = "_shard"
Signature = tuple[tuple[str, int, int, int], ...]


@dataclass(frozen=True)
class Part:
    """What one source folder puts in the index."""

    imports: dict[str, list[str]]  # file path -> what it imports (paths and folders)
    components: list[tuple[str, str, tuple[str, ...]]]  # (key, name, children)
    functions: list[tuple[str, tuple[str, ...]]]  # (key, the names it answers to)


@dataclass(frozen=True)
class CodeIndex:
    """Reverse look-ups over the whole code map (built by ``CodeIndexes``)."""

    importers: dict[str, list[str]] = field(default_factory=dict)
    parents: dict[str, list[str]] = field(default_factory=dict)
    components: dict[str, list[str]] = field(default_factory=dict)
    functions: dict[str, list[str]] = field(default_factory=dict)
    files: int = 0

    def imported_by(self, path: str) -> list[str]:
        """The files importing ``path`` or its folder (a package import names its folder,
        ``.`` the root)."""
        folder = path.rsplit("/", 1)[0] if "/" in path else "."
        found = {*self.importers.get(path, ()), *self.importers.get(folder, ())}
        found.discard(path)
        return sorted(found)


def _unescape(segment: str) -> str:
    """A shard folder's name as the source folder's (the map writes ``%`` as ``%25`` and a
    name starting with ``_shard`` as ``%5Fshard...``)."""
    segment = "_" + segment[3:] if segment.startswith("%5F") else segment
    return segment.replace("%25", "%")


def _names(key: str, entity: dict[str, Any]) -> tuple[str, ...]:
    qualified = key.split("::", 1)[1] if "::" in key else key
    return tuple(dict.fromkeys((key, str(entity.get("name") or qualified), qualified)))


def _part(mem: Memory, directory: str) -> Part | None:
    try:
        data = mem.code.folder(directory)
    except PlanningMemoryError:
        return None
    return Part(
        imports={f["path"]: list(f.get("depends_on", [])) for f in data["files"]},
        components=[
            (c["key"], str(c["name"]), tuple(c.get("children", []))) for c in data["components"]
        ],
        functions=[(f["key"], _names(f["key"], f)) for f in data["functions"]],
    )


class CodeIndexes:
    """The current ``CodeIndex`` of one memory, brought up to date in the background."""

    def __init__(self, reads: Reads) -> None:
        self.reads = reads
        self._parts: dict[str, Part] = {}  # source folder -> its part (the job's alone)
        self._signatures: dict[str, Signature] = {}

    def get(self) -> CodeIndex:
        """The index; ``Pending`` while the first one is read (later checks run behind the
        index already read)."""
        found: CodeIndex = self.reads.jobs.kept(
            "code-index", "Reading the code map", self._update, every=CHECK_EVERY_S
        )
        return found

    def _walk(self) -> dict[str, Signature]:
        """Each source folder with shard files, and their (name, size, mtime, inode)."""
        mem = self.reads.mem
        base = mem.layout.entity / "files"
        if not base.is_dir():
            return {}
        found: dict[str, Signature] = {}
        top = str(mem.store.check_inside(base))  # never a link out of the tree
        for folder, dirs, names in os.walk(top):  # never into a symlinked folder
            dirs.sort()
            shards = []
            for name in sorted(names):
                if not (name.startswith(SHARD) and name.endswith(".json")):
                    continue
                try:
                    st = os.stat(os.path.join(folder, name), follow_symlinks=False)
                except OSError:
                    continue
                shards.append((name, st.st_size, st.st_mtime_ns, st.st_ino))
            if shards:
                rel = os.path.relpath(folder, top)
                directory = "" if rel == "." else "/".join(map(_unescape, rel.split(os.sep)))
                found[directory] = tuple(shards)
        return found

    def _update(self, job: Job) -> CodeIndex:
        job.step("listing its folders")
        now = self._walk()
        changed = [d for d, sig in now.items() if self._signatures.get(d) != sig]
        for gone in set(self._parts) - set(now):
            del self._parts[gone]
        for done, directory in enumerate(changed):
            if done % 50 == 0:
                job.step("reading folders", done, len(changed))
            part = _part(self.reads.mem, directory)
            if part is None:
                self._parts.pop(directory, None)
            else:
                self._parts[directory] = part
        self._signatures = now
        latest = self.reads.jobs.latest("code-index:")
        if not changed and len(now) == len(self._parts) and latest is not None:
            return latest.value()  # type: ignore[no-any-return]
        job.step("indexing", len(changed), len(changed))
        return self._index()

    def _index(self) -> CodeIndex:
        importers: dict[str, list[str]] = {}
        parents: dict[str, list[str]] = {}
        components: dict[str, list[str]] = {}
        functions: dict[str, list[str]] = {}
        files = 0
        for part in self._parts.values():
            files += len(part.imports)
            for path, targets in part.imports.items():
                for target in targets:
                    importers.setdefault(target, []).append(path)
            for key, name, children in part.components:
                for alias in _names(key, {"name": name}):
                    components.setdefault(alias, []).append(key)
                for child in children:
                    parents.setdefault(child, []).append(name)
            for key, aliases in part.functions:
                for alias in aliases:
                    functions.setdefault(alias, []).append(key)
        return CodeIndex(importers, parents, components, functions, files)

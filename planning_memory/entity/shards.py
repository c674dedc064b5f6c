"""Sharded storage of entity memory: one small JSON file per source folder.

``entity/files/<source folder>/_shard.json`` holds the files directly in that folder with their
functions and components (the repository root's shard is ``entity/files/_shard.json``):

    {"directory": "src/lib/auth", "files": {path: entity},
     "functions": {"<path>::<qualified name>": entity},
     "components": {"<path>::<name>": entity}, "version": 1}

so a one-file change rewrites one shard. A folder with more than ``SPLIT_AT`` entities is split
into ``_shard-<n>.json`` buckets (a power of two of them) by a CRC-32 of the file name (a file's
functions and components share its bucket), so no shard grows past about a megabyte; when a
folder crosses a threshold its buckets are rewritten once. One source file's part is capped
(``capped``, ``capped_file``): a generated file keeps the start of its functions and lists.

Folder names are kept as they are except that ``%`` is written ``%25`` and a name starting with
``_shard`` is written ``%5Fshard...``, so no source folder can collide with a shard file.
Shards are read with orjson (``json`` for what it refuses); a shard that does not parse (a merge
conflict) is reported in ``broken`` and treated as absent, so the scan rebuilds it.

Writes go through ``Store.write_bytes`` with canonical bytes (``codec``): equal bytes are not
rewritten. They skip ``write_json``'s per-string redaction, which costs more than the whole
scan at 100k files; instead the scanner redacts the facts of any source file in which
``privacy.find_secrets`` finds something (``parsefile``), and annotations are redacted when
they are set (``query.update_file_annotations``).
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planning_memory.core import Layout, codec
from planning_memory.entity import hashindex
from planning_memory.entity.hashindex import HashIndex
from planning_memory.errors import InputError, NotFoundError, PlanningMemoryError, UnsafePathError
from planning_memory.store import Store

RELATIONSHIPS = "relationships.json"  # the feature areas, beside ``files/``
KINDS = ("files", "functions", "components")
ROOT = "files"
SHARD = "_shard"
SPLIT_AT = 2000  # entities (files + functions + components) per shard file, about 500 KB
VERSION = 1
Entity = dict[str, Any]
_FUNCTIONS_KEY = b'\n  "functions": '  # a top-level key in canonical text, nowhere else


# what one source file may put in its shard: a generated 50k-line file keeps the start of its
# functions instead of making a shard of several megabytes
FILE_BUDGET = 400_000  # bytes of compact JSON for its functions (or components): ~650 KB indented
FUNCTION_BUDGET = 32_000  # a function larger than this keeps its first MAX_CALLS calls
MAX_CALLS = 200
MAX_NAMES = 1000  # entries of each list (and of the imports) of its file entity
_FILE_LISTS = (
    "imports",
    "packages",
    "reexports",
    "exports",
    "classes",
    "components",
    "models",
    "types",
)


def folder_of(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def file_of(key: str) -> str:
    """The source path part of an entity key (``path`` or ``path::name``)."""
    return key.split("::", 1)[0]


def _escape(segment: str) -> str:
    segment = segment.replace("%", "%25")
    return "%5F" + segment[1:] if segment.startswith(SHARD) else segment


def _unescape(segment: str) -> str:
    segment = "_" + segment[3:] if segment.startswith("%5F") else segment
    return segment.replace("%25", "%")


def bucket_count(entities: int) -> int:
    count = 1
    while entities > SPLIT_AT * count:
        count *= 2
    return count


def shard_name(file_name: str, buckets: int) -> str:
    if buckets == 1:
        return SHARD + ".json"
    index = zlib.crc32(file_name.encode("utf-8", "surrogateescape")) % buckets
    return f"{SHARD}-{index:03d}.json"


@dataclass
class Shard:
    """The entities of one source folder."""

    files: dict[str, Entity] = field(default_factory=dict)
    functions: dict[str, Entity] = field(default_factory=dict)
    components: dict[str, Entity] = field(default_factory=dict)

    def kind(self, name: str) -> dict[str, Entity]:
        value: dict[str, Entity] = getattr(self, name)
        return value

    def update(self, value: dict[str, Any]) -> None:
        for name in KINDS:
            part = value.get(name)
            if isinstance(part, dict):
                self.kind(name).update(part)


def capped(entities: dict[str, Entity], budget: int = FILE_BUDGET) -> dict[str, Entity]:
    """The functions (or components) of one source file, in source order, up to ``budget``
    bytes of JSON (see ``FILE_BUDGET``). One JSON encoding when under budget (the case of
    nearly every file)."""
    if len(codec.compact_bytes(entities)) <= budget:
        return entities
    kept: dict[str, Entity] = {}
    for key, entity in entities.items():
        size = len(codec.compact_bytes(entity))
        if size > FUNCTION_BUDGET and len(entity.get("calls", ())) > MAX_CALLS:
            entity = {**entity, "calls": entity["calls"][:MAX_CALLS]}
            size = len(codec.compact_bytes(entity))
        budget -= len(key) + size + 4
        if budget < 0:
            break
        kept[key] = entity
    return kept


def capped_file(entity: Entity) -> Entity:
    """A file entity with each of its lists, and its imports, cut to ``MAX_NAMES`` entries."""
    long = [k for k in _FILE_LISTS if len(entity.get(k, ())) > MAX_NAMES]
    if not long:
        return entity
    cut = dict(entity)
    for key in long:
        value = entity[key]
        cut[key] = (
            dict(list(value.items())[:MAX_NAMES]) if isinstance(value, dict) else value[:MAX_NAMES]
        )
    return cut


def _document(directory: str, part: Shard) -> dict[str, Any]:
    value: dict[str, Any] = {"directory": directory or ".", "version": VERSION}
    for name in KINDS:
        if part.kind(name) or name == ROOT:
            value[name] = part.kind(name)
    return value


def _load_cache(store: Store, cache: Path) -> tuple[dict[str, list[Any]], dict[str, Any]]:
    try:
        value = codec.loads_lenient(store.read_bytes(cache))
    except UnsafePathError:
        raise  # a derived file, but a symlink out of the tree is refused all the same
    except (PlanningMemoryError, ValueError):
        return {}, {}
    return hashindex.parse(value)


class Shards:
    """Reads and writes the shards of one memory tree (writes go through ``Store``)."""

    def __init__(self, layout: Layout, store: Store) -> None:
        self.layout = layout
        self.store = store
        self.broken: list[str] = []
        self.changed: list[Path] = []  # shard files written or deleted, in order

    @property
    def base(self) -> Path:
        return self.layout.entity / ROOT

    def folder(self, directory: str) -> Path:
        if not directory:
            return self.base
        return self.base.joinpath(*(_escape(s) for s in directory.split("/")))

    # -- reading -----------------------------------------------------------------------------
    def read(self, path: Path) -> dict[str, Any] | None:
        """A JSON object file, or None when absent or unreadable (then noted in ``broken``)."""
        data = self._bytes(path)
        if data is None:
            return None
        try:
            value = codec.loads_lenient(data)
        except ValueError:
            value = None
        if not isinstance(value, dict):
            self._note(self.layout.relative(path))
            return None
        return value

    def _bytes(self, path: Path) -> bytes | None:
        """The bytes of a shard file, through the store (never through a symlink out of the
        tree, never from a FIFO); None when absent or refused (then noted in ``broken``)."""
        try:
            return self.store.read_bytes(path)
        except NotFoundError:
            return None
        except PlanningMemoryError as exc:
            self._note(exc.one_line())
            return None

    def _note(self, problem: str) -> None:
        if problem not in self.broken:
            self.broken.append(problem)

    def _shard_files(self, folder: Path) -> list[Path]:
        try:
            names = os.listdir(self.store.check_inside(folder))
        except (FileNotFoundError, NotADirectoryError):
            return []
        return [folder / n for n in self._shard_names(folder, names)]

    def _shard_names(self, folder: Path | str, names: list[str]) -> list[str]:
        """The shard files among ``names`` (in ``folder``), sorted; one whose name is not
        valid UTF-8 is warned about and left out (``Store.usable_name``)."""
        return sorted(
            n
            for n in names
            if n.startswith(SHARD) and n.endswith(".json") and self.store.usable_name(folder, n)
        )

    def _walk(self) -> Iterator[tuple[str, list[str]]]:
        """Each folder of the shard tree with its shard files (``_shard_names``). A folder
        whose name is not valid UTF-8 is left out the same way, and ``os.walk`` never enters
        a symlinked folder."""
        for folder, dirs, names in os.walk(self.store.check_inside(self.base)):
            dirs[:] = [d for d in dirs if self.store.usable_name(folder, d)]
            yield folder, self._shard_names(folder, names)

    def load_dir(self, directory: str) -> Shard:
        """The entities of the files directly in source folder ``directory``."""
        shard = Shard()
        for path in self._shard_files(self.folder(directory)):
            value = self.read(path)
            if value is not None:
                shard.update(value)
        return shard

    def directories(self) -> list[str]:
        """The source folders that have a shard (``""``: the repository root), sorted."""
        found = []
        for folder, names in self._walk():
            if names:
                rel = os.path.relpath(folder, self.base)
                found.append("" if rel == "." else "/".join(map(_unescape, rel.split(os.sep))))
        return sorted(found)

    def iter_shards(self) -> Iterator[Shard]:
        """Every folder's shard (buckets separately), in no particular order."""
        for folder, names in self._walk():
            for name in names:
                value = self.read(Path(folder) / name)
                if value is not None:
                    shard = Shard()
                    shard.update(value)
                    yield shard

    def iter_kind(self, kind: str) -> Iterator[tuple[str, Entity]]:
        for shard in self.iter_shards():
            yield from shard.kind(kind).items()

    def load_dir_files(self, directory: str) -> dict[str, Entity]:
        """The file entities of source folder ``directory`` (functions not decoded)."""
        folder = self.folder(directory)
        return self._heads(folder, [p.name for p in self._shard_files(folder)])

    def _heads(self, folder: Path, names: list[str]) -> dict[str, Entity]:
        files: dict[str, Entity] = {}
        for name in names:
            value = self._read_head(folder / name)
            if value is not None and isinstance(value.get(ROOT), dict):
                files.update(value[ROOT])
        return files

    def load_files(self) -> dict[str, Entity]:
        """Every file entity in the tree. Only the part of each shard before ``"functions"``
        is decoded when the shard is canonical (keys sorted: ``components``, ``directory``,
        ``files`` come first), which makes a warm rescan read a third of the JSON."""
        files: dict[str, Entity] = {}
        for folder, names in self._walk():
            for name in names:
                value = self._read_head(Path(folder) / name)
                if value is not None and isinstance(value.get(ROOT), dict):
                    files.update(value[ROOT])
        return files

    def _read_head(self, path: Path) -> dict[str, Any] | None:
        data = self._bytes(path)
        if data is None:
            return None
        cut = data.find(_FUNCTIONS_KEY)
        if cut > 0 and data[cut - 1 : cut] == b",":
            try:
                value = codec.loads_lenient(data[: cut - 1] + b"\n}")
            except ValueError:
                value = None
            if isinstance(value, dict) and isinstance(value.get(ROOT), dict):
                return value
        return self.read(path)

    # -- the hash index: a derived, gitignored cache of each file's stored hash --------------
    def index(self, cache: Path) -> HashIndex:
        """Each stored file's hash, from ``cache`` for folders whose shard files have the size,
        mtime and inode recorded there, from the shards themselves for the others."""
        recorded, notes = _load_cache(self.store, cache)
        folders: dict[str, list[Any]] = {}
        stale = False
        for folder, shard_names in self._walk():
            if not shard_names:
                continue
            rel = os.path.relpath(folder, self.base)
            signature = hashindex.signature(Path(folder), shard_names)
            entry = recorded.get(rel)
            if entry is not None and entry[0] == signature:
                folders[rel] = entry
                continue
            stale = True
            files = self._heads(Path(folder), shard_names)
            folders[rel] = hashindex.entry(signature, files)
        stale = stale or recorded.keys() != folders.keys()
        return HashIndex(folders, stale, notes)

    def save_index(
        self, cache: Path, index: HashIndex, written: dict[str, dict[str, Entity]]
    ) -> None:
        """Record ``written`` (source folder -> its file entities, as just written) in the
        index and store it when anything changed."""
        base = str(self.base)
        for directory, files in written.items():
            # the folder as ``index`` names it (``os.walk`` relative to the base), as text:
            # thousands of folders after a cold scan
            rel = os.sep.join(_escape(p) for p in directory.split("/")) if directory else "."
            folder = os.path.join(base, rel)
            try:
                listed = os.listdir(self.store.check_inside(Path(folder)))
            except (FileNotFoundError, NotADirectoryError):
                listed = []
            names = self._shard_names(folder, listed)
            if names:
                index.folders[rel] = hashindex.entry(hashindex.signature(folder, names), files)
            else:
                index.folders.pop(rel, None)
            index.stale = True
        if index.stale:
            value = {"version": hashindex.VERSION, "folders": index.folders, "notes": index.notes}
            self.store.write_bytes(cache, codec.compact_bytes(value))

    # -- writing -----------------------------------------------------------------------------
    def encode(self, directory: str, shard: Shard) -> dict[str, bytes]:
        """Canonical bytes of each shard file of ``directory`` (one per bucket; none for a
        folder without entities: its shard files are deleted, as a fresh scan never writes
        them)."""
        entities = len(shard.files) + len(shard.functions) + len(shard.components)
        if not entities:
            return {}
        buckets = bucket_count(entities)
        if buckets == 1:  # the common case: one file, no grouping
            return {shard_name("", 1): codec.dump_bytes(_document(directory, shard))}
        grouped: dict[str, Shard] = {}
        for name in KINDS:
            for key, entity in shard.kind(name).items():
                base = file_of(key).rsplit("/", 1)[-1]
                grouped.setdefault(shard_name(base, buckets), Shard()).kind(name)[key] = entity
        return {
            name: codec.dump_bytes(_document(directory, part)) for name, part in grouped.items()
        }

    def write_dir(self, directory: str, shard: Shard) -> int:
        """Make the shard files of ``directory`` hold exactly ``shard``; returns files changed."""
        return self.write_encoded(directory, self.encode(directory, shard))

    def write_encoded(self, directory: str, encoded: dict[str, bytes]) -> int:
        folder = self.folder(directory)
        changed = 0
        for name, data in sorted(encoded.items()):
            try:
                if self.store.write_bytes(folder / name, data):
                    changed += 1
                    self.changed.append(folder / name)
            except InputError as exc:  # e.g. a folder name this file system refuses
                self.broken.append(f"{self.layout.relative(folder / name)}: {exc.message}")
        for path in self._shard_files(folder):
            if path.name not in encoded and self.store.delete(path):
                changed += 1
                self.changed.append(path)
        return changed

"""The incremental scan: list files, parse the changed ones, update the sharded entity tree.

1. List files (``walk``): inside git the index vouches for unchanged files' hashes, so they are
   not even opened; elsewhere every source file is read and hashed.
2. Compare with the stored hashes (``shards.HashIndex``: a derived cache in ``contextual/``,
   rebuilt from the shards when absent or stale). Nothing changed: done, no shard read.
3. Parse the rest (``pool``), resolving imports in the workers; resolve again only when files
   came or went; merge props types imported from another file into components (``proptypes``:
   a file whose imported props types changed is parsed again); apply coverage when a report
   exists; update ``called_by`` where it can have changed (``callgraph``); recompute feature
   areas when their inputs changed (``areas``).
4. Write only the shards whose content changed (equal bytes are left alone), all under the
   memory lock.
"""

from __future__ import annotations

import gc
import os
import posixpath
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planning_memory.core import Layout
from planning_memory.entity import (
    areas,
    callgraph,
    coverage,
    entities,
    parsefile,
    pool,
    proptypes,
    resolve,
    walk,
)
from planning_memory.entity.filetable import FileTable
from planning_memory.entity.languages import language_for
from planning_memory.entity.settings import Settings
from planning_memory.entity.shards import HashIndex, Shard, Shards, capped, capped_file, folder_of
from planning_memory.entity.symbols import Symbols
from planning_memory.errors import UnsafePathError
from planning_memory.store import Store

Entity = dict[str, Any]
Progress = Callable[[int, int], None]
RELATIONSHIPS = "relationships.json"
HASH_INDEX = "entity-hashes.json"  # under contextual/: derived, gitignored, rebuilt when absent
SYNTAX_ERRORS = "syntax errors (partial results)"


@dataclass(frozen=True)
class ScanReport:
    """What one scan did. ``unchanged`` counts source files skipped because their hash matched;
    ``skipped_ignored`` counts files and folders dropped by ignore rules (an ignored folder
    counts once: its contents are never listed); ``errors`` counts files with syntax errors or
    that could not be parsed, plus unreadable shards: every file the map knows in that state,
    not only those parsed by this scan (a warm rescan of a broken file still reports it)."""

    files_seen: int
    parsed: int
    unchanged: int
    removed: int
    skipped_binary: int
    skipped_large: int
    skipped_ignored: int
    errors: int
    shards_written: int
    seconds: float
    error_paths: tuple[str, ...] = ()
    phases: tuple[tuple[str, float], ...] = ()  # seconds spent per step, for benchmarks


@dataclass
class _Run:
    """Mutable state of one scan."""

    layout: Layout
    store: Store
    settings: Settings
    full: bool
    shards: Shards
    index: HashIndex
    symbols: Symbols
    table: FileTable
    active: bool = False  # something changed: derived facts must be brought up to date
    dirty: set[str] = field(default_factory=set)  # folders whose shard must be rebuilt
    changed: set[str] = field(default_factory=set)  # paths whose functions may have changed
    parsed: set[str] = field(default_factory=set)
    fresh: set[str] = field(default_factory=set)
    counts: dict[str, int] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)  # path -> what went wrong, this scan
    sources: frozenset[str] = frozenset()  # source files the workers resolve imports against
    written: dict[str, dict[str, Entity]] = field(default_factory=dict)  # folder -> files

    def count(self, name: str, by: int = 1) -> None:
        self.counts[name] = self.counts.get(name, 0) + by

    def set_file(self, path: str, entity: Entity | None) -> None:
        if self.table.put(path, entity):
            self.dirty.add(folder_of(path))


# -- entry point ---------------------------------------------------------------------------
def scan(
    layout: Layout,
    store: Store,
    config: dict[str, Any],
    *,
    paths: list[str] | None = None,
    progress: Progress | None = None,
    full: bool = False,
) -> ScanReport:
    """Bring the entity memory of ``layout``'s repository up to date with its files.

    ``paths`` limits the work to those files or folders (the daemon's hint); ``full`` parses
    every file again instead of trusting stored hashes.

    The cyclic garbage collector is paused for the scan (restored after): a cold scan builds
    millions of small dicts and lists that live until the end, which the collector would
    otherwise traverse again and again; the scan creates no reference cycles worth collecting.
    Parse workers turn it back on for themselves.
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        return _scan(layout, store, config, paths=paths, progress=progress, full=full)
    finally:
        if paused:
            gc.enable()


def _scan(
    layout: Layout,
    store: Store,
    config: dict[str, Any],
    *,
    paths: list[str] | None,
    progress: Progress | None,
    full: bool,
) -> ScanReport:
    started = time.perf_counter()
    settings = Settings.from_config(config)
    root = layout.repo_root
    scope = _scope(root, paths)
    rules = walk.Rules.from_patterns(settings.include, settings.exclude)
    clock = _Clock()
    listing = walk.discover(root, rules, paths=scope, use_git=settings.use_git)
    clock.lap("list")
    with store.lock():
        shards = Shards(layout, store)
        cache = layout.contextual / HASH_INDEX
        index = shards.index(cache)
        stored = index.hashes
        table = FileTable(shards, stored, index.links())
        symbols = Symbols(shards, {folder_of(p) for p in stored})
        run = _Run(layout, store, settings, full, shards, index, symbols, table)
        jobs = _plan(run, listing, scope)
        clock.lap("load")
        setup = (str(layout.repo_root), run.sources)
        for result in pool.parse(jobs, settings, setup, progress):
            _apply(run, result)
        clock.lap("parse")
        if _must_refresh(run):  # always called: it records the coverage reports seen
            run.active = True
        written = _update(run, clock) if run.active else 0
        shards.save_index(cache, run.index, run.written)
    failed = sorted(set(run.index.failed()) | run.errors.keys())
    counts = run.counts
    return ScanReport(
        files_seen=len(listing.files),
        parsed=counts.get("parsed", 0),
        unchanged=counts.get("unchanged", 0),
        removed=counts.get("removed", 0),
        skipped_binary=counts.get("binary", 0),
        skipped_large=counts.get("large", 0),
        skipped_ignored=listing.ignored,
        errors=len(failed) + len(shards.broken),
        shards_written=written,
        seconds=round(time.perf_counter() - started, 3),
        error_paths=tuple(
            [f"{p}: {run.errors.get(p, SYNTAX_ERRORS)}" for p in failed[:50]] + shards.broken[:50]
        ),
        phases=tuple(clock.laps),
    )


class _Clock:
    def __init__(self) -> None:
        self.last = time.perf_counter()
        self.laps: list[tuple[str, float]] = []

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.laps.append((name, round(now - self.last, 3)))
        self.last = now


def _must_refresh(run: _Run) -> bool:
    """Whether a scan that found no changed file must still recompute derived facts: a full
    scan, no relationships.json, or coverage reports that changed since the last scan."""
    reports = coverage.find_reports(run.layout.repo_root, run.settings.coverage_reports)
    seen = [[str(p), *_stat(p)] for p in reports]
    if run.index.notes.get("coverage", []) != seen:
        run.index.notes["coverage"] = seen
        run.index.stale = True
        return True
    return run.full or not (run.layout.entity / RELATIONSHIPS).exists()


def _stat(path: Path) -> list[int]:
    try:
        st = path.stat()
    except OSError:
        return []
    return [st.st_size, st.st_mtime_ns]


def _update(run: _Run, clock: _Clock) -> int:
    _resolve_imports(run)
    _imported_props(run)
    _apply_coverage(run)
    clock.lap("resolve")
    before, after = run.table.graph_views()
    old_graph, new_graph = callgraph.Graph(before), callgraph.Graph(after)

    def link() -> None:
        callgraph.update(old_graph, new_graph, run.symbols, run.changed, run.fresh)

    relationships = _areas_beside(run, link)
    clock.lap("called_by")
    return _write(run, clock, relationships)


PARALLEL_AREAS = 5000  # files from which areas are derived in a forked child


def _areas_beside(run: _Run, work: Callable[[], None]) -> dict[str, Any] | None:
    """Run ``work`` (``called_by``) and derive the relationships document to write (None:
    areas cannot have changed). Areas depend on the file entities only, which ``work``
    leaves alone, so on a large run a forked child derives them on the other core while
    ``work`` runs here."""
    global _deriving
    if len(run.table.changes) < PARALLEL_AREAS or not pool.can_fork():
        work()
        return _relationships(run)
    _deriving = run
    try:
        ((document, broken),) = pool.forked(_derive_in_child, [[]], 1, work)
    finally:
        _deriving = None
    run.shards.broken.extend(b for b in broken if b not in run.shards.broken)
    return document


_deriving: _Run | None = None  # read by the forked child of ``_areas_beside``


def _derive_in_child(_unused: list[None]) -> tuple[dict[str, Any] | None, list[str]]:
    assert _deriving is not None
    return _relationships(_deriving), _deriving.shards.broken


def _scope(root: Path, paths: list[str] | None) -> list[str] | None:
    if paths is None:
        return None
    scope = []
    for raw in paths:
        path = Path(raw)
        if path.is_absolute():
            try:
                path = path.resolve().relative_to(root.resolve())
            except ValueError:
                raise UnsafePathError("path is outside the repository", path=raw) from None
        text = posixpath.normpath(path.as_posix())
        if text.startswith("../") or text == "..":
            raise UnsafePathError("path is outside the repository", path=raw)
        scope.append("" if text == "." else text)
    return [] if not scope else (None if "" in scope else scope)


# -- planning and parsing ------------------------------------------------------------------
def _plan(run: _Run, listing: walk.Listing, scope: list[str] | None) -> list[parsefile.Job]:
    base = str(run.layout.repo_root) + os.sep
    stored = run.table.stored
    listed: set[str] = set()
    sources: set[str] = set()  # listed files in a scanned language
    unchanged = 0
    jobs: list[parsefile.Job] = []
    for item in listing.files:
        listed.add(item.path)
        language = language_for(item.path)
        if language is None:
            continue
        sources.add(item.path)
        known = stored.get(item.path)
        if not run.full and known and item.git_hash == known:
            unchanged += 1
            continue
        jobs.append(
            {
                "path": item.path,
                "location": base + item.path,
                "language": language,
                "git_hash": item.git_hash,
                "known": None if run.full else known,
                "max_bytes": run.settings.max_file_bytes,
            }
        )
    if scope is None:
        in_scope: set[str] = set(stored)
    else:
        wanted, prefixes = set(scope), tuple(p + "/" for p in scope)
        in_scope = {p for p in stored if p in wanted or p.startswith(prefixes)}
    run.count("unchanged", unchanged)
    run.sources = frozenset({p for p, h in stored.items() if h and p not in in_scope} | sources)
    for path, known in stored.items():
        if path not in in_scope:
            continue
        if path not in listed:
            _drop(run, path, keep_annotations=False)
        elif known and path not in sources:  # listed, but no longer a scanned language
            _drop(run, path, keep_annotations=True)
    return jobs


def _apply(run: _Run, result: parsefile.Parsed) -> None:
    path, status = result["path"], result["status"]
    if status == "same":
        run.count("unchanged")
        return
    run.active = True
    if status in ("binary", "large", "gone"):
        if status != "gone":
            run.count(status)
        _drop(run, path, keep_annotations=status != "gone")
        return
    entity = capped_file(result.get("file") or _failed_entity(path, result.get("hash", "")))
    if status == "error":
        run.errors[path] = result.get("error", "extractor failed")
    elif entity.get("parse_errors"):
        run.errors[path] = SYNTAX_ERRORS
    run.set_file(path, entities.carry(entity, run.table.old(path)))
    run.count("parsed")
    run.parsed.add(path)
    run.changed.add(path)
    functions = capped(result.get("functions") or {})
    old_functions = run.symbols.of(path)
    if old_functions:  # else nothing to carry over (a new file, a cold scan): all fresh
        functions = {
            key: entities.carry(fn, old_functions.get(key), keep=("called_by",))
            for key, fn in functions.items()
        }
        run.fresh.update(k for k in functions if k not in old_functions)
    else:
        run.fresh.update(functions)
    run.symbols.replace(path, "functions", functions)
    components = capped(result.get("components") or {})
    old_components = run.symbols.components_of(path)
    if old_components:
        components = {
            key: entities.carry(c, old_components.get(key)) for key, c in components.items()
        }
    run.symbols.replace(path, "components", components)


def _failed_entity(path: str, digest: str) -> Entity:
    return {"language": language_for(path), "hash": digest, "parse_errors": True}


def _drop(run: _Run, path: str, *, keep_annotations: bool) -> None:
    run.active = True
    old = run.table.get(path)
    if old is None:
        return
    kept = entities.annotation_only(old) if keep_annotations else None
    if old.get("language"):
        run.count("removed")
    run.set_file(path, kept)
    run.changed.add(path)
    run.symbols.replace(path, "functions", {})
    run.symbols.replace(path, "components", {})


# -- imports, coverage ---------------------------------------------------------------------
def _resolve_imports(run: _Run) -> None:
    """Resolve what the workers could not: every file when the set of source files differs
    from the one they resolved against, or unchanged files when files came or went."""
    sources = run.table.sources()
    before = run.table.sources(before=True)
    if sources != run.sources:
        targets = sources
    elif sources != before:
        targets = sources - run.parsed
    else:
        return
    if not targets:
        return
    root = str(run.layout.repo_root)
    context = resolve.build_context(sources, lambda rel: parsefile.read_config(root, rel))
    for path in sorted(targets):
        entity = run.table[path]
        run.set_file(path, parsefile.resolved(entity, path, context))


def _imported_props(run: _Run) -> None:
    """Parse again the files whose components' imported props types changed (``proptypes``),
    against the final source set, then merge those types into every parsed file's
    components."""
    again = proptypes.dependents(run.table, run.symbols, run.parsed)
    if again:
        base = str(run.layout.repo_root) + os.sep
        jobs: list[parsefile.Job] = [
            {
                "path": path,
                "location": base + path,
                "language": str(run.table[path].get("language")),
                "git_hash": None,
                "known": None,
                "max_bytes": run.settings.max_file_bytes,
            }
            for path in again
        ]
        setup = (str(run.layout.repo_root), run.table.sources())
        run.count("unchanged", -len(jobs))  # counted when planned: parsed now
        for result in pool.parse(jobs, run.settings, setup, None):
            _apply(run, result)
    proptypes.merge(sorted(run.parsed), run.table, run.symbols)


def _apply_coverage(run: _Run) -> None:
    root = run.layout.repo_root
    reports = coverage.find_reports(root, run.settings.coverage_reports)
    if not reports:
        return
    sources = run.table.sources()
    percent = coverage.load_reports(root, reports, sources)
    for path in sorted(sources):
        entity = run.table[path]
        wanted = percent.get(path)
        if entity.get("test_coverage") == wanted:
            continue
        updated = {k: v for k, v in entity.items() if k != "test_coverage"}
        if wanted is not None:
            updated["test_coverage"] = wanted
        run.set_file(path, updated)


# -- writing -------------------------------------------------------------------------------
def _write(run: _Run, clock: _Clock, document: dict[str, Any] | None) -> int:
    folders = sorted(run.dirty | run.symbols.dirty)
    by_folder = run.table.by_folder(set(folders))
    global _writing
    _writing = (run, by_folder)
    try:
        written = _flush(folders, run)
    finally:
        _writing = None
    run.written.update(by_folder)
    clock.lap("write")
    if document is not None:
        written += int(run.store.write_json(run.layout.entity / RELATIONSHIPS, document))
    clock.lap("areas")
    return written


_writing: tuple[_Run, dict[str, dict[str, Entity]]] | None = None  # read by forked writers
PARALLEL_WRITE = 200  # folders to write before encoding and writing move to forked workers


def _flush(folders: list[str], run: _Run) -> int:
    """Encode and write the shards of ``folders``; returns the files changed. With many
    folders, forked workers do it: their fsyncs overlap, which is where a cold scan's write
    time goes. Each writes through its inherited copy of the ``Store``; the files they changed
    are told to the parent's store (``written_elsewhere``), so its ``on_write`` hears of them."""
    if len(folders) < PARALLEL_WRITE or not pool.can_fork():
        return sum(_write_folder(folder) for folder in folders)
    writers = max(2, min(8, 2 * (os.cpu_count() or 1)))
    size = max(8, len(folders) // (writers * 4))
    chunks = [folders[i : i + size] for i in range(0, len(folders), size)]
    written = 0
    for count, broken, changed in pool.forked(_write_chunk, chunks, writers):
        written += count
        run.shards.broken.extend(b for b in broken if b not in run.shards.broken)
        run.shards.changed.extend(Path(p) for p in changed)
        run.store.written_elsewhere(Path(p) for p in changed)
    return written


def _write_chunk(folders: list[str]) -> tuple[int, list[str], list[str]]:
    assert _writing is not None
    shards = _writing[0].shards
    shards.changed = []
    written = sum(_write_folder(folder) for folder in folders)
    return written, shards.broken, [str(p) for p in shards.changed]


def _write_folder(folder: str) -> int:
    assert _writing is not None
    run, by_folder = _writing
    shard = Shard(
        files=by_folder[folder],
        functions=run.symbols.flat(folder, "functions"),
        components=run.symbols.flat(folder, "components"),
    )
    return run.shards.write_dir(folder, shard)


_AREA_INPUTS = ("language", "imports", "components", "classes", "models")


def _areas_may_change(run: _Run) -> bool:
    """Whether anything areas are derived from (paths, imports, components, classes,
    models) differs from the last scan."""
    if run.full:
        return True
    for path in run.table.changed_paths():
        entity, old = run.table.get(path), run.table.old(path)
        if entity is None or old is None:  # a file came or went
            return True
        if any(entity.get(k) != old.get(k) for k in _AREA_INPUTS):
            return True
    return False


def _relationships(run: _Run) -> dict[str, Any] | None:
    """The relationships document to write, or None when areas cannot have changed."""
    target = run.layout.entity / RELATIONSHIPS
    if target.exists() and not _areas_may_change(run):
        return None
    existing = run.shards.read(target) if target.exists() else None
    sources = {p: e for p, e in run.table.everything().items() if e.get("language")}
    return areas.merge(areas.derive(sources), existing)

"""The incremental scan: list files, parse the changed ones, update the sharded entity tree.

1. List files (``walk``): inside git the index vouches for unchanged files' hashes, so they are
   not even opened; elsewhere every source file is read and hashed.
2. Files whose hash equals the one stored in their shard are skipped; the rest are parsed, in a
   process pool when there are at least ``parallelThreshold`` of them.
3. Imports are resolved (all files when files were added or removed, else the parsed ones),
   coverage is applied when a report exists, ``called_by`` is updated where it can have
   changed (``callgraph``), and feature areas are recomputed when anything changed.
4. Only the shards whose content changed are written (``Store.write_json`` leaves equal bytes
   alone), all under the memory lock.
"""

from __future__ import annotations

import multiprocessing
import os
import posixpath
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planning_memory.errors import ConfigError, UnsafePathError
from planning_memory.layout import Layout
from planning_memory.scan import areas, callgraph, coverage, entities, parsefile, resolve, walk
from planning_memory.scan.languages import language_for
from planning_memory.scan.shards import Shard, Shards, file_of, folder_of
from planning_memory.store import Store

Entity = dict[str, Any]
Progress = Callable[[int, int], None]
DEFAULT_MAX_FILE_BYTES = 1_000_000
DEFAULT_PARALLEL_THRESHOLD = 200
RELATIONSHIPS = "relationships.json"
_CONFIG_FILE_LIMIT = 1_000_000


@dataclass(frozen=True)
class ScanReport:
    """What one scan did. ``unchanged`` counts source files skipped because their hash matched;
    ``skipped_ignored`` counts files and folders dropped by ignore rules (an ignored folder
    counts once: its contents are never listed); ``errors`` counts files with syntax errors or
    that could not be parsed, plus unreadable shards."""

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


@dataclass(frozen=True)
class Settings:
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    coverage_reports: tuple[str, ...] | None = None
    workers: int = 0  # 0: one per CPU
    parallel_threshold: int = DEFAULT_PARALLEL_THRESHOLD
    use_git: bool = True

    @classmethod
    def from_config(cls, config: dict[str, Any] | None) -> Settings:
        memory = (config or {}).get("memory", {})
        entity = memory.get("entity", {}) if isinstance(memory, dict) else {}
        if not isinstance(entity, dict):
            raise ConfigError("memory.entity must be an object", json_path="$.memory.entity")
        reports = entity.get("coverageReports")
        return cls(
            include=_strings(entity, "includePatterns"),
            exclude=_strings(entity, "excludePatterns"),
            max_file_bytes=_int(entity, "maxFileBytes", DEFAULT_MAX_FILE_BYTES),
            coverage_reports=None if reports is None else _strings(entity, "coverageReports"),
            workers=_int(entity, "scanWorkers", 0),
            parallel_threshold=_int(entity, "parallelThreshold", DEFAULT_PARALLEL_THRESHOLD),
            use_git=bool(entity.get("useGit", True)),
        )


def _strings(entity: dict[str, Any], key: str) -> tuple[str, ...]:
    value = entity.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{key} must be a list of strings", json_path=f"$.memory.entity.{key}")
    return tuple(value)


def _int(entity: dict[str, Any], key: str, default: int) -> int:
    value = entity.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ConfigError(
            f"{key} must be a non-negative integer", json_path=f"$.memory.entity.{key}"
        )
    return value


# -- functions and components, loaded per folder on demand --------------------------------
class _Symbols:
    """Functions and components grouped by folder then file; ``of``/``touch`` make it the
    ``callgraph.Functions`` of a scan."""

    def __init__(self, shards: Shards) -> None:
        self.shards = shards
        self.folders: dict[str, dict[str, dict[str, dict[str, Entity]]]] = {}
        self.dirty: set[str] = set()

    def _folder(self, folder: str) -> dict[str, dict[str, dict[str, Entity]]]:
        grouped = self.folders.get(folder)
        if grouped is None:
            shard = self.shards.load_dir(folder)
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


@dataclass
class _Run:
    """Mutable state of one scan."""

    layout: Layout
    store: Store
    settings: Settings
    full: bool
    shards: Shards
    old_files: dict[str, Entity]
    files: dict[str, Entity]
    symbols: _Symbols
    dirty: set[str] = field(default_factory=set)  # folders whose shard must be rebuilt
    changed: set[str] = field(default_factory=set)  # paths whose functions may have changed
    parsed: set[str] = field(default_factory=set)
    fresh: set[str] = field(default_factory=set)
    counts: dict[str, int] = field(default_factory=dict)
    error_paths: list[str] = field(default_factory=list)

    def count(self, name: str, by: int = 1) -> None:
        self.counts[name] = self.counts.get(name, 0) + by

    def set_file(self, path: str, entity: Entity | None) -> None:
        if entity is None:
            if self.files.pop(path, None) is not None:
                self.dirty.add(folder_of(path))
        elif self.files.get(path) != entity:
            self.files[path] = entity
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
    """
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
        old_files = shards.load_files()
        run = _Run(
            layout, store, settings, full, shards, old_files, dict(old_files), _Symbols(shards)
        )
        jobs = _plan(run, listing, scope)
        clock.lap("load")
        for result in _execute(jobs, settings, progress):
            _apply(run, result)
        clock.lap("parse")
        _resolve_imports(run)
        _apply_coverage(run)
        clock.lap("resolve")
        old_graph, new_graph = callgraph.Graph(old_files), callgraph.Graph(run.files)
        callgraph.update(old_graph, new_graph, run.symbols, run.changed, run.fresh)
        clock.lap("called_by")
        written = _write(run, clock)
    counts = run.counts
    return ScanReport(
        files_seen=len(listing.files),
        parsed=counts.get("parsed", 0),
        unchanged=counts.get("unchanged", 0),
        removed=counts.get("removed", 0),
        skipped_binary=counts.get("binary", 0),
        skipped_large=counts.get("large", 0),
        skipped_ignored=listing.ignored,
        errors=counts.get("errors", 0) + len(shards.broken),
        shards_written=written,
        seconds=round(time.perf_counter() - started, 3),
        error_paths=tuple(run.error_paths[:50] + shards.broken[:50]),
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


def _in_scope(path: str, scope: list[str] | None) -> bool:
    return scope is None or any(path == p or path.startswith(p + "/") for p in scope)


# -- planning and parsing ------------------------------------------------------------------
def _plan(run: _Run, listing: walk.Listing, scope: list[str] | None) -> list[parsefile.Job]:
    root = run.layout.repo_root
    listed: set[str] = set()
    jobs: list[parsefile.Job] = []
    for item in listing.files:
        listed.add(item.path)
        language = language_for(item.path)
        if language is None:
            continue
        old = run.old_files.get(item.path)
        known = old.get("hash") if old and old.get("language") else None
        if not run.full and known and item.git_hash == known:
            run.count("unchanged")
            continue
        jobs.append(
            {
                "path": item.path,
                "location": str(root / item.path),
                "language": language,
                "git_hash": item.git_hash,
                "known": None if run.full else known,
                "max_bytes": run.settings.max_file_bytes,
            }
        )
    for path, old in run.old_files.items():
        if not _in_scope(path, scope):
            continue
        if path not in listed:
            _drop(run, path, keep_annotations=False)
        elif language_for(path) is None and old.get("language"):
            _drop(run, path, keep_annotations=True)
    return jobs


def _execute(
    jobs: list[parsefile.Job], settings: Settings, progress: Progress | None
) -> Iterator[parsefile.Parsed]:
    total = len(jobs)
    workers = settings.workers or os.cpu_count() or 1
    if total < max(settings.parallel_threshold, 1) or workers < 2:
        for done, job in enumerate(jobs, 1):
            yield parsefile.run(job)
            if progress is not None and (done % 64 == 0 or done == total):
                progress(done, total)
        return
    size = max(16, min(256, total // (workers * 8)))
    batches = [jobs[i : i + size] for i in range(0, total, size)]
    done = 0
    with ProcessPoolExecutor(max_workers=workers, mp_context=_context()) as pool:
        for batch in pool.map(parsefile.run_batch, batches):
            yield from batch
            done += len(batch)
            if progress is not None:
                progress(done, total)


def _context() -> multiprocessing.context.BaseContext:
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        return multiprocessing.get_context("forkserver")
    return multiprocessing.get_context("spawn")


def _apply(run: _Run, result: parsefile.Parsed) -> None:
    path, status = result["path"], result["status"]
    if status == "same":
        run.count("unchanged")
        return
    if status in ("binary", "large", "gone"):
        if status != "gone":
            run.count(status)
        _drop(run, path, keep_annotations=status != "gone")
        return
    entity = result.get("file") or _failed_entity(path, result.get("hash", ""))
    if status == "error":
        run.error_paths.append(f"{path}: {result.get('error', 'extractor failed')}")
        run.count("errors")
    elif entity.get("parse_errors"):
        run.error_paths.append(f"{path}: syntax errors (partial results)")
        run.count("errors")
    run.set_file(path, entities.carry(entity, run.old_files.get(path)))
    run.count("parsed")
    run.parsed.add(path)
    run.changed.add(path)
    old_functions = run.symbols.of(path)
    functions = {
        key: entities.carry(fn, old_functions.get(key), keep=("called_by",))
        for key, fn in (result.get("functions") or {}).items()
    }
    run.fresh.update(k for k in functions if k not in old_functions)
    run.symbols.replace(path, "functions", functions)
    old_components = run.symbols.components_of(path)
    components = {
        key: entities.carry(c, old_components.get(key))
        for key, c in (result.get("components") or {}).items()
    }
    run.symbols.replace(path, "components", components)


def _failed_entity(path: str, digest: str) -> Entity:
    return {"language": language_for(path), "hash": digest, "parse_errors": True}


def _drop(run: _Run, path: str, *, keep_annotations: bool) -> None:
    old = run.files.get(path)
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
    root = run.layout.repo_root
    sources = {p for p, e in run.files.items() if e.get("language")}
    before = {p for p, e in run.old_files.items() if e.get("language")}
    everything = run.full or sources != before
    targets = sorted(sources if everything else run.parsed & sources)
    if not targets:
        return
    ctx = resolve.build_context(sources, lambda rel: _read_config(root, rel))
    for path in targets:
        entity = run.files[path]
        language = str(entity.get("language"))
        imports: dict[str, str | None] = {}
        packages: set[str] = set()
        for module in entity.get("imports", {}):
            found, package = resolve.resolve(module, path, language, ctx)
            imports[module] = found
            if package is not None:
                packages.add(package)
        if imports != entity.get("imports", {}) or sorted(packages) != entity.get("packages", []):
            updated = {**entity, "imports": imports, "packages": sorted(packages)}
            for key in ("imports", "packages"):
                if not updated[key]:
                    del updated[key]
            run.set_file(path, updated)


def _read_config(root: Path, rel: str) -> bytes | None:
    try:
        fd = os.open(root / rel, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.read(fd, _CONFIG_FILE_LIMIT)
    except OSError:
        return None
    finally:
        os.close(fd)


def _apply_coverage(run: _Run) -> None:
    root = run.layout.repo_root
    reports = coverage.find_reports(root, run.settings.coverage_reports)
    if not reports:
        return
    sources = frozenset(p for p, e in run.files.items() if e.get("language"))
    percent = coverage.load_reports(root, reports, sources)
    for path in sorted(sources):
        entity = run.files[path]
        wanted = percent.get(path)
        if entity.get("test_coverage") == wanted:
            continue
        updated = {k: v for k, v in entity.items() if k != "test_coverage"}
        if wanted is not None:
            updated["test_coverage"] = wanted
        run.set_file(path, updated)


# -- writing -------------------------------------------------------------------------------
def _write(run: _Run, clock: _Clock) -> int:
    by_folder: dict[str, list[str]] = {}
    for path in run.files:
        by_folder.setdefault(folder_of(path), []).append(path)
    dirty = run.dirty | run.symbols.dirty
    written = 0
    for folder in sorted(dirty):
        shard = Shard(
            files={p: run.files[p] for p in sorted(by_folder.get(folder, []))},
            functions=run.symbols.flat(folder, "functions"),
            components=run.symbols.flat(folder, "components"),
        )
        written += run.shards.write_dir(folder, shard)
    clock.lap("write")
    written += _write_relationships(run)
    clock.lap("areas")
    return written


def _write_relationships(run: _Run) -> int:
    target = run.layout.entity / RELATIONSHIPS
    something = run.dirty or run.changed or run.full
    if not something and target.exists():
        return 0
    existing = run.shards.read(target) if target.exists() else None
    sources = {p: e for p, e in run.files.items() if e.get("language")}
    document = areas.merge(areas.derive(sources), existing)
    return int(run.store.write_json(target, document))

"""The incremental scan: list files, parse the changed ones, update the sharded entity tree.

1. List files (``walk``): inside git the index vouches for unchanged files' hashes, so they are
   not even opened; elsewhere every source file is read and hashed.
2. Compare with the stored hashes (``hashindex.HashIndex``: a derived cache in ``contextual/``,
   rebuilt from the shards when absent or stale). Nothing changed: done, no shard read
   (``scanstate.plan``).
3. Parse the rest (``pool``), resolving imports in the workers (``scanstate.apply``), then
   bring derived facts up to date (``derived``: imports, props types, coverage,
   ``called_by``, feature areas).
4. Write only the shards whose content changed (equal bytes are left alone; a folder left
   without entities loses its shard files), all under the memory lock (``shardwriter``).

Git's state (``HEAD``, its ref, the index lock) is noted before the listing and looked at
again right before writing: when a checkout, reset or pull moved the tree meanwhile, nothing
is written and the scan starts over once git is done (``GIT_ATTEMPTS``), so the map written
is never a mix of two branches.
"""

from __future__ import annotations

import gc
import posixpath
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planning_memory.core import Layout
from planning_memory.entity import derived, pool, shardwriter, walk
from planning_memory.entity.filetable import FileTable
from planning_memory.entity.scanstate import SYNTAX_ERRORS, Clock, Run, apply, plan
from planning_memory.entity.settings import Settings
from planning_memory.entity.shards import RELATIONSHIPS, Shards, folder_of
from planning_memory.entity.symbols import Symbols
from planning_memory.errors import InputError, UnmappedFileWarning, UnsafePathError
from planning_memory.store import Store

Progress = Callable[[int, int], None]
HASH_INDEX = "entity-hashes.json"  # under contextual/: derived, gitignored, rebuilt when absent
__all__ = ["RELATIONSHIPS", "ScanReport", "scan"]


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
    otherwise traverse again and again; the scan creates no reference cycles worth collecting
    (parsing the standard library leaves none). Parse workers keep it paused too.
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
    scope = _scope(layout.repo_root, paths)
    attempt = 0
    while True:
        attempt += 1
        found = _attempt(
            layout, store, settings, scope, full, progress, last=attempt == GIT_ATTEMPTS
        )
        if found is not None:
            break
    run, listing, written, clock = found
    failed = sorted(set(run.index.failed()) | run.errors.keys())
    counts = run.counts
    broken = run.shards.broken
    return ScanReport(
        files_seen=len(listing.files),
        parsed=counts.get("parsed", 0),
        unchanged=counts.get("unchanged", 0),
        removed=counts.get("removed", 0),
        skipped_binary=counts.get("binary", 0),
        skipped_large=counts.get("large", 0),
        skipped_ignored=listing.ignored,
        errors=len(failed) + len(broken),
        shards_written=written,
        seconds=round(time.perf_counter() - started, 3),
        error_paths=tuple(
            [f"{p}: {run.errors.get(p, SYNTAX_ERRORS)}" for p in failed[:50]] + broken[:50]
        ),
        phases=tuple(clock.laps),
    )


GIT_ATTEMPTS = 3  # scans of a tree that git rewrote meanwhile, before the last one is kept
GIT_SETTLE_S = 10.0  # how long to wait for git's index lock to go before trying again


def _attempt(
    layout: Layout,
    store: Store,
    settings: Settings,
    scope: list[str] | None,
    full: bool,
    progress: Progress | None,
    *,
    last: bool,
) -> tuple[Run, walk.Listing, int, Clock] | None:
    """List, parse and write; None, with nothing written, when git moved the tree meanwhile
    (``_git_moved``) and this is not the ``last`` attempt."""
    rules = walk.Rules.from_patterns(settings.include, settings.exclude)
    clock = Clock()
    listing = walk.discover(layout.repo_root, rules, paths=scope, use_git=settings.use_git)
    for name in listing.unnamed:
        store.skip_broken(
            InputError(
                "file name is not valid UTF-8, so the code map leaves the file out",
                path=name,
                hint="rename it to have it mapped",
            ),
            UnmappedFileWarning,
        )
    clock.lap("list")
    with store.lock():
        shards = Shards(layout, store)
        cache = layout.contextual / HASH_INDEX
        index = shards.index(cache)
        stored = index.hashes
        table = FileTable(shards, stored, index.links())
        symbols = Symbols(shards, {folder_of(p) for p in stored})
        run = Run(layout, store, settings, full, shards, index, symbols, table)
        jobs = plan(run, listing, scope)
        clock.lap("load")
        setup = (str(layout.repo_root), run.sources)
        for result in pool.parse(jobs, settings, setup, progress):
            apply(run, result)
        clock.lap("parse")
        if derived.must_refresh(run):  # always called: it records the coverage reports seen
            run.active = True
        relationships = derived.update(run, clock) if run.active else None
        if not last and _git_moved(listing):  # checked last, right before writing
            return None
        written = shardwriter.write(run, clock, relationships) if run.active else 0
        shards.save_index(cache, run.index, run.written)
    return run, listing, written, clock


def _git_moved(listing: walk.Listing) -> bool:
    """Whether git moved the tree while it was being read (a checkout, reset or pull changed
    ``HEAD`` or its ref, or holds the index lock): then wait for the lock to go (bounded) and
    list again, so that the map written is the settled tree's, never a mix of two branches."""
    if listing.git_dir is None or listing.git_stamp is None:
        return False
    now = walk.git_stamp(listing.git_dir)
    if now == listing.git_stamp and not now[2]:
        return False
    deadline = time.monotonic() + GIT_SETTLE_S
    while walk.git_stamp(listing.git_dir)[2] and time.monotonic() < deadline:
        time.sleep(0.05)
    return True


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

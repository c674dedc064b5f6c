"""The state of one scan, and what a listing and a parse result do to it.

``Run`` holds what a scan changes before anything is written: the file table, the symbols,
the folders whose shards must be rebuilt, the counts for the report. ``plan`` compares a
listing with the stored hashes and returns the parse jobs (dropping files that went);
``apply`` takes one parse result in.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

from planning_memory.core import Layout
from planning_memory.entity import entities, parsefile, walk
from planning_memory.entity.entities import name_of
from planning_memory.entity.filetable import FileTable
from planning_memory.entity.hashindex import HashIndex
from planning_memory.entity.languages import language_for
from planning_memory.entity.settings import Settings
from planning_memory.entity.shards import Shards, capped, capped_file, folder_of
from planning_memory.entity.symbols import Symbols
from planning_memory.store import Store

Entity = dict[str, Any]
SYNTAX_ERRORS = "syntax errors (partial results)"


@dataclass
class Run:
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
    fresh: set[str] = field(default_factory=set)  # functions new, or with a new signature
    # names of those, of functions gone, and of constructors whose calls changed
    reshaped: set[str] = field(default_factory=set)
    counts: dict[str, int] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)  # path -> what went wrong, this scan
    sources: frozenset[str] = frozenset()  # source files the workers resolve imports against
    written: dict[str, dict[str, Entity]] = field(default_factory=dict)  # folder -> files

    def count(self, name: str, by: int = 1) -> None:
        self.counts[name] = self.counts.get(name, 0) + by

    def set_file(self, path: str, entity: Entity | None) -> None:
        if self.table.put(path, entity):
            self.dirty.add(folder_of(path))


class Clock:
    def __init__(self) -> None:
        self.last = time.perf_counter()
        self.laps: list[tuple[str, float]] = []

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.laps.append((name, round(now - self.last, 3)))
        self.last = now


def plan(run: Run, listing: walk.Listing, scope: list[str] | None) -> list[parsefile.Job]:
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
            drop(run, path, keep_annotations=False)
        elif known and path not in sources:  # listed, but no longer a scanned language
            drop(run, path, keep_annotations=True)
    return jobs


def apply(run: Run, result: parsefile.Parsed) -> None:
    path, status = result["path"], result["status"]
    if status == "same":
        run.count("unchanged")
        return
    run.active = True
    if status in ("binary", "large", "gone"):
        if status != "gone":
            run.count(status)
        drop(run, path, keep_annotations=status != "gone")
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
        # a new signature is a new function to its callers (Java overloads by parameters,
        # calls on a result by its declared type)
        fresh = {k for k, fn in functions.items() if _reshaped(fn, old_functions.get(k))}
        run.fresh.update(fresh)
        gone = old_functions.keys() - functions.keys()
        run.reshaped.update(name_of(k, old_functions[k]) for k in gone)
        run.reshaped.update(name_of(k, functions[k]) for k in fresh)
        # a Java constructor's ``super(...)`` says its class's base
        run.reshaped.update(
            name_of(k, fn)
            for k, fn in functions.items()
            if fn.get("kind") == "constructor"
            and fn.get("calls") != old_functions.get(k, {}).get("calls")
        )
    else:
        run.fresh.update(functions)
        run.reshaped.update(name_of(k, fn) for k, fn in functions.items())
    run.symbols.replace(path, "functions", functions)
    components = capped(result.get("components") or {})
    old_components = run.symbols.components_of(path)
    if old_components:
        components = {
            key: entities.carry(c, old_components.get(key)) for key, c in components.items()
        }
    run.symbols.replace(path, "components", components)


def _reshaped(function: Entity, before: Entity | None) -> bool:
    return before is None or before.get("signature") != function.get("signature")


def _failed_entity(path: str, digest: str) -> Entity:
    return {"language": language_for(path), "hash": digest, "parse_errors": True}


def drop(run: Run, path: str, *, keep_annotations: bool) -> None:
    run.active = True
    old = run.table.get(path)
    if old is None:
        return
    kept = entities.annotation_only(old) if keep_annotations else None
    if old.get("language"):
        run.count("removed")
    run.set_file(path, kept)
    run.changed.add(path)
    run.reshaped.update(name_of(k, fn) for k, fn in run.symbols.of(path).items())
    run.symbols.replace(path, "functions", {})
    run.symbols.replace(path, "components", {})

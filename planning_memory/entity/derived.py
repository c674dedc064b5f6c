"""Derived facts of a scan, brought up to date in memory before anything is written.

Imports are resolved again when files came or went; props types imported from another file
are merged into components (``proptypes``: a file whose imported props types changed is
parsed again); coverage is applied when a report exists; ``called_by`` is updated where it
can have changed (``callgraph``); feature areas are derived again when their inputs changed
(``areas``), on a large run in a forked child beside the call graph.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from planning_memory.entity import areas, callgraph, coverage, parsefile, pool, proptypes, resolve
from planning_memory.entity.resolve import go as resolve_go
from planning_memory.entity.scanstate import Clock, Run, apply
from planning_memory.entity.shards import RELATIONSHIPS

Entity = dict[str, Any]


def must_refresh(run: Run) -> bool:
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


def update(run: Run, clock: Clock) -> dict[str, Any] | None:
    """Bring derived facts up to date in memory (imports, props, coverage, ``called_by``);
    the relationships document to write, if areas changed."""
    _resolve_imports(run)
    _imported_props(run)
    _apply_coverage(run)
    clock.lap("resolve")
    before, after = run.table.graph_views()
    import_path = _go_import_paths(run)
    old_graph = callgraph.Graph(before, import_path)
    new_graph = callgraph.Graph(after, import_path)

    def link() -> None:
        callgraph.update(old_graph, new_graph, run.symbols, run.changed, run.fresh, run.reshaped)

    relationships = _areas_beside(run, link)
    clock.lap("called_by")
    return relationships


def _go_import_paths(run: Run) -> Callable[[str], str | None]:
    """A Go package folder -> its import path, from the nearest go.mod (read when asked)."""
    root = str(run.layout.repo_root)
    context: list[resolve.Context] = []

    def read(rel: str) -> bytes | None:
        return parsefile.read_config(root, rel)

    def import_path(folder: str) -> str | None:
        if not context:
            context.append(resolve.build_context(run.table.sources(), read))
        return resolve_go.import_path(folder, context[0])

    return import_path


PARALLEL_AREAS = 5000  # files from which areas are derived in a forked child


def _areas_beside(run: Run, work: Callable[[], None]) -> dict[str, Any] | None:
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


_deriving: Run | None = None  # read by the forked child of ``_areas_beside``


def _derive_in_child(_unused: list[None]) -> tuple[dict[str, Any] | None, list[str]]:
    assert _deriving is not None
    return _relationships(_deriving), _deriving.shards.broken


def _resolve_imports(run: Run) -> None:
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


def _imported_props(run: Run) -> None:
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
            apply(run, result)
    proptypes.merge(sorted(run.parsed), run.table, run.symbols)


def _apply_coverage(run: Run) -> None:
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


_AREA_INPUTS = ("language", "imports", "components", "classes", "models")


def _areas_may_change(run: Run) -> bool:
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


def _relationships(run: Run) -> dict[str, Any] | None:
    """The relationships document to write, or None when areas cannot have changed."""
    target = run.layout.entity / RELATIONSHIPS
    if target.exists() and not _areas_may_change(run):
        return None
    existing = run.shards.read(target) if target.exists() else None
    sources = {p: e for p, e in run.table.everything().items() if e.get("language")}
    return areas.merge(areas.derive(sources), existing)

"""``CodeMap``: one tree's code map, to bring up to date, look things up in and annotate."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from planning_memory.core import Layout
from planning_memory.entity import anchors, ignore_rules, modified, on_disk, query
from planning_memory.entity.entities import expand_component, expand_function
from planning_memory.entity.scanner import RELATIONSHIPS, ScanReport, scan
from planning_memory.entity.shards import Shards
from planning_memory.store import Store

Entity = dict[str, Any]


class CodeMap:
    """The entity level of one memory tree (files, functions, components, feature areas)."""

    def __init__(
        self, layout: Layout, store: Store, config: Callable[[], Mapping[str, Any]]
    ) -> None:
        self.layout = layout
        self.store = store
        self._config = config  # read when a scan needs it

    def scan(
        self, *, paths: list[str] | None = None, full: bool = False, progress: Any = None
    ) -> ScanReport:
        """Bring the map up to date (incremental by content hash); memories anchored to code
        that changed are marked for review."""
        report = scan(
            self.layout, self.store, dict(self._config()), paths=paths, full=full, progress=progress
        )
        anchors.mark_stale_anchors(self.layout, self.store)
        return report

    def file(self, path: str) -> Entity | None:
        return query.get_file(self.layout, self.store, path)

    def functions(self, name: str) -> list[Entity]:
        """Functions or methods named ``name`` (or ``Class.method``)."""
        return query.get_function(self.layout, self.store, name)

    def components(self, name: str) -> list[Entity]:
        """UI components named ``name``: props, state, hooks, children."""
        return query.get_component(self.layout, self.store, name)

    def area(self, name: str) -> Entity | None:
        """A feature area of relationships.json, or None."""
        return query.get_area(self.layout, self.store, name)

    def relationships(self, name: str) -> Entity:
        """How a file, component or area relates to the rest."""
        return query.get_relationships(self.layout, self.store, name)

    def annotate(
        self,
        path: str,
        *,
        notes: list[str] | None = None,
        purpose: str | None = None,
        modified_by: list[str] | None = None,
        now: datetime | None = None,
    ) -> Entity:
        """Annotations on a file that survive rescans; ``now`` is their time (the entity's
        ``last_modified`` is at least that)."""
        return query.update_file_annotations(
            self.layout,
            self.store,
            path,
            notes=notes,
            purpose=purpose,
            modified_by=modified_by,
            now=now,
        )

    def snapshot(self) -> Entity:
        """The whole map in one value: files, functions, components, relationships."""
        return query.entity_snapshot(self.layout, self.store)

    def last_written(self) -> str | None:
        return on_disk.last_written(self.layout)

    def ignore_rules(self) -> ignore_rules.IgnoreRules:
        """Which repository paths the map skips, path by path (for the watch daemon)."""
        exclude = self._config()["memory"]["entity"].get("excludePatterns", [])
        return ignore_rules.IgnoreRules(str(self.layout.repo_root), exclude)

    def complete_anchors(self, given: Sequence[Mapping[str, Any] | str]) -> list[dict[str, Any]]:
        """Code anchors with the hash the map gives them now (see ``anchors``)."""
        return anchors.complete_anchors(self.layout, self.store, given)

    # -- browsing the whole map (the viewer) ------------------------------------------------
    def areas(self) -> dict[str, Entity]:
        """Every feature area of relationships.json, by name."""
        found = Shards(self.layout, self.store).read(self.layout.entity / RELATIONSHIPS)
        areas = found.get("areas") if found else None
        return dict(sorted(areas.items())) if isinstance(areas, dict) else {}

    def folders(self) -> list[str]:
        """The source folders the map holds files of, sorted (``""``: the repository root)."""
        return Shards(self.layout, self.store).directories()

    def folder(self, directory: str) -> Entity:
        """The files, functions and components directly in source folder ``directory``, each
        in its full shape."""
        if directory:
            directory = query.repo_path(self.layout, directory)  # no way out of the map
        shard = Shards(self.layout, self.store).load_dir(directory)
        annotated = modified.annotated_at(self.layout, self.store)
        files = sorted(shard.files.items())
        return {
            "directory": directory,
            "files": [query.shown_file(self.layout, self.store, p, e, annotated) for p, e in files],
            "functions": [expand_function(k, e) for k, e in sorted(shard.functions.items())],
            "components": [expand_component(k, e) for k, e in sorted(shard.components.items())],
        }

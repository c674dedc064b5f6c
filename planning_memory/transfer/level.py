"""``Transfer``: one memory tree's export and import (the combined document, ``memoria/``).

An import is planned (converted and checked, nothing written) before it is applied; applying
writes under one lock and then tells the facade, which refreshes the views.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planning_memory import core, longterm, search
from planning_memory.transfer.memoria import LONG_TERM_FILE, read_memoria
from planning_memory.transfer.memoria_export import Exported, drop_known, write_memoria
from planning_memory.transfer.shapes import ImportResult, keep_new, plan, read_document
from planning_memory.transfer.tree import apply_plan, export_tree

if TYPE_CHECKING:
    from planning_memory.core import Layout
    from planning_memory.longterm import LongTerm
    from planning_memory.sessions import Sessions
    from planning_memory.store import Store


class Transfer:
    """Export and import for one tree: ``sessions`` and ``entity`` (the code map's snapshot)
    are read when needed; ``applied`` runs after an import was written."""

    def __init__(
        self,
        layout: Layout,
        store: Store,
        long_term: LongTerm,
        now: Callable[[], datetime],
        *,
        config: Callable[[], dict[str, Any]],
        sessions: Callable[[], Sessions],
        entity: Callable[[], dict[str, Any]],
        recent: Callable[[], list[dict[str, Any]]],
        applied: Callable[[], None],
    ) -> None:
        self.layout, self.store, self.long_term, self.now = layout, store, long_term, now
        self._config, self._sessions, self._entity = config, sessions, entity
        self._recent, self._applied = recent, applied

    def export(self, *, seed: bool = False, include_deleted: bool = False) -> dict[str, Any]:
        """Everything in memory as one document (the seed's combined shape)."""
        records = self.long_term.records(deleted=include_deleted)
        return export_tree(
            self.layout,
            self.store,
            records,
            self.long_term.preferences(),
            self._entity(),
            search.index_path(self.layout),
            self.now(),
            seed=seed,
            recent_queries=self._recent(),
        )

    def plan(
        self, data: Any, *, name_hint: str | None = None, only_new: bool = False
    ) -> ImportResult:
        """Convert and validate ``data`` (a value, or a ``Path`` to a JSON file); report what
        applying it would change. ``only_new`` leaves out what is already there (records,
        sessions, preference sections)."""
        if isinstance(data, Path):
            data, name_hint = read_document(data), name_hint or data.name
        existing = {r["id"]: r for r in self.long_term.records(deleted=True)}
        result = plan(data, self.now(), existing, check=longterm.check_record, name_hint=name_hint)
        if only_new:
            exists = self.layout.session_path
            keep_new(result, lambda sid: exists(sid).exists(), self.long_term.preferences())
        return result

    def apply(self, result: ImportResult) -> ImportResult:
        """Write a checked import plan (under one lock), then refresh the views."""
        apply_plan(self.layout, self.store, result, self.long_term.preferences())
        self._applied()
        return result

    def import_memoria(
        self, folder: Path | str, *, channel: str = "memoria", dry_run: bool = False
    ) -> ImportResult:
        """Import an agent's ``memoria/`` folder (``largo_plazo.json``: facts -> learnings,
        profile -> preferences; ``sesion_actual.json``: steps -> a paused session). Importing
        it again, or what ``export_memoria`` wrote, adds nothing; nothing already there is
        overwritten."""
        tz = core.timezone_of(self._config(), self.now())
        doc, files = read_memoria(Path(folder), tz=tz, channel=channel)
        result = self.plan(doc, name_hint=LONG_TERM_FILE, only_new=True)
        drop_known(result, self.long_term.records(deleted=True), self._session_starts())
        result.files = files
        return result if dry_run else self.apply(result)

    def export_memoria(
        self, folder: Path | str, *, session_id: str | None = None, force: bool = False
    ) -> Exported:
        """Write an agent's ``memoria/`` folder back (seed 002): ``largo_plazo.json`` from
        the long-term records and preferences, ``sesion_actual.json`` from ``session_id``
        (default: the newest session; none when there is no session). A file there already
        is replaced only when it is seed-shaped and holds nothing this memory lacks, unless
        ``force``."""
        sessions = self._sessions()
        newest = sessions.list()
        sid = session_id or (newest[0].id if newest else None)
        return write_memoria(
            Path(folder),
            self.long_term.records(deleted=True),
            self.long_term.preferences(),
            sessions.get(sid) if sid else None,
            known_sessions=self._session_starts(),
            tz=core.timezone_of(self._config(), self.now()),
            force=force,
        )

    def _session_starts(self) -> set[tuple[str, str]]:
        """Each session's (start, goal): how a ``memoria/`` session log is recognised."""
        return {(s.started_at, s.goal or "") for s in self._sessions().list()}

"""Chronological neighbours of a memory (seed 003's ``memory_timeline``).

For a message or decision id: the messages and decisions around it in the same session, read
from the session file. For a long-term record id: the records created just before and just
after it, from the search index (brought up to date first).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from planning_memory.core import Layout, check_id
from planning_memory.errors import NotFoundError
from planning_memory.search import documents as sources
from planning_memory.search import upkeep as indexer
from planning_memory.search.database import Index, Row
from planning_memory.store import Store

DEFAULT_SPAN = 3


@dataclass(frozen=True)
class TimelineEntry:
    """One point of a timeline; ``anchor`` marks the memory asked about."""

    id: str
    kind: str  # message | decision | record type
    at: str
    text: str
    session_id: str = ""
    anchor: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "at": self.at,
            "text": self.text,
            "session_id": self.session_id,
            "anchor": self.anchor,
        }


def _session_entries(session: Mapping[str, Any]) -> list[TimelineEntry]:
    sid = str(session.get("id"))
    entries = [
        TimelineEntry(
            str(m.get("id")), "message", str(m.get("at") or ""), _line(m.get("content")), sid
        )
        for m in session.get("messages") or []
        if isinstance(m, Mapping)
    ]
    entries += [
        TimelineEntry(
            str(d.get("id")),
            "decision",
            str(d.get("decided_at") or ""),
            _line(f"{d.get('question') or ''} -> {d.get('decision') or ''}"),
            sid,
        )
        for d in session.get("decisions") or []
        if isinstance(d, Mapping)
    ]
    return sorted(entries, key=lambda e: (e.at, e.kind != "message", e.id))


def _line(text: Any, limit: int = 200) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _find_session(index: Index, layout: Layout, store: Store, item_id: str) -> dict[str, Any]:
    row = index.by_ref(item_id)
    candidates = [layout.session_path(row.doc.session_id)] if row and row.doc.session_id else []
    candidates += sources.session_files(layout, store)
    for path in candidates:
        session = sources.read_session(store, path)
        if session and any(e.id == item_id for e in _session_entries(session)):
            return session
    raise NotFoundError(f"no session holds {item_id}", record_id=item_id)


def _record_entry(row: Row, anchor: bool = False) -> TimelineEntry:
    return TimelineEntry(
        row.doc.ref_id, row.doc.type, row.doc.created_at, row.doc.title, anchor=anchor
    )


def timeline(
    layout: Layout,
    store: Store,
    memory_id: str,
    *,
    before: int = DEFAULT_SPAN,
    after: int = DEFAULT_SPAN,
    index: Index | None = None,
) -> list[TimelineEntry]:
    """The memory ``memory_id`` with up to ``before`` / ``after`` neighbours, oldest first."""
    check_id(memory_id)
    own = index is None
    ix = index or Index.open(layout)
    try:
        indexer.ensure_ready(ix, layout, store)
        if memory_id.startswith(("msg_", "dec_")):
            entries = _session_entries(_find_session(ix, layout, store, memory_id))
            at = next(i for i, e in enumerate(entries) if e.id == memory_id)
            window = entries[max(0, at - before) : at + after + 1]
            return [TimelineEntry(**{**e.as_dict(), "anchor": e.id == memory_id}) for e in window]
        row = ix.by_key(f"record:{memory_id}")
        if row is None:
            raise NotFoundError(
                f"no memory with id {memory_id}",
                record_id=memory_id,
                hint="`pmem search` finds ids; soft-deleted records have no timeline",
            )
        earlier, later = ix.neighbours("record", row.doc.created_at, memory_id, before, after)
        return [
            *map(_record_entry, earlier),
            _record_entry(row, anchor=True),
            *map(_record_entry, later),
        ]
    finally:
        if own:
            ix.close()

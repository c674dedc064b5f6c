"""Chronological neighbours of a memory (seed 003's ``memory_timeline``), within its session.

A session's timeline holds its messages, decisions and errors (read from the session file)
and the long-term records it saved (those whose ``source`` is ``session:<id>``, each at the
moment the session saved it), in time order. A message, a decision or a record saved by a
session gets its neighbours from that timeline. A record saved outside a session (the CLI, an
import, an agent) gets the records created just before and just after it, from the search
index (brought up to date first).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from planning_memory.core import Layout, check_id
from planning_memory.errors import NotFoundError
from planning_memory.longterm import load_checked
from planning_memory.search import documents as sources
from planning_memory.search import upkeep as indexer
from planning_memory.search.database import Filters, Index
from planning_memory.search.rows import Row
from planning_memory.store import Store

DEFAULT_SPAN = 3
RECORD_CANDIDATES = 2000  # records looked at for a session's own (touched in its lifetime)


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
    entries += [
        TimelineEntry(str(e.get("id")), "error", str(e.get("at") or ""), _error_text(e), sid)
        for e in session.get("errors") or []
        if isinstance(e, Mapping)
    ]
    return _ordered(entries)


def _ordered(entries: list[TimelineEntry]) -> list[TimelineEntry]:
    """By time; within one second (the timestamps' resolution), by the millisecond that
    ``<prefix>_<ULID>`` ids carry, so that a fact saved from a message follows it."""
    return sorted(entries, key=lambda e: (e.at, _millis(e.id), e.kind != "message", e.id))


def _millis(item_id: str) -> str:
    """The time part of a ``<prefix>_<ULID>`` id ("" for other ids)."""
    tail = item_id.partition("_")[2]
    return tail[:10] if len(tail) == 26 and tail.isalnum() and tail.isupper() else ""


def _error_text(error: Mapping[str, Any]) -> str:
    fixed = f" -> {error.get('resolution')}" if error.get("resolution") else " (open)"
    return _line(f"{error.get('error') or ''}{fixed}")


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


def _saving_session(layout: Layout, store: Store, row: Row) -> dict[str, Any] | None:
    """The session that saved the record of ``row`` (its ``source`` is ``session:<id>``),
    when that session's file is there."""
    loaded = load_checked(store, layout.record_path(row.doc.type, row.doc.ref_id))
    source = str(loaded.value.get("source") or "") if loaded is not None else ""
    if not source.startswith("session:ses_"):
        return None
    path = layout.session_path(source.split(":", 1)[1])
    return sources.read_session(store, path) if path.is_file() else None


def _session_records(
    index: Index, layout: Layout, store: Store, session: Mapping[str, Any]
) -> list[TimelineEntry]:
    """The records ``session`` saved, each at the moment it saved it (created then, else
    its last update): the records touched in the session's lifetime whose source names it."""
    sid = str(session.get("id"))
    start = str(session.get("started_at") or "")
    end = str(session.get("ended_at") or "9999")
    rows = index.where(
        "d.source = 'record' AND d.updated_at >= ? AND d.created_at <= ?",
        [start, end],
        Filters(),
        RECORD_CANDIDATES,
    )
    found = []
    for row in rows:
        loaded = load_checked(store, layout.record_path(row.doc.type, row.doc.ref_id))
        if loaded is not None and loaded.value.get("source") == f"session:{sid}":
            found.append(_session_point(row, session))
    return found


def _around(
    entries: list[TimelineEntry], item_id: str, before: int, after: int
) -> list[TimelineEntry]:
    at = next(i for i, e in enumerate(entries) if e.id == item_id)
    window = entries[max(0, at - before) : at + after + 1]
    return [TimelineEntry(**{**e.as_dict(), "anchor": e.id == item_id}) for e in window]


def _session_point(row: Row, session: Mapping[str, Any]) -> TimelineEntry:
    """The record of ``row`` as a point of ``session``'s timeline: when it was created, or
    its last update when it was created before the session."""
    d, start = row.doc, str(session.get("started_at") or "")
    at = d.created_at if d.created_at >= start else d.updated_at
    return TimelineEntry(d.ref_id, d.type, at, d.title, str(session.get("id")))


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
            session = _find_session(ix, layout, store, memory_id)
            entries = [*_session_entries(session), *_session_records(ix, layout, store, session)]
            return _around(_ordered(entries), memory_id, before, after)
        row = ix.by_key(f"record:{memory_id}")
        if row is None:
            raise NotFoundError(
                f"no memory with id {memory_id}",
                record_id=memory_id,
                hint="`pmem search` finds ids; soft-deleted records have no timeline",
            )
        saver = _saving_session(layout, store, row)
        if saver is not None:  # saved in a session: its neighbours are that session's
            rest = [e for e in _session_records(ix, layout, store, saver) if e.id != memory_id]
            entries = _ordered([*_session_entries(saver), *rest, _session_point(row, saver)])
            return _around(entries, memory_id, before, after)
        earlier, later = ix.neighbours("record", row.doc.created_at, memory_id, before, after)
        return [
            *map(_record_entry, earlier),
            _record_entry(row, anchor=True),
            *map(_record_entry, later),
        ]
    finally:
        if own:
            ix.close()

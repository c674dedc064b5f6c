"""Export from and import into one memory tree.

What the combined document is made of, and a checked plan written under one lock. A session
is exported whole (its archived messages too) and imported by merging it into the session
already there, if any (``sessions.absorb_session``): an import never shrinks a session."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from planning_memory.core import Layout, Record
from planning_memory.errors import InputError
from planning_memory.longterm import save_record
from planning_memory.sessions import absorb_session, whole_session
from planning_memory.store import Store
from planning_memory.transfer.shapes import ImportResult, export_document


def export_tree(
    layout: Layout,
    store: Store,
    records: Sequence[Record],
    preferences: Mapping[str, Any],
    entity: Mapping[str, Any],
    index_path: Path,
    now: datetime,
    *,
    seed: bool = False,
    recent_queries: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The combined document: ``records``, ``preferences``, every session file of the tree
    with its archived messages (a broken file skipped and told to ``store.skip_broken``), the
    ``entity`` snapshot, where the derived index lives and the ``recent_queries``."""
    sessions = []
    for path in store.list_json(layout.short_term):
        if path.name.startswith("session-"):
            try:
                sessions.append(whole_session(layout, store, store.read_json(path)))
            except InputError as exc:
                store.skip_broken(exc)
    where = {"provider": "local", "path": store.rel(index_path), "present": index_path.is_file()}
    contextual = {"index": where, "recent_queries": [dict(q) for q in recent_queries]}
    return export_document(
        list(records), dict(preferences), sessions, dict(entity), contextual, now, seed=seed
    )


def apply_plan(
    layout: Layout, store: Store, result: ImportResult, preferences: Mapping[str, Any]
) -> ImportResult:
    """Write a checked import plan under one lock, as one batch (``Store.batch``: no fsync
    per file, one sync at the end): records, preference sections merged over
    ``preferences``, sessions (each merged into the one already there: ``result.sessions``
    tells ``created``, ``updated`` or ``unchanged``)."""
    plan = result.plan
    with store.batch():
        for record in plan.records:
            save_record(layout, store, record)
        if plan.preferences is not None:
            store.write_json(layout.preferences, {**preferences, **plan.preferences})
        for session in plan.sessions:
            result.session_outcomes[session["id"]] = absorb_session(layout, store, session)
    result.applied = True
    return result

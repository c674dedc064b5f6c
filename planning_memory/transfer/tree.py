"""Export from and import into one memory tree.

What the combined document is made of, and a checked plan written under one lock. A session
is exported whole (its archived messages too) and imported by merging it into the session
already there, if any (``sessions.absorb_session``): an import never shrinks a session. A
long-term record already there, and ``preferences.json``, are merged with the imported copy
the same way (``gitops.merge_copies``: larger counters, union of sets and keys, the newer
copy's other fields), so that an older export imported again loses nothing learned since and
rewrites no file."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from planning_memory.core import Layout, Record
from planning_memory.errors import InputError
from planning_memory.gitops import merge_copies
from planning_memory.longterm import load_checked, save_record
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
    per file, one sync at the end): records (each merged into the file already there, which
    sorts its id into ``result.created``, ``updated`` or ``unchanged``), the preferences
    (``absorb_preferences``), sessions (each merged into the one already there:
    ``result.session_outcomes``)."""
    plan = result.plan
    outcomes: dict[str, list[str]] = {"created": [], "updated": [], "unchanged": []}
    with store.batch():
        for record in plan.records:
            outcomes[absorb_record(layout, store, record)].append(record["id"])
        if plan.preferences is not None:
            result.preferences_outcome = absorb_preferences(
                layout, store, plan.preferences, preferences
            )
        for session in plan.sessions:
            result.session_outcomes[session["id"]] = absorb_session(layout, store, session)
    result.created, result.updated, result.unchanged = outcomes.values()
    result.applied = True
    return result


def absorb_record(layout: Layout, store: Store, record: Record) -> str:
    """Merge ``record`` (schema-checked) into its file, if there is one, under the lock:
    ``created``, ``updated`` or ``unchanged`` (the file's bytes left as they were). A broken
    file in its place is told to ``store.skip_broken`` and replaced."""
    path = layout.record_path(record["type"], record["id"])
    with store.lock():
        loaded = load_checked(store, path) if os.path.lexists(path) else None
        if loaded is None:
            save_record(layout, store, record)
            return "created"
        merged = merge_copies(loaded.value, record)
        if merged is loaded.value:
            return "unchanged"
        changed = save_record(layout, store, merged, expect=loaded.digest)
    return "updated" if changed else "unchanged"


def absorb_preferences(
    layout: Layout, store: Store, imported: Mapping[str, Any], current: Mapping[str, Any]
) -> str:
    """Merge ``imported`` into ``current`` (what ``preferences.json`` holds) and write it:
    ``created``, ``updated`` or ``unchanged`` (nothing written)."""
    mine = dict(current)
    merged = merge_copies(mine, dict(imported), kind="preferences")
    if merged is mine:
        return "unchanged"
    store.write_json(layout.preferences, merged)
    return "updated" if mine else "created"

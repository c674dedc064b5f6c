"""When each file of the code map last changed (``last_modified``), never kept in the shards.

The shards are committed: a per-clone time in them would churn and conflict between clones
and branches. So ``last_modified`` is worked out when an entity is shown: the file's own
modification time on disk (which ``git checkout`` moves exactly when it rewrites the file),
or the time of the newest annotation (``update_file_annotations``, seed 000's
``updateFileEntity``), whichever is later. Annotation times live in a derived, gitignored
file, ``contextual/annotated-at.json``.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

from planning_memory.core import Layout, timestamp
from planning_memory.errors import PlanningMemoryError
from planning_memory.store import Store

ANNOTATED_AT = "annotated-at.json"


def annotated_at(layout: Layout, store: Store) -> dict[str, str]:
    """Repository path -> when it was last annotated (empty when none, or unreadable: the
    file is derived, and a broken one only loses those times)."""
    path = layout.contextual / ANNOTATED_AT
    if not path.is_file():
        return {}
    try:
        value = store.read_json(path)
    except PlanningMemoryError:
        return {}
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(v, str)}


def last_modified(layout: Layout, path: str, annotated: dict[str, str]) -> str | None:
    """``path``'s ``last_modified`` (ISO 8601 UTC): the later of its mtime and its newest
    annotation; None for a file that is gone and was never annotated."""
    try:
        mtime = os.stat(layout.repo_root / path).st_mtime
    except OSError:
        on_disk = None
    else:
        on_disk = timestamp(datetime.fromtimestamp(mtime, UTC))
    times = [t for t in (on_disk, annotated.get(path)) if t]
    return max(times) if times else None  # one fixed format: text order is time order


def note_annotation(layout: Layout, store: Store, path: str, now: datetime) -> str:
    """Keep ``now`` as ``path``'s annotation time (entries of files gone are dropped);
    returns it. The caller holds the store's lock."""
    stamp = timestamp(now)
    found = annotated_at(layout, store)
    found = {p: t for p, t in found.items() if (layout.repo_root / p).is_file()}
    found[path] = stamp
    store.write_json(layout.contextual / ANNOTATED_AT, dict(sorted(found.items())))
    return stamp

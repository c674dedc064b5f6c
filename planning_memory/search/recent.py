"""Recent queries (seed 000's ``contextualMemory.recentQueries``): the latest searches.

Each search through ``Memory.search`` (``pmem search``, the API, MCP ``memory_search``) adds
one line ``{"query", "results", "at"}`` to a derived, gitignored log,
``contextual/recent-queries.jsonl``: the query passed through the privacy filter and cut to
``MAX_QUERY`` characters, the first ``MAX_RESULTS`` hits' ids (a record's id, a file's path).
The line is one append, without the lock or an fsync (``Store.append_line``), so a search
never waits for a writer; the log rotates past ``keep`` lines' worth of bytes, so its size is
bounded, and a reader takes its newest ``keep`` lines. ``keep`` is the config's
``contextual.recentQueries`` (0: nothing is kept).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from planning_memory.core import Layout, privacy, timestamp
from planning_memory.errors import PlanningMemoryError
from planning_memory.store import Store

LOG = "recent-queries.jsonl"
MAX_QUERY = 500  # characters of a query kept
MAX_RESULTS = 10  # hits named per query
MAX_RESULT = 200  # characters of one hit's name
MAX_LINE = 8192  # bytes one line can take (the bounds above, escaped); rotation counts on it

Entry = dict[str, Any]


def entry(query: str, results: Iterable[str], now: datetime) -> Entry:
    """One log line's value: the query redacted and cut (what UTF-8 cannot hold, an argument
    that was not UTF-8, as "?"), the hits' names without repeats."""
    names = list(dict.fromkeys(r[:MAX_RESULT] for r in results if r))[:MAX_RESULTS]
    text = privacy.redact(" ".join(query.split()))[:MAX_QUERY]
    text = text.encode("utf-8", "replace").decode("utf-8")
    return {"query": text, "results": names, "at": timestamp(now)}


def remember(
    layout: Layout, store: Store, query: str, results: Iterable[str], now: datetime, keep: int
) -> bool:
    """Add a search to the log (nothing when ``keep`` is 0). False when it could not be
    written: the log is a convenience, and a search never fails for it."""
    if keep <= 0:
        return False
    line = json.dumps(entry(query, results, now), ensure_ascii=False, separators=(",", ":"))
    try:
        store.append_line(layout.contextual / LOG, line, rotate_at=keep * MAX_LINE)
    except (PlanningMemoryError, OSError):  # a FIFO in its place, a full disk, ...
        return False
    return True


def recent(layout: Layout, store: Store, keep: int) -> list[Entry]:
    """The newest ``keep`` searches, newest first (a broken line is skipped)."""
    if keep <= 0:
        return []
    log = layout.contextual / LOG
    found: list[Entry] = []
    for path in (log.with_name(LOG + ".1"), log):
        if path.is_file():
            found += _entries(_read(store, path))
    return found[::-1][:keep]


def _read(store: Store, path: Any) -> bytes:
    try:
        return store.read_bytes(path)
    except PlanningMemoryError:
        return b""


def _entries(data: bytes) -> list[Entry]:
    found = []
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("query"), str):
            found.append(
                {
                    "query": value["query"],
                    "results": [r for r in value.get("results") or [] if isinstance(r, str)],
                    "at": str(value.get("at", "")),
                }
            )
    return found

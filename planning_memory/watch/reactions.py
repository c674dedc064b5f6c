"""The reactions a batch sets off, by name: each one call on the ``Memory`` facade.

``REACTIONS`` is the registry the daemon runs (and its scan child, for ``entity``). A reaction
takes the memory it writes through (the daemon's is backed by a store that records its own
writes) and the repository paths that changed (``None``: all of them).
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Protocol

from planning_memory.errors import ConflictError

if TYPE_CHECKING:
    from planning_memory.memory import Memory


class Reaction(Protocol):
    def __call__(self, memory: Memory, paths: list[str] | None, /) -> object: ...


def scan(memory: Memory, paths: list[str] | None) -> object:
    """Source files changed: entity JSON for them, then anchored memories marked for review."""
    return memory.scan(paths=paths)


def sync_views(memory: Memory, paths: list[str] | None) -> object:
    """Memory JSON or a view changed: the Markdown sync workflow (render stale views, import
    hand edits); a view edited by hand whose records changed too is a conflict."""
    report = memory.sync()
    conflicts = [memory.layout.relative(state.path) for state in report.conflicts]
    if conflicts:
        raise ConflictError(
            f"{', '.join(conflicts)} changed both by hand and in the JSON; nothing was written",
            hint="run `pmem sync --prefer md|json`",
        )
    return report


def sync_index(memory: Memory, paths: list[str] | None) -> object:
    """The search index, once built: the changed repository files, then the memory files."""
    return memory.contextual.sync(paths)


SUMMARY_BATCH = 10  # messages a session gathers before the daemon summarises them ...
SUMMARY_IDLE = timedelta(minutes=5)  # ... or how long it stays quiet before it does anyway


def summarize(memory: Memory, paths: list[str] | None) -> object:
    """Drain the summary queue that sessions fill, a batch at a time (the built-in summariser
    keeps more of a conversation it sees whole than one message at a time)."""
    return memory.sessions.drain(min_batch=SUMMARY_BATCH, idle=SUMMARY_IDLE)


REACTIONS: dict[str, Reaction] = {
    "entity": scan,
    "markdown": sync_views,
    "index": sync_index,
    "summaries": summarize,
}

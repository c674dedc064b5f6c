"""What the context packer reads from files besides the index: the sessions and preferences.

Adapters: the current session (``session_id``, else the newest open one) and the last ended
one, among the most recently modified session files; ``preferences.json``. Reading only.
"""

from __future__ import annotations

import os
from typing import Any

from planning_memory import longterm
from planning_memory.core import Layout
from planning_memory.errors import InputError
from planning_memory.search import read_session, session_files
from planning_memory.sessions import said_something
from planning_memory.store import Store

SESSION_SCAN = 20  # newest session files looked at to find the current and the last one


def find_sessions(
    layout: Layout, store: Store, session_id: str | None = None, agent: str | None = None
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """Adapter: the session to show (``session_id``, else the newest open one) and the last
    ended one, each preferring the agent's channel (``<agent>`` or ``agent:<agent>``), among
    the ``SESSION_SCAN`` most recently modified session files (read newest first, until
    both are found)."""
    ours = (agent, f"agent:{agent}")
    given = read_session(store, layout.session_path(session_id)) if session_id else None
    current, last, any_open, any_ended = given, None, None, None
    files = session_files(layout, store)
    files.sort(key=lambda p: _mtime(p), reverse=True)
    for path in files[:SESSION_SCAN]:
        session = read_session(store, path)
        if not session or (given is not None and session["id"] == given["id"]):
            continue
        mine = agent is None or session.get("channel") in ours
        if session.get("status") == "ended":
            if not said_something(session.get("end_summary")):
                continue  # an ended session with nothing to say (an empty /clear)
            any_ended = any_ended or session
            last = last or (session if mine else None)
        elif session_id is None:
            any_open = any_open or session
            current = current or (session if mine else None)
        if (current is not None or session_id) and last is not None:
            break
    return current or (None if session_id else any_open), last or any_ended


def current_session(
    layout: Layout, store: Store, session_id: str | None = None, agent: str | None = None
) -> dict[str, Any] | None:
    """The session to show (``find_sessions``)."""
    return find_sessions(layout, store, session_id, agent)[0]


def _mtime(path: os.PathLike[str]) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def read_preferences(layout: Layout, store: Store) -> dict[str, Any]:
    """Adapter: ``preferences.json`` (empty when missing; when broken, empty and a warning)."""
    try:
        return longterm.read_preferences(layout, store)
    except InputError as exc:
        store.skip_broken(exc)
        return {}

"""Which long-term memories a session delivered into the agent's context (``applied``).

A learning counts one application the first time a session delivers it (a context block at
session start, a prompt's recall); the session keeps the ids it delivered so that the same
learning, delivered again at the next prompt, is not counted twice. Nothing is written when
every id was delivered before, nor for a session that has ended or does not exist.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from planning_memory.errors import NotFoundError
from planning_memory.sessions.files import Session, SessionFiles

OPEN = ("active", "paused")
MAX_APPLIED = 1000  # ids kept per session (the schema's maxItems; the oldest go first)


def first_deliveries(
    files: SessionFiles, session_id: str, ids: Sequence[str], *, now: datetime
) -> list[str]:
    """Of ``ids``, those the session had not delivered before, now noted in it."""
    wanted = list(dict.fromkeys(i for i in ids if i))
    try:
        session = files.load(session_id).value
    except NotFoundError:
        return []  # no such session: nothing to count once per
    seen = set(session.get("applied") or ())
    if session["status"] not in OPEN or not [i for i in wanted if i not in seen]:
        return []  # the hot path (every prompt), or an ended session: no write

    def note(session: Session) -> list[str]:
        known = list(session.get("applied") or [])
        have = set(known)
        new = [i for i in wanted if i not in have]
        session["applied"] = [*known, *new][-MAX_APPLIED:]
        return new

    return files.mutate(session_id, note, now=now, states=OPEN)[1]

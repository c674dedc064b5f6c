"""Unfinished work of the other open sessions: what a new session is told at once.

A session that crashed stays open until something ends it; one that still runs in another
terminal or worktree is open too, and from the files alone the two look the same. Either way
a session that starts should know about them: each one's goal, its next step (from a summary
of what it said so far, by the built-in summariser) and when it was last active.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from planning_memory.core import parse_timestamp
from planning_memory.sessions.files import SessionFiles
from planning_memory.sessions.lifecycle import end_request, has_activity
from planning_memory.sessions.summary_base import Summarizer

WITHIN = timedelta(hours=12)  # open sessions idle longer than this are not mentioned
LIMIT = 5  # at most this many, the most recently active first
TEXT = 160  # characters of a goal or a next step


@dataclass(frozen=True)
class Unfinished:
    """One other open session: what it was for, what it meant to do next, when it last
    did something."""

    session_id: str
    name: str
    channel: str
    status: str
    goal: str
    next_step: str
    last_active: datetime

    def line(self, now: datetime) -> str:
        """One line: ``<name>: goal: ...; next step: ...; last active <when> (<n> min ago)``."""
        minutes = max(0, int((now - self.last_active).total_seconds() // 60))
        ago = f"{minutes} min ago" if minutes < 120 else f"{minutes // 60} h ago"
        when = self.last_active.strftime("%Y-%m-%dT%H:%M:%SZ")
        parts = [f"goal: {self.goal or '(none stated)'}"]
        if self.next_step:
            parts.append(f"next step: {self.next_step}")
        parts.append(f"last active {when} ({ago})")
        paused = " (paused)" if self.status == "paused" else ""
        return f"{self.name or self.session_id}{paused}: " + "; ".join(parts)


def _cut(text: Any) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= TEXT else flat[: TEXT - 1] + "…"


def last_active(session: Mapping[str, Any]) -> datetime | None:
    """When the session last recorded something: its newest message or its file's update."""
    messages = session.get("messages") or []
    stamps = [session.get("updated_at"), messages[-1].get("at") if messages else None]
    found = [parse_timestamp(s) for s in stamps if isinstance(s, str) and s]
    return max(found) if found else None


def next_step(session: Mapping[str, Any], summary: Mapping[str, Any]) -> str:
    """What the session meant to do next: the first open next step of its summary so far,
    else the task it was on (its todo list's active item)."""
    steps = [str(s) for s in summary.get("next_steps") or () if str(s).strip()]
    if steps:
        return _cut(steps[0])
    return _cut((session.get("current_context") or {}).get("active_task"))


def unfinished(
    files: SessionFiles,
    summarizer: Summarizer,
    *,
    now: datetime,
    exclude: Sequence[str] = (),
    active_at: Mapping[str, datetime] | None = None,
    among: Sequence[str] | None = None,
) -> list[Unfinished]:
    """The other open (active or paused) sessions with something recorded and activity
    within ``WITHIN``, the most recently active first, at most ``LIMIT``. ``active_at``: when
    a session was last active, where the caller knows better than its file (an agent's own
    transcript); ``among``: the open sessions' ids when the caller listed them already."""
    found: list[tuple[datetime, Mapping[str, Any]]] = []
    if among is None:
        among = [i.id for i in files.list() if i.status in ("active", "paused")]
    for sid in among:
        session = files.get(sid) if sid not in exclude else None
        if session is None or session.get("status") not in ("active", "paused"):
            continue
        when = (active_at or {}).get(sid) or last_active(session)
        if when is not None and now - when <= WITHIN and has_activity(session):
            found.append((when, session))
    found.sort(key=lambda pair: pair[0], reverse=True)
    result = []
    for when, other in found[:LIMIT]:
        summary = summarizer.end_summary(end_request(other)).as_dict()
        result.append(
            Unfinished(
                session_id=str(other["id"]),
                name=str(other.get("name") or ""),
                channel=str(other.get("channel") or ""),
                status=str(other.get("status")),
                goal=_cut(other.get("goal") or summary.get("goal")),
                next_step=next_step(other, summary),
                last_active=when,
            )
        )
    return result

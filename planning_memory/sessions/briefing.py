"""What an agent is told about a session: the temporal context and ``get_session_context``.

The time zone comes from ``core.temporal.local_zone`` (the same lookup as ``pmem context``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, tzinfo
from typing import Any

from planning_memory.core import parse_timestamp, temporal
from planning_memory.sessions.files import SessionFiles, Settings, unsummarized


def _last_at(session: Mapping[str, Any]) -> datetime | None:
    messages = session["messages"]
    return parse_timestamp(messages[-1]["at"]) if messages else None


def temporal_context(
    files: SessionFiles, tz: tzinfo, session_id: str | None, *, now: datetime
) -> temporal.TemporalContext:
    """Date, time, timezone and the gap notice since the session's last message. Call it
    before recording the incoming message (or use ``Appended.gap_days``)."""
    last = _last_at(files.load(session_id).value) if session_id is not None else None
    return temporal.temporal_context(now, tz, last)


def conversation_context(session: Mapping[str, Any]) -> str:
    """Seed 001's ``<conversation_context>`` body: the rolling summary and key facts."""
    rolling = session["rolling_summary"]
    if not rolling["summary"] and not rolling["key_facts"]:
        return ""
    lines = ["A concise summary of the earlier conversation and key facts of this session:"]
    if rolling["summary"]:
        lines.append(rolling["summary"])
    lines += [f"- {fact}" for fact in rolling["key_facts"]]
    return "\n".join(lines)


def context(
    files: SessionFiles, settings: Settings, tz: tzinfo, session_id: str, *, now: datetime
) -> dict[str, Any]:
    """What an agent should know about the session (``get_session_context``)."""
    session = files.get(session_id)
    stamp = temporal.temporal_context(now, tz, _last_at(session))
    return {
        "session": files.info(session).as_dict(),
        "current_context": session["current_context"],
        "conversation_context": conversation_context(session),
        "rolling_summary": session["rolling_summary"],
        "window": files.window(session_id, settings.window),
        "not_yet_summarized": max(0, unsummarized(session) - settings.window),
        "decisions": session["decisions"][-10:],
        "files_accessed": session["files_accessed"][-20:],
        "steps": session["steps"][-10:],
        "errors": (session.get("errors") or [])[-10:],
        "temporal": stamp.as_dict(),
    }

"""A session's life: start, rename, pause and resume (with checkpoints), end and delete.

Pause writes a checkpoint (``persistOnPause``) and resume puts it back, undoing whatever
happened to the live state meanwhile. End asks the summariser for seed 003's end summary
(Goal, Instructions, Discoveries, Accomplished, Next Steps, Relevant Files); if it fails the
session stays as it was. Delete removes the session file, its archive chunks and its queue
marker under one lock.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from planning_memory.core import new_id, privacy, schema, timestamp
from planning_memory.errors import ConflictError, InputError, NotFoundError
from planning_memory.sessions import summarize
from planning_memory.sessions.files import (
    CHECKPOINT_KEYS,
    STATUSES,
    Session,
    SessionFiles,
    Settings,
    check_part,
    new_session,
    require,
    summarized_live,
)
from planning_memory.sessions.log import millis, opt_text, text
from planning_memory.store import ABSENT


def check_channel(value: Any) -> str:
    """A channel: 1-200 characters, no control characters (surrounding spaces dropped)."""
    if not isinstance(value, str) or not value.strip() or len(value) > 200:
        raise InputError(
            f"invalid channel {value!r}",
            hint="a channel is 1-200 characters: cli, claude-code, discord:<channel-id>, ...",
        )
    if any(ord(c) < 32 for c in value):
        raise InputError("a channel may not contain control characters")
    return value.strip()


def _name(value: Any) -> str | None:
    if value is None:
        return None
    name = text("name", value, empty=False).strip()
    if len(name) > 200 or "\n" in name:
        raise InputError("a session name is one line of at most 200 characters")
    return name


def start(
    files: SessionFiles, channel: str, *, now: datetime, goal: str | None, name: str | None
) -> Session:
    """Create and write a new active session on ``channel``."""
    session = new_session(
        new_id("ses", millis(now)), check_channel(channel), opt_text("goal", goal), _name(name), now
    )
    path = files.path(session["id"])
    schema.check("session", session, path=files.store.rel(path))
    with files.store.lock():
        files.store.write_json(path, session, expect=ABSENT)
    return session


def set_name(files: SessionFiles, session_id: str, name: str | None, *, now: datetime) -> Session:
    """Name (or, with None, unname) the session, whatever its status."""
    clean = _name(name)
    return files.mutate(session_id, lambda s: s.update(name=clean), now=now, states=STATUSES)[0]


# -- pause, resume, checkpoints ----------------------------------------------------------------
def snapshot(session: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """A checkpoint of the session's state (``save_to_checkpoint``)."""
    data = {key: copy.deepcopy(session.get(key)) for key in CHECKPOINT_KEYS}
    data["archived_count"] = int(data["archived_count"] or 0)
    data["saved_at"] = timestamp(now)
    return data


def pause(files: SessionFiles, settings: Settings, session_id: str, *, now: datetime) -> Session:
    """Pause; with ``persistOnPause`` the state is saved in ``checkpoint``."""

    def apply(session: Session) -> None:
        session["checkpoint"] = snapshot(session, now) if settings.persist_on_pause else None
        session["status"] = "paused"

    return files.mutate(session_id, apply, now=now)[0]


def resume(files: SessionFiles, session_id: str, *, now: datetime) -> Session:
    """Resume a paused session, restoring its checkpoint when it has one."""

    def apply(session: Session) -> None:
        if session.get("checkpoint"):
            _restore_into(session, session["checkpoint"])
        session["checkpoint"] = None
        session["status"] = "active"
        schema.check("session", session)

    return files.mutate(session_id, apply, now=now, states=("paused",))[0]


def restore(
    files: SessionFiles, session_id: str, data: Mapping[str, Any], *, now: datetime
) -> Session:
    """Put a ``snapshot`` back into the session (``restore_from_checkpoint``)."""
    clean = privacy.redact_value(dict(data)) if isinstance(data, Mapping) else data

    def apply(session: Session) -> None:
        _restore_into(session, clean)
        schema.check("session", session)

    return files.mutate(session_id, apply, now=now, states=("active", "paused"))[0]


def _restore_into(session: Session, data: Mapping[str, Any]) -> None:
    if not isinstance(data, Mapping) or set(CHECKPOINT_KEYS) - set(data):
        raise InputError(
            "a checkpoint needs the keys " + ", ".join(CHECKPOINT_KEYS), record_id=session["id"]
        )
    if int(data["archived_count"]) != int(session.get("archived_count", 0)):
        raise ConflictError(
            "checkpoint predates messages moved to the archive since; not restored",
            record_id=session["id"],
        )
    for key in CHECKPOINT_KEYS:
        session[key] = copy.deepcopy(data[key])


# -- end, delete -------------------------------------------------------------------------------
def end(
    files: SessionFiles, session_id: str, summarizer: summarize.Summarizer, *, now: datetime
) -> Session:
    """End the session with seed 003's summary. If the summariser fails, nothing changes."""
    session = files.load(session_id).value
    require(session, ("active", "paused"))
    result = summarizer.end_summary(end_request(session)).as_dict()
    result["goal"] = privacy.redact(result["goal"])
    for key in ("instructions", "discoveries", "accomplished", "next_steps"):
        result[key] = [privacy.redact(item) for item in result[key]]
    check_part("end_summary", result)

    def apply(s: Session) -> None:
        s.update(status="ended", ended_at=timestamp(now), end_summary=result, checkpoint=None)

    return files.mutate(session_id, apply, now=now, states=("active", "paused"))[0]


def end_request(session: Mapping[str, Any]) -> summarize.EndRequest:
    """What the summariser is given for the end summary: the rolling summary and key facts,
    the messages not yet in it, the decisions, files, steps and current context."""
    rolling = session["rolling_summary"]
    return summarize.EndRequest(
        goal=session.get("goal"),
        summary=rolling["summary"],
        key_facts=tuple(rolling["key_facts"]),
        messages=tuple(session["messages"][summarized_live(session) :]),
        decisions=tuple(session["decisions"]),
        files_accessed=tuple(session["files_accessed"]),
        steps=tuple(session["steps"]),
        current_context=dict(session["current_context"]),
    )


@dataclass(frozen=True)
class Deleted:
    """What ``delete`` removed."""

    session_id: str
    paths: list[str]  # every file removed, relative to the repository
    message_ids: list[str]  # for the caller to drop from derived indexes


def delete(files: SessionFiles, session_id: str) -> Deleted:
    """Delete the session and all that belongs to it: archive chunks and queued summary."""
    store = files.store
    removed: list[str] = []
    with store.lock():
        path = files.path(session_id)
        chunks = [p for _start, p in files.chunk_paths(session_id)]
        ids = [m["id"] for chunk in chunks for m in store.read_json(chunk).get("messages", [])]
        if path.exists():
            ids += [m["id"] for m in files.load(session_id).value["messages"]]
        for target in (path, *chunks, files.queue_path(session_id)):
            if store.delete(target):
                removed.append(store.rel(target))
    if not removed:
        raise NotFoundError(f"no session {session_id}", record_id=session_id)
    return Deleted(session_id, removed, ids)

"""A session's life: start, rename, pause and resume (with checkpoints), end and delete.

Pause writes a checkpoint (``persistOnPause``) and resume puts it back, undoing whatever
happened to the live state meanwhile. End asks the summariser for seed 003's end summary
(Goal, Instructions, Discoveries, Accomplished, Next Steps, Relevant Files); a summariser
command that fails gives way to the built-in one, with a system message saying so, and a
session with nothing recorded (or an empty summary) keeps the end summary it had. A new
session can inherit the standing facts of an ended one (``inherit``): they open its key facts,
marked ``Earlier session: ``, and stay out of its own end summary. Delete removes the session
file, its archive chunks and its queue marker under one lock.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from planning_memory import sessions as _sessions  # the built-in summariser, when used
from planning_memory.core import new_id, privacy, schema, timestamp
from planning_memory.errors import ConflictError, ExternalCommandError, InputError, NotFoundError
from planning_memory.sessions.files import (
    CHECKPOINT_KEYS,
    OPTIONAL_CHECKPOINT_KEYS,
    STATUSES,
    Session,
    SessionFiles,
    Settings,
    check_part,
    new_session,
    require,
    said_something,
    summarized_live,
)
from planning_memory.sessions.log import decision_fact, millis, opt_text, text
from planning_memory.sessions.repeats import said_before
from planning_memory.sessions.repeats import words as repeat_words
from planning_memory.sessions.summary_base import EndRequest, Summarizer, message_facts, unique
from planning_memory.store import ABSENT

OPEN = ("active", "paused")
INHERITED = "Earlier session: "  # how an inherited key fact begins
INHERITED_FACTS = 10  # the newest standing facts a session inherits


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


def set_goal(files: SessionFiles, session_id: str, goal: str | None, *, now: datetime) -> Session:
    """Set (or, with None, clear) the goal of an open session."""
    clean = opt_text("goal", goal)
    return files.mutate(session_id, lambda s: s.update(goal=clean), now=now, states=OPEN)[0]


# -- pause, resume, checkpoints ----------------------------------------------------------------
def snapshot(session: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """A checkpoint of the session's state (``save_to_checkpoint``)."""
    data = {key: copy.deepcopy(session.get(key)) for key in CHECKPOINT_KEYS}
    data |= {k: copy.deepcopy(session[k]) for k in OPTIONAL_CHECKPOINT_KEYS if k in session}
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
    for key in (*CHECKPOINT_KEYS, *(k for k in OPTIONAL_CHECKPOINT_KEYS if k in data)):
        session[key] = copy.deepcopy(data[key])


# -- end, delete -------------------------------------------------------------------------------
def end(
    files: SessionFiles, session_id: str, summarizer: Summarizer | None, *, now: datetime
) -> Session:
    """End the session with seed 003's summary (none when ``summarizer`` is None). A
    summariser command that fails gives way to the built-in summariser (a system message
    records why); a session with nothing recorded, or whose summary comes out empty, keeps
    the end summary it had (null for a new one)."""
    session = files.load(session_id).value
    require(session, OPEN)
    result, warning = (None, None)
    if summarizer is not None and has_activity(session):
        result, warning = _end_summary(session, summarizer)
    note = _message("system", warning, now) if warning else None

    def apply(s: Session) -> None:
        if note is not None:
            s["messages"].append(note)
        summary = result if said_something(result) else s["end_summary"]
        s.update(status="ended", ended_at=timestamp(now), end_summary=summary, checkpoint=None)

    return files.mutate(session_id, apply, now=now, states=OPEN)[0]


def checkpoint(
    files: SessionFiles, session_id: str, summarizer: Summarizer, *, now: datetime
) -> Session:
    """Seed 003's compaction checkpoint: the session's summary so far (Goal ... Relevant
    Files) kept as its summary with the ``outcome`` of what it was doing (``checkpoint_outcome``);
    the session stays open and its end summary replaces this one. A session with nothing
    recorded, or a summary that says nothing, is left as it is."""
    session: Session = files.load(session_id).value
    require(session, OPEN)
    if not has_activity(session):
        return session
    result, _warning = _end_summary(session, summarizer)
    if not said_something(result):
        return session
    result["outcome"] = checkpoint_outcome(session["messages"])
    check_part("end_summary", result)
    return files.mutate(session_id, lambda s: s.update(end_summary=result), now=now, states=OPEN)[0]


_FAILED = re.compile(
    r"(?i)\b(?:errors?|failed|failing|fails|failure|traceback|exception|broken|not working"
    r"|doesn['’]?t work|fall[oó]|fallan?|no funciona)\b"
)
_CONFIRMED = re.compile(
    r"(?i)\b(?:passed|passing|passes|works|working|fixed|done|succeeded|success|green|listo"
    r"|funciona|arreglado|pasan)\b"
)


def checkpoint_outcome(messages: Sequence[Mapping[str, Any]]) -> str:
    """``confirmed``, ``failed`` or ``unknown``: the newest of the last ten messages (their
    text and tool output) that says only one of "it works" / "it failed" decides."""
    for message in reversed(messages[-10:]):
        said = " ".join(
            [str(message.get("content") or "")]
            + [str(t.get("output") or "") for t in message.get("tool_results") or ()]
        )
        failed, confirmed = bool(_FAILED.search(said)), bool(_CONFIRMED.search(said))
        if failed != confirmed:
            return "failed" if failed else "confirmed"
    return "unknown"


def has_activity(session: Mapping[str, Any]) -> bool:
    """Whether anything was recorded in the session: messages, decisions, files, steps,
    errors."""
    keys = ("messages", "decisions", "files_accessed", "steps", "errors")
    return bool(session.get("archived_count")) or any(session.get(k) for k in keys)


def _end_summary(
    session: Mapping[str, Any], summarizer: Summarizer
) -> tuple[dict[str, Any], str | None]:
    """The redacted, checked end summary and, when the command failed, why."""
    request = end_request(session)
    warning = None
    try:
        result = summarizer.end_summary(request).as_dict()
    except ExternalCommandError as exc:
        if isinstance(summarizer, _sessions.ExtractiveSummarizer):
            raise
        warning = f"End summary written by the built-in summariser: {exc.message}"
        result = _sessions.ExtractiveSummarizer().end_summary(request).as_dict()
    result["goal"] = privacy.redact(result["goal"])
    for key in ("instructions", "discoveries", "accomplished", "next_steps"):
        result[key] = [privacy.redact(item) for item in result[key]]
    check_part("end_summary", result)
    return result, warning


def _message(role: str, content: str, now: datetime) -> dict[str, Any]:
    return {
        "id": new_id("msg", millis(now)),
        "role": role,
        "content": text("content", privacy.truncate_field(content)),
        "at": timestamp(now),
        "tool_results": [],
    }


def end_request(session: Mapping[str, Any]) -> EndRequest:
    """What the summariser is given for the end summary: the rolling summary and key facts
    (not the inherited ones: the summary tells what this session did and learned), the
    messages not yet in it, the decisions, files, steps and current context."""
    rolling = session["rolling_summary"]
    return EndRequest(
        goal=session.get("goal"),
        summary=rolling["summary"],
        key_facts=tuple(f for f in rolling["key_facts"] if not f.startswith(INHERITED)),
        messages=tuple(session["messages"][summarized_live(session) :]),
        decisions=tuple(session["decisions"]),
        files_accessed=tuple(session["files_accessed"]),
        steps=tuple(session["steps"]),
        current_context=dict(session["current_context"]),
        errors=tuple(session.get("errors") or ()),
    )


# -- inheriting ------------------------------------------------------------------------------
def standing_facts(session: Mapping[str, Any]) -> list[str]:
    """What a session knew when it ended, oldest first: its key facts (inherited ones
    included), the facts of its messages not yet summarised (decisions, stated facts,
    preferences, ``[MEMORIZE: ...]``; the extractive rules) and its decisions (those the
    facts do not already say: a decision recorded from a message is that message's fact)."""
    try:
        fresh = session["messages"][summarized_live(session) :]
    except ConflictError:
        fresh = session["messages"]
    facts = [
        *session["rolling_summary"]["key_facts"],
        *(f for m in fresh for f in message_facts(m)),
    ]
    known = [repeat_words(f) for f in facts]
    decided = [
        d for d in session["decisions"] if not said_before(d["decision"], known, within=True)
    ]
    return [*facts, *map(decision_fact, decided)]


def inherit(
    files: SessionFiles, settings: Settings, session_id: str, source_id: str, *, now: datetime
) -> list[str]:
    """Open the session's key facts with the newest ``INHERITED_FACTS`` standing facts of
    ``source_id``, each marked ``Earlier session: ``; returns them."""
    marked = [
        f if f.startswith(INHERITED) else INHERITED + f
        for f in standing_facts(files.load(source_id).value)
    ]
    facts = unique(marked)[-INHERITED_FACTS:]

    def apply(session: Session) -> None:
        rolling = session["rolling_summary"]
        rolling["key_facts"] = settings.cap_facts([*facts, *rolling["key_facts"]])

    if facts:
        files.mutate(session_id, apply, now=now, states=OPEN)
    return facts


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

"""The rolling summary: draining the summary queue, a batch per summariser call, and the archive.

``drain`` takes each queued session, folds the oldest unsummarised messages outside the window
into ``rolling_summary`` (the summariser runs outside the lock; under the lock the batch must
still follow the summary's end, else another process got there first and the round starts
again), and repeats until only the window is left. Past ``maxConversationLength`` the
summarised messages older than the window move to an append-only archive chunk. A failing
summariser leaves the session as it was and the marker in the queue.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

from planning_memory.core import parse_timestamp, privacy, timestamp
from planning_memory.errors import ExternalCommandError, NotFoundError
from planning_memory.sessions.files import (
    Session,
    SessionFiles,
    Settings,
    check_part,
    summarized_live,
)
from planning_memory.sessions.summary_base import Summarizer, Summary, SummaryRequest

MAX_DRAIN_ROUNDS = 50


@dataclass(frozen=True)
class SummaryOutcome:
    """What one session's summary run did. ``status``: ``done`` (summarised and/or archived),
    ``nothing`` (nothing was due), ``skipped`` (paused; stays queued), ``waiting`` (fewer
    messages due than ``min_batch`` and not idle; stays queued), ``failed`` (the
    summariser failed: ``error`` says why; the session is unchanged and stays queued),
    ``gone`` (the session was deleted)."""

    session_id: str
    status: str
    summarized: int = 0
    archived: int = 0
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def drain(
    files: SessionFiles,
    settings: Settings,
    summarizer: Summarizer,
    *,
    now: datetime,
    session_ids: Sequence[str] | None = None,
    min_batch: int = 1,
    idle: timedelta | None = None,
) -> list[SummaryOutcome]:
    """Summarise every queued session (or just ``session_ids``, queued or not). A session
    with fewer than ``min_batch`` messages due stays queued (``waiting``) unless its newest
    message is at least ``idle`` old: a daemon can pass e.g. 10 and 5 minutes, so that the
    summariser (a model, or the built-in one, which ranks a batch's sentences together)
    sees whole stretches of talk rather than one message at a time, and a quiet session is
    still summarised. Waiting loses nothing: the messages stay in the session."""
    ids = list(session_ids) if session_ids is not None else files.queued()
    return [
        summarize_session(files, settings, summarizer, sid, now=now, min_batch=min_batch, idle=idle)
        for sid in ids
    ]


def summarize_session(
    files: SessionFiles,
    settings: Settings,
    summarizer: Summarizer,
    session_id: str,
    *,
    now: datetime,
    min_batch: int = 1,
    idle: timedelta | None = None,
) -> SummaryOutcome:
    """Fold what is older than the window into the rolling summary, a batch per summariser
    call (run outside the lock), then archive past ``maxConversationLength``. Fewer than
    ``min_batch`` messages due wait, unless the session is ``idle`` (see ``drain``)."""
    done = archived = 0
    for _round in range(MAX_DRAIN_ROUNDS):
        with files.store.lock():
            try:
                session = files.load(session_id).value
            except NotFoundError:
                files.dequeue(session_id)
                return SummaryOutcome(session_id, "gone", done, archived)
            if session["status"] == "paused":
                return SummaryOutcome(session_id, "skipped", done, archived)
            batch = _batch(session, settings)
            if batch and not done and len(batch) < min_batch and not _idle(session, now, idle):
                return SummaryOutcome(session_id, "waiting")
            if not batch:
                archived += _apply(files, settings, session_id, None, (), now)
                files.dequeue(session_id)
                return SummaryOutcome(
                    session_id, "done" if done or archived else "nothing", done, archived
                )
            request = SummaryRequest(
                messages=batch,
                previous_summary=session["rolling_summary"]["summary"],
                previous_facts=tuple(session["rolling_summary"]["key_facts"]),
                goal=session.get("goal"),
            )
        try:
            result = summarizer.summarize(request)
        except ExternalCommandError as exc:
            _note_failure(files, session_id, str(exc), now)
            return SummaryOutcome(session_id, "failed", done, archived, str(exc))
        with files.store.lock():
            archived += _apply(files, settings, session_id, result, batch, now)
        done += len(batch)
    return SummaryOutcome(session_id, "done", done, archived)


def _idle(session: Mapping[str, Any], now: datetime, idle: timedelta | None) -> bool:
    """Whether the session's newest message is at least ``idle`` old."""
    if idle is None or not session["messages"]:
        return False
    return now - parse_timestamp(session["messages"][-1]["at"]) >= idle


def _batch(session: Mapping[str, Any], settings: Settings) -> list[dict[str, Any]]:
    """The oldest unsummarised messages outside the window, at most ``summary_batch``."""
    first = summarized_live(session)
    last = min(len(session["messages"]) - settings.window, first + settings.summary_batch)
    return list(session["messages"][first:last]) if last > first else []


def _apply(
    files: SessionFiles,
    settings: Settings,
    session_id: str,
    result: Summary | None,
    batch: Sequence[Mapping[str, Any]],
    now: datetime,
) -> int:
    """Under the lock: fold ``result`` for ``batch`` into the summary (only if the batch still
    follows the summary's end: otherwise another process got there first), then archive.
    Returns how many messages were archived."""
    loaded = files.load(session_id)
    session: Session = loaded.value
    changed = False
    if result is not None and batch:
        first = summarized_live(session)
        ids = [m["id"] for m in session["messages"][first : first + len(batch)]]
        if ids != [m["id"] for m in batch]:
            return 0  # raced with another summariser; the next round starts afresh
        rolling = session["rolling_summary"]
        facts = [privacy.redact(f) for f in result.key_facts]
        rolling["summary"] = privacy.truncate_field(privacy.redact(result.summary))
        rolling["key_facts"] = settings.cap_facts([*rolling["key_facts"], *facts])
        rolling["last_summarized_msg_id"] = batch[-1]["id"]
        rolling["message_count"] = int(rolling["message_count"]) + len(batch)
        check_part("rolling_summary", rolling)
        changed = True
    moved = _archive_move(files, session, settings)
    if changed or moved:
        session["updated_at"] = max(session["updated_at"], timestamp(now))
        files.write(loaded.path, session, expect=loaded.digest)
    return moved


def _archive_move(files: SessionFiles, session: Session, settings: Settings) -> int:
    """Past ``maxConversationLength``, write the summarised messages older than the window to
    a new archive chunk and drop them from the live list (the caller writes the session)."""
    live = session["messages"]
    if len(live) <= settings.max_conversation:
        return 0
    count = min(summarized_live(session), len(live) - settings.window)
    if count <= 0:
        return 0
    start = int(session["archived_count"])
    chunk = {"session_id": session["id"], "start": start, "messages": live[:count]}
    files.store.write_json(files.chunk_path(session["id"], start), chunk)
    del live[:count]
    session["archived_count"] = start + count
    return count


def _note_failure(files: SessionFiles, session_id: str, error: str, now: datetime) -> None:
    """Record why the summary failed in the queue marker (the session stays unchanged)."""
    path = files.queue_path(session_id)
    with files.store.lock():
        entry = files.store.read_json(path) if path.exists() else {"session_id": session_id}
        entry["attempts"] = int(entry.get("attempts", 0)) + 1
        entry["last_error"] = error
        entry["last_attempt_at"] = timestamp(now)
        entry.setdefault("queued_at", timestamp(now))
        files.store.write_json(path, entry)

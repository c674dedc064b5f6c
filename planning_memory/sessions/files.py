"""The on-disk session: its shape, where its files live, reading them and the locked rewrite.

One file per session, ``memory/short-term/session-<id>.json`` (schema ``session``), plus
append-only archive chunks ``short-term/archive/<id>.<start:08d>.json`` (``start`` = index of
the chunk's first message in the whole conversation) and the summary queue marker
``short-term/queue/<id>.json``. A change takes the store lock, re-reads the file and writes it
back with the digest it read (``SessionFiles.mutate``), so concurrent processes lose nothing
and an editor's change is never overwritten.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from planning_memory.core import (
    Layout,
    check_id,
    codec,
    effective_config,
    schema,
    stamps,
    timestamp,
)
from planning_memory.errors import ConflictError, InputError, NotFoundError
from planning_memory.sessions.summary_base import unique
from planning_memory.store import Loaded, Store

Session = dict[str, Any]
T = TypeVar("T")

DEFAULT_CHANNEL = "cli"
CONTEXT_KEYS = ("active_task", "active_phase", "focus_area")
STATUSES = ("active", "paused", "ended")
CHECKPOINT_KEYS = (
    "goal",
    "name",
    "messages",
    "archived_count",
    "decisions",
    "files_accessed",
    "steps",
    "current_context",
    "rolling_summary",
)
OPTIONAL_CHECKPOINT_KEYS = ("errors",)  # restored when the checkpoint has them
SUMMARY_BATCH = 200  # messages per summariser call
MAX_KEY_FACTS = 200  # the rolling summary keeps the newest; the messages stay in the archive
_RETRIES = 5
# A listing's row of each session file, by path, with the file's stamp (``core.stamps``):
# a listing reads again only the files whose stamp moved, so a process that lists often (the
# hook server, a session start that lists three times) parses each session once per change.
_LISTED: dict[str, tuple[tuple[int, int], SessionInfo]] = {}
_LISTED_MAX = 4096


@dataclass(frozen=True)
class Settings:
    """What the part acts on: the config's ``memory.shortTerm`` values and two fixed caps."""

    window: int = 15
    max_conversation: int = 50
    max_decisions: int = 100
    persist_on_pause: bool = True
    summary_batch: int = SUMMARY_BATCH
    max_key_facts: int = MAX_KEY_FACTS

    @classmethod
    def of(cls, config: Mapping[str, Any] | None) -> Settings:
        short = effective_config(config)["memory"]["shortTerm"]
        return cls(
            window=max(1, int(short["contextWindow"])),
            max_conversation=max(1, int(short["maxConversationLength"])),
            max_decisions=max(1, int(short["maxDecisions"])),
            persist_on_pause=bool(short["persistOnPause"]),
        )

    def cap_facts(self, facts: Sequence[str]) -> list[str]:
        """Key facts without repeats, at most ``max_key_facts`` (the newest)."""
        return unique(facts)[-self.max_key_facts :]


# -- values ------------------------------------------------------------------------------------
def new_session(
    session_id: str, channel: str, goal: str | None, name: str | None, now: datetime
) -> Session:
    """A new active session, as written by ``start`` (and by importers)."""
    stamp = timestamp(now)
    return {
        "id": session_id,
        "channel": channel,
        "name": name,
        "status": "active",
        "goal": goal,
        "started_at": stamp,
        "updated_at": stamp,
        "ended_at": None,
        "messages": [],
        "archived_count": 0,
        "decisions": [],
        "files_accessed": [],
        "steps": [],
        "errors": [],
        "current_context": dict.fromkeys(CONTEXT_KEYS),
        "rolling_summary": {
            "summary": "",
            "key_facts": [],
            "last_summarized_msg_id": None,
            "message_count": 0,
        },
        "end_summary": None,
        "checkpoint": None,
    }


_STUB = new_session("ses_0", DEFAULT_CHANNEL, None, None, datetime(1970, 1, 1, tzinfo=UTC))
_REQUIRED = frozenset(_STUB) - {"name", "archived_count", "errors"}  # older files lack these


def check_part(key: str, value: Any, *, path: str | None = None) -> None:
    """Schema-check one new piece (a message, a decision...) without the whole session."""
    stub = dict(_STUB)
    stub[key] = value
    schema.check("session", stub, path=path)


def summarized_live(session: Mapping[str, Any]) -> int:
    """How many messages at the start of the live list are already in the rolling summary."""
    rolling = session["rolling_summary"]
    count = int(rolling["message_count"]) - int(session.get("archived_count", 0))
    last = rolling["last_summarized_msg_id"]
    messages = session["messages"]
    if count > 0 and (count > len(messages) or messages[count - 1]["id"] != last):
        count = next((i + 1 for i, m in enumerate(messages) if m["id"] == last), -1)
        if count < 0:
            raise ConflictError(
                f"message {last} that ends the rolling summary is not in the session",
                record_id=session["id"],
                hint="the session file was edited by hand; restore it or delete the session",
            )
    return max(count, 0)


def unsummarized(session: Mapping[str, Any]) -> int:
    return len(session["messages"]) - summarized_live(session)


def needs_summary(session: Mapping[str, Any], settings: Settings) -> bool:
    """True when messages older than the window are not yet in the rolling summary (or the
    summary's boundary is lost: the drain then reports it; recording must not fail)."""
    try:
        return unsummarized(session) > settings.window
    except ConflictError:
        return True


def _looks_like_session(value: Any) -> bool:
    """A cheap structural check for the hot path (the full schema check is in ``get``)."""
    return (
        isinstance(value, dict)
        and value.keys() >= _REQUIRED
        and isinstance(value["messages"], list)
        and isinstance(value["rolling_summary"], dict)
        and value["status"] in STATUSES
    )


def require(session: Mapping[str, Any], states: Sequence[str]) -> None:
    """Refuse to act on a session whose status is not one of ``states``."""
    status = session["status"]
    if status in states:
        return
    hint = {
        "paused": f"resume it first: `pmem session resume {session['id']}`",
        "ended": "start a new session: `pmem session start`",
    }.get(status)
    raise InputError(f"session {session['id']} is {status}", record_id=session["id"], hint=hint)


@dataclass(frozen=True)
class SessionInfo:
    """One row of ``pmem session list``."""

    id: str
    channel: str
    name: str | None
    status: str
    goal: str | None
    started_at: str
    updated_at: str
    ended_at: str | None
    message_count: int
    summarized_count: int
    summary_pending: bool

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# -- the files ---------------------------------------------------------------------------------
class SessionFiles:
    """The session files of one memory tree: paths, reads and the locked read-modify-write."""

    def __init__(self, layout: Layout, store: Store) -> None:
        self.layout = layout
        self.store = store

    def path(self, session_id: str) -> Path:
        return self.layout.session_path(session_id)

    def queue_path(self, session_id: str) -> Path:
        return self.layout.short_term / "queue" / f"{check_id(session_id)}.json"

    def chunk_path(self, session_id: str, start: int) -> Path:
        return self.layout.short_term / "archive" / f"{check_id(session_id)}.{start:08d}.json"

    def chunk_paths(self, session_id: str) -> list[tuple[int, Path]]:
        """``(start, path)`` of every archive chunk file of the session, oldest first."""
        prefix = f"{check_id(session_id)}."
        found = []
        for path in self.store.list_json(self.layout.short_term / "archive"):
            start = path.name[len(prefix) : -len(".json")]
            if path.name.startswith(prefix) and start.isdigit():
                found.append((int(start), path))
        return sorted(found)

    # -- reading -------------------------------------------------------------------------------
    def load(self, session_id: str) -> Loaded:
        """The session file (structurally checked) with the digest to write it back with."""
        path = self.path(session_id)
        try:
            loaded = self.store.load(path)
        except NotFoundError:
            raise NotFoundError(
                f"no session {session_id}",
                record_id=session_id,
                hint="`pmem session list` shows the sessions",
            ) from None
        value = loaded.value
        if not _looks_like_session(value):
            schema.check("session", value, path=self.store.rel(path))
        value.setdefault("archived_count", 0)
        value.setdefault("name", None)
        return loaded

    def get(self, session_id: str) -> Session:
        """The session ``session_id``, schema-checked."""
        loaded = self.load(session_id)
        schema.check("session", loaded.value, path=self.store.rel(loaded.path))
        value: Session = loaded.value
        return value

    def all(self) -> list[Session]:
        """Every readable session file, unchecked (for listing)."""
        out = []
        for path in self.store.list_json(self.layout.short_term):
            if path.name.startswith("session-"):
                value = self._listable(path)
                if value is not None:
                    out.append(value)
        return out

    def _listable(self, path: Path) -> Session | None:
        """The session file at ``path`` as a listing takes it (None: not a session)."""
        value = self.store.read_json(path)
        if isinstance(value, dict) and "id" in value:
            value.setdefault("archived_count", 0)
            value.setdefault("name", None)
            return value
        return None

    def _rows(self) -> list[tuple[SessionInfo | None, Session | None]]:
        """Each readable session file as ``(its row, None)``, its row without
        ``summary_pending``, or as ``(None, the file's value)`` when it has no row (a
        hand-edited file ``info`` cannot read). A file is read only when its stamp moved
        since the last listing in this process."""
        out: list[tuple[SessionInfo | None, Session | None]] = []
        for path in self.store.list_json(self.layout.short_term):
            if not path.name.startswith("session-"):
                continue
            key = os.fspath(path)
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                continue
            stamp = stamps.file_stamp(st, time.time_ns())
            known = _LISTED.get(key)
            if known is not None and stamp[0] and known[0] == stamp:
                out.append((known[1], None))
                continue
            value = self._listable(path)  # as ``all`` reads it: the store's checks and errors
            if value is None:
                continue
            try:
                row = replace(self.info(value), summary_pending=False)
            except (KeyError, TypeError, ValueError, AttributeError):
                out.append((None, value))
                continue
            if stamp[0] and stat.S_ISREG(st.st_mode):
                if len(_LISTED) >= _LISTED_MAX:
                    _LISTED.clear()
                _LISTED[key] = (stamp, row)
            out.append((row, None))
        return out

    def info(self, session: Mapping[str, Any]) -> SessionInfo:
        return SessionInfo(
            id=session["id"],
            channel=session["channel"],
            name=session.get("name"),
            status=session["status"],
            goal=session.get("goal"),
            started_at=session["started_at"],
            updated_at=session["updated_at"],
            ended_at=session.get("ended_at"),
            message_count=len(session["messages"]) + int(session.get("archived_count", 0)),
            summarized_count=int(session["rolling_summary"]["message_count"]),
            summary_pending=self.queue_path(session["id"]).exists(),
        )

    def queued(self) -> list[str]:
        """Ids of the sessions waiting for a summary."""
        folder = self.layout.short_term / "queue"
        return [p.name[: -len(".json")] for p in self.store.list_json(folder)]

    def history(self, session_id: str) -> list[dict[str, Any]]:
        """Every message of the session, archived ones included, oldest first."""
        session = self.load(session_id).value
        return [*self.archived(session), *session["messages"]]

    def archived(self, session: Mapping[str, Any], need: int | None = None) -> list[dict[str, Any]]:
        """The archived messages (only the newest ``need`` if given), oldest first. Chunks at
        or past ``archived_count`` are leftovers of an interrupted move and are ignored."""
        total = int(session.get("archived_count", 0))
        chunks = [(s, p) for s, p in self.chunk_paths(session["id"]) if s < total]
        got: list[list[dict[str, Any]]] = []
        have = 0
        for _start, path in reversed(chunks):
            if need is not None and have >= need:
                break
            messages = self.store.read_json(path).get("messages", [])
            got.append(messages)
            have += len(messages)
        flat = [m for chunk in reversed(got) for m in chunk]
        return flat if need is None else flat[max(0, len(flat) - need) :]

    def window(self, session_id: str, n: int) -> list[dict[str, Any]]:
        """The last ``n`` messages, in order, verbatim (archive chunks read when needed)."""
        if n <= 0:
            return []
        session = self.load(session_id).value
        live: list[dict[str, Any]] = session["messages"]
        if n <= len(live) or not session["archived_count"]:
            return live[-n:]
        return [*self.archived(session, n - len(live)), *live]

    # -- writing -------------------------------------------------------------------------------
    def write(self, path: Path, session: Session, *, expect: str) -> None:
        """Write a session canonically. Every string this part puts into a session has been
        redacted on the way in (recorded text, summaries, restored checkpoints), so the
        store's whole-document redaction pass, which costs O(file size) of regex work per
        recorded message, is skipped here: ``write_bytes`` instead of ``write_json``."""
        self.store.write_bytes(path, codec.dump_bytes(session), expect=expect)

    def mutate(
        self,
        session_id: str,
        change: Callable[[Session], T],
        *,
        now: datetime,
        states: Sequence[str] = ("active",),
    ) -> tuple[Session, T]:
        """Apply ``change`` to the session under the lock; re-read and retry on a conflict."""
        path = self.path(session_id)
        for attempt in range(_RETRIES):
            with self.store.lock():
                loaded = self.load(session_id)
                session: Session = loaded.value
                require(session, states)
                result = change(session)
                session["updated_at"] = timestamp(now)
                try:
                    self.write(path, session, expect=loaded.digest)
                except ConflictError:
                    if attempt + 1 == _RETRIES:
                        raise
                    continue
                return session, result
        raise AssertionError("unreachable")

    def enqueue(self, session_id: str, now: datetime) -> bool:
        """Drop the marker "this session needs a summary" (kept if already there); True when
        it was not there."""
        path = self.queue_path(session_id)
        if path.exists():
            return False
        self.store.write_json(path, {"session_id": session_id, "queued_at": timestamp(now)})
        return True

    def dequeue(self, session_id: str) -> None:
        self.store.delete(self.queue_path(session_id))

    # -- listing: the class's last method, as a method named ``list`` hides the builtin from
    # -- the annotations that follow it
    def list(self, *, channel: str | None = None, status: str | None = None) -> list[SessionInfo]:
        """Sessions (of ``channel`` / with ``status`` if given), newest first."""
        rows, queue = [], os.fspath(self.layout.short_term / "queue")
        for row, value in self._rows():
            if value is not None:  # no row: taken as before, which may raise
                if (channel is None or value["channel"] == channel) and (
                    status is None or value["status"] == status
                ):
                    rows.append(self.info(value))
            elif (
                row is not None
                and (channel is None or row.channel == channel)
                and (status is None or row.status == status)
            ):
                pending = os.path.exists(os.path.join(queue, f"{row.id}.json"))  # ``queue_path``
                rows.append(replace(row, summary_pending=pending))
        return sorted(rows, key=lambda r: (r.started_at, r.id), reverse=True)


def said_something(summary: object) -> bool:
    """Whether an end summary holds anything (an empty ``/clear`` gives one that does not)."""
    return isinstance(summary, Mapping) and any(summary.values())

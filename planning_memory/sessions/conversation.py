"""Short-term sessions: the conversation log, the sliding window and its rolling summary.

One file per session, ``memory/short-term/session-<id>.json`` (schema ``session``). Every
change takes the store lock, re-reads the file and writes it back with the digest it read, so
concurrent processes lose nothing and an editor's change is never overwritten.

- Recording (a message, decision, file access, step, context) is quick and never summarises;
  when the messages not yet summarised outgrow the window it drops a marker in
  ``short-term/queue/<id>.json``. ``drain_summary_queue`` (``pmem session summarize``, the
  daemon) folds everything older than the window into ``rolling_summary``, a batch at a time,
  outside the lock; a failing summariser leaves the session as it was.
- Once the live ``messages`` list is longer than ``maxConversationLength``, messages that are
  summarised *and* older than the window move to append-only archive chunks,
  ``short-term/archive/<id>.<start:08d>.json`` (``start`` = index of the first message in the
  whole conversation); ``archived_count`` says how many. Nothing is ever dropped.
- Decisions past ``maxDecisions`` fold (oldest first) into the summary's ``key_facts``, which
  keeps the newest ``MAX_KEY_FACTS`` (200) facts.
- Pause writes a checkpoint (``persistOnPause``); resume restores it. End writes seed 003's
  end summary. Delete removes the session file, its archive chunks and its queue marker.
"""

from __future__ import annotations

import contextlib
import copy
import os
import posixpath
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any, TypeVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from planning_memory.core import codec, privacy, schema, temporal
from planning_memory.core.ids import check_id, new_id
from planning_memory.core.layout import Layout
from planning_memory.core.model import effective_config, parse_timestamp, timestamp
from planning_memory.errors import (
    ConflictError,
    ExternalCommandError,
    InputError,
    NotFoundError,
    UnsafePathError,
)
from planning_memory.sessions import summarize
from planning_memory.store import ABSENT, Loaded, Store

Session = dict[str, Any]
T = TypeVar("T")

DEFAULT_CHANNEL = "cli"
ROLES = ("user", "assistant", "system", "tool")
FILE_ACTIONS = ("read", "created", "modified", "deleted")
CONTEXT_KEYS = ("active_task", "active_phase", "focus_area")
STATUSES = ("active", "paused", "ended")
STEP_RESULT_CHARS = 200  # seed 002: resultado[:200]
SUMMARY_BATCH = 200  # messages per summariser call
MAX_DRAIN_ROUNDS = 50
MAX_KEY_FACTS = 200  # the rolling summary keeps the newest; the messages stay in the archive
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
_RETRIES = 5


@dataclass(frozen=True)
class Settings:
    """The config's ``memory.shortTerm`` values this module acts on."""

    window: int = 15
    max_conversation: int = 50
    max_decisions: int = 100
    persist_on_pause: bool = True
    timezone: str | None = None

    @classmethod
    def of(cls, config: Mapping[str, Any] | None) -> Settings:
        short = effective_config(config)["memory"]["shortTerm"]
        return cls(
            window=max(1, int(short["contextWindow"])),
            max_conversation=max(1, int(short["maxConversationLength"])),
            max_decisions=max(1, int(short["maxDecisions"])),
            persist_on_pause=bool(short["persistOnPause"]),
            timezone=short.get("timezone"),
        )


# -- paths -------------------------------------------------------------------------------------
def archive_dir(layout: Layout) -> Path:
    return layout.short_term / "archive"


def queue_dir(layout: Layout) -> Path:
    return layout.short_term / "queue"


def queue_path(layout: Layout, session_id: str) -> Path:
    return queue_dir(layout) / f"{check_id(session_id)}.json"


def chunk_path(layout: Layout, session_id: str, start: int) -> Path:
    return archive_dir(layout) / f"{check_id(session_id)}.{start:08d}.json"


def chunk_paths(layout: Layout, store: Store, session_id: str) -> list[tuple[int, Path]]:
    """``(start, path)`` of every archive chunk file of the session, oldest first."""
    prefix = f"{check_id(session_id)}."
    found = []
    for path in store.list_json(archive_dir(layout)):
        start = path.name[len(prefix) : -len(".json")]
        if path.name.startswith(prefix) and start.isdigit():
            found.append((int(start), path))
    return sorted(found)


# -- values ------------------------------------------------------------------------------------
def new_session(
    session_id: str, channel: str, goal: str | None, name: str | None, now: datetime
) -> Session:
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
_REQUIRED = frozenset(_STUB) - {"name", "archived_count"}


def _check_part(key: str, value: Any, *, path: str | None = None) -> None:
    """Schema-check one new piece (a message, a decision...) without the whole session."""
    stub = dict(_STUB)
    stub[key] = value
    schema.check("session", stub, path=path)


def _ms(now: datetime) -> int:
    return int(now.timestamp() * 1000)


def _text(name: str, value: Any, *, empty: bool = True) -> str:
    """``value`` as stored text: a string, private parts and secrets redacted, within limits."""
    if not isinstance(value, str):
        raise InputError(f"{name} must be text, not {type(value).__name__}", json_path=name)
    text = privacy.redact(value)
    privacy.check_field_length(name, text)
    if not empty and not text.strip():
        raise InputError(f"{name} is empty", json_path=name)
    return text


def _opt_text(name: str, value: Any) -> str | None:
    return None if value is None else _text(name, value)


def _channel(value: Any) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 200:
        raise InputError(
            f"invalid channel {value!r}",
            hint="a channel is 1-200 characters: cli, claude-code, discord:<channel-id>, ...",
        )
    if any(ord(c) < 32 for c in value):
        raise InputError("a channel may not contain control characters")
    return value.strip()


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


def snapshot(session: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """A checkpoint of the session's state (``save_to_checkpoint``)."""
    data = {key: copy.deepcopy(session.get(key)) for key in CHECKPOINT_KEYS}
    data["archived_count"] = int(data["archived_count"] or 0)
    data["saved_at"] = timestamp(now)
    return data


# -- reading -----------------------------------------------------------------------------------
def _load(store: Store, layout: Layout, session_id: str) -> Loaded:
    path = layout.session_path(session_id)
    try:
        loaded = store.load(path)
    except NotFoundError:
        raise NotFoundError(
            f"no session {session_id}",
            record_id=session_id,
            hint="`pmem session list` shows the sessions",
        ) from None
    value = loaded.value
    if not _looks_like_session(value):
        schema.check("session", value, path=store.rel(path))
    value.setdefault("archived_count", 0)
    value.setdefault("name", None)
    return loaded


def _looks_like_session(value: Any) -> bool:
    """A cheap structural check for the hot path (the full schema check is in ``get``)."""
    return (
        isinstance(value, dict)
        and value.keys() >= _REQUIRED
        and isinstance(value["messages"], list)
        and isinstance(value["rolling_summary"], dict)
        and value["status"] in STATUSES
    )


def get(layout: Layout, store: Store, session_id: str) -> Session:
    """The session ``session_id``, schema-checked."""
    loaded = _load(store, layout, session_id)
    schema.check("session", loaded.value, path=store.rel(loaded.path))
    value: Session = loaded.value
    return value


def _all(layout: Layout, store: Store) -> list[Session]:
    out = []
    for path in store.list_json(layout.short_term):
        if path.name.startswith("session-"):
            value = store.read_json(path)
            if isinstance(value, dict) and "id" in value:
                value.setdefault("archived_count", 0)
                value.setdefault("name", None)
                out.append(value)
    return out


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


def _info(layout: Layout, session: Mapping[str, Any]) -> SessionInfo:
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
        summary_pending=queue_path(layout, session["id"]).exists(),
    )


def list_sessions(
    layout: Layout, store: Store, *, channel: str | None = None, status: str | None = None
) -> list[SessionInfo]:
    """Sessions (of ``channel`` / with ``status`` if given), newest first."""
    rows = [
        _info(layout, s)
        for s in _all(layout, store)
        if (channel is None or s["channel"] == channel)
        and (status is None or s["status"] == status)
    ]
    return sorted(rows, key=lambda r: (r.started_at, r.id), reverse=True)


def current(layout: Layout, store: Store, channel: str) -> Session | None:
    """The current session of ``channel``: its newest active one, or None."""
    rows = list_sessions(layout, store, channel=_channel(channel), status="active")
    return get(layout, store, rows[0].id) if rows else None


def history(layout: Layout, store: Store, session_id: str) -> list[dict[str, Any]]:
    """Every message of the session, archived ones included, oldest first."""
    session = _load(store, layout, session_id).value
    return [*_archived(layout, store, session), *session["messages"]]


def _archived(
    layout: Layout, store: Store, session: Mapping[str, Any], need: int | None = None
) -> list[dict[str, Any]]:
    """The archived messages (only the newest ``need`` if given), oldest first. Chunks at or
    past ``archived_count`` are leftovers of an interrupted move and are ignored."""
    total = int(session.get("archived_count", 0))
    chunks = [(s, p) for s, p in chunk_paths(layout, store, session["id"]) if s < total]
    got: list[list[dict[str, Any]]] = []
    have = 0
    for _start, path in reversed(chunks):
        if need is not None and have >= need:
            break
        messages = store.read_json(path).get("messages", [])
        got.append(messages)
        have += len(messages)
    flat = [m for chunk in reversed(got) for m in chunk]
    return flat if need is None else flat[max(0, len(flat) - need) :]


def window(
    layout: Layout,
    store: Store,
    config: Mapping[str, Any] | None,
    session_id: str,
    n: int | None = None,
) -> list[dict[str, Any]]:
    """The last ``n`` messages (default: the config's ``contextWindow``), in order, verbatim."""
    n = Settings.of(config).window if n is None else n
    if n <= 0:
        return []
    session = _load(store, layout, session_id).value
    live: list[dict[str, Any]] = session["messages"]
    if n <= len(live) or not session["archived_count"]:
        return live[-n:]
    return [*_archived(layout, store, session, n - len(live)), *live]


# -- writing -----------------------------------------------------------------------------------
def _write(store: Store, path: Path, session: Session, *, expect: str) -> None:
    """Write a session canonically. Every string this module puts into a session has been
    redacted on the way in (``_text``, summaries, restored checkpoints), so the store's
    whole-document redaction pass, which costs O(file size) of regex work per recorded
    message, is skipped here: ``write_bytes`` instead of ``write_json``."""
    store.write_bytes(path, codec.dump_bytes(session), expect=expect)


def _require(session: Mapping[str, Any], states: Sequence[str]) -> None:
    status = session["status"]
    if status in states:
        return
    hint = {
        "paused": f"resume it first: `pmem session resume {session['id']}`",
        "ended": "start a new session: `pmem session start`",
    }.get(status)
    raise InputError(f"session {session['id']} is {status}", record_id=session["id"], hint=hint)


def _mutate(
    layout: Layout,
    store: Store,
    session_id: str,
    change: Callable[[Session], T],
    *,
    now: datetime,
    states: Sequence[str] = ("active",),
) -> tuple[Session, T]:
    """Apply ``change`` to the session under the lock; re-read and retry on a conflict."""
    path = layout.session_path(session_id)
    for attempt in range(_RETRIES):
        with store.lock():
            loaded = _load(store, layout, session_id)
            session: Session = loaded.value
            _require(session, states)
            result = change(session)
            session["updated_at"] = timestamp(now)
            try:
                _write(store, path, session, expect=loaded.digest)
            except ConflictError:
                if attempt + 1 == _RETRIES:
                    raise
                continue
            return session, result
    raise AssertionError("unreachable")


def start(
    layout: Layout,
    store: Store,
    config: Mapping[str, Any] | None,
    *,
    now: datetime,
    channel: str = DEFAULT_CHANNEL,
    goal: str | None = None,
    name: str | None = None,
) -> Session:
    """Create and write a new active session on ``channel``."""
    session = new_session(
        new_id("ses", _ms(now)), _channel(channel), _opt_text("goal", goal), _name(name), now
    )
    path = layout.session_path(session["id"])
    schema.check("session", session, path=store.rel(path))
    with store.lock():
        store.write_json(path, session, expect=ABSENT)
    return session


def _name(value: Any) -> str | None:
    if value is None:
        return None
    text = _text("name", value, empty=False).strip()
    if len(text) > 200 or "\n" in text:
        raise InputError("a session name is one line of at most 200 characters")
    return text


@dataclass(frozen=True)
class Appended:
    """What recording a message did; ``memorize`` holds the ``[MEMORIZE: ...]`` facts found
    in assistant output, for the caller to save as long-term learnings."""

    session_id: str
    message: dict[str, Any]
    memorize: list[str]
    summary_queued: bool
    previous_at: str | None  # when the message before this one was recorded

    def gap_days(self) -> int | None:
        if self.previous_at is None:
            return None
        return temporal.gap_days(
            parse_timestamp(self.message["at"]), parse_timestamp(self.previous_at)
        )


def append_message(
    layout: Layout,
    store: Store,
    config: Mapping[str, Any] | None,
    session_id: str,
    role: str,
    content: str,
    *,
    now: datetime,
    tool_results: Iterable[Mapping[str, Any]] = (),
) -> Appended:
    """Record one message. Never summarises; queues a summary when the window is passed."""
    if role not in ROLES:
        raise InputError(f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
    message: dict[str, Any] = {
        "id": new_id("msg", _ms(now)),
        "role": role,
        "content": _text("content", content),
        "at": timestamp(now),
        "tool_results": [_tool_result(t) for t in tool_results],
    }
    _check_part("messages", [message])
    settings = Settings.of(config)

    def add(session: Session) -> tuple[str | None, bool]:
        previous = session["messages"][-1]["at"] if session["messages"] else None
        session["messages"].append(message)
        return previous, needs_summary(session, settings)

    with store.lock():
        _s, (previous, queue) = _mutate(layout, store, session_id, add, now=now)
        if queue:
            _enqueue(layout, store, session_id, now)
    memorize = summarize.memorize_markers(message["content"]) if role == "assistant" else []
    return Appended(session_id, message, memorize, queue, previous)


def _tool_result(value: Mapping[str, Any]) -> dict[str, str]:
    if not isinstance(value, Mapping) or set(value) != {"name", "output"}:
        raise InputError("a tool result is {name, output}")
    return {
        "name": _text("tool_results.name", value["name"], empty=False),
        "output": _text("tool_results.output", value["output"]),
    }


def _enqueue(layout: Layout, store: Store, session_id: str, now: datetime) -> None:
    path = queue_path(layout, session_id)
    if not path.exists():
        store.write_json(path, {"session_id": session_id, "queued_at": timestamp(now)})


def _dequeue(layout: Layout, store: Store, session_id: str) -> None:
    store.delete(queue_path(layout, session_id))


def record_decision(
    layout: Layout,
    store: Store,
    config: Mapping[str, Any] | None,
    session_id: str,
    question: str,
    decision: str,
    *,
    now: datetime,
    reasoning: str = "",
    alternatives: Iterable[str] = (),
) -> dict[str, Any]:
    """Record a decision; past ``maxDecisions`` the oldest fold into the summary's key facts."""
    item = {
        "id": new_id("dec", _ms(now)),
        "question": _text("question", question, empty=False),
        "decision": _text("decision", decision, empty=False),
        "reasoning": _text("reasoning", reasoning),
        "alternatives": [_text("alternatives", a) for a in alternatives],
        "decided_at": timestamp(now),
    }
    _check_part("decisions", [item])
    limit = Settings.of(config).max_decisions

    def add(session: Session) -> None:
        session["decisions"].append(item)
        excess = len(session["decisions"]) - limit
        if excess > 0:
            folded = [decision_fact(d) for d in session["decisions"][:excess]]
            del session["decisions"][:excess]
            facts = session["rolling_summary"]["key_facts"]
            session["rolling_summary"]["key_facts"] = _cap_facts([*facts, *folded])

    _mutate(layout, store, session_id, add, now=now)
    return item


def _cap_facts(facts: Sequence[str]) -> list[str]:
    """Key facts without repeats, at most ``MAX_KEY_FACTS`` (the newest)."""
    return summarize.unique(facts)[-MAX_KEY_FACTS:]


def decision_fact(decision: Mapping[str, Any]) -> str:
    """A folded decision as a key fact: ``Decision: question -> decision (reasoning)``."""
    text = f"Decision: {decision['question']} -> {decision['decision']}"
    return f"{text} ({decision['reasoning']})" if decision.get("reasoning") else text


def repo_path(layout: Layout, path: str) -> str:
    """``path`` as a repository-relative POSIX path; refuses paths outside the repository."""
    if not isinstance(path, str) or not path.strip() or "\x00" in path:
        raise InputError(f"invalid file path {path!r}")
    raw = path.strip().replace("\\", "/")
    if os.path.isabs(raw):
        root = os.path.realpath(layout.repo_root)
        real = os.path.realpath(raw)
        if real != root and not real.startswith(root + os.sep):
            raise UnsafePathError("file path is outside the repository", path=path)
        raw = os.path.relpath(real, root).replace(os.sep, "/")
    norm = posixpath.normpath(raw)
    if norm in (".", "") or norm == ".." or norm.startswith("../"):
        raise UnsafePathError("file path is outside the repository", path=path)
    return norm


def record_file_access(
    layout: Layout,
    store: Store,
    config: Mapping[str, Any] | None,
    session_id: str,
    path: str,
    action: str,
    *,
    now: datetime,
) -> dict[str, Any]:
    """Record that ``path`` was read, created, modified or deleted."""
    if action not in FILE_ACTIONS:
        raise InputError(f"unknown file action {action!r}; expected {', '.join(FILE_ACTIONS)}")
    item = {"path": repo_path(layout, path), "action": action, "at": timestamp(now)}
    _check_part("files_accessed", [item])
    _mutate(layout, store, session_id, lambda s: s["files_accessed"].append(item), now=now)
    return item


def add_step(
    layout: Layout,
    store: Store,
    config: Mapping[str, Any] | None,
    session_id: str,
    action: str,
    result: str = "",
    *,
    now: datetime,
) -> dict[str, Any]:
    """Record a step (seed 002); the result is cut to 200 characters, ending in ``…``."""
    text = _text("result", result)
    if len(text) > STEP_RESULT_CHARS:
        text = text[: STEP_RESULT_CHARS - 1] + "…"
    item = {"action": _text("action", action, empty=False), "result": text, "at": timestamp(now)}
    _check_part("steps", [item])
    _mutate(layout, store, session_id, lambda s: s["steps"].append(item), now=now)
    return item


def set_context(
    layout: Layout,
    store: Store,
    config: Mapping[str, Any] | None,
    session_id: str,
    changes: Mapping[str, str | None],
    *,
    now: datetime,
) -> dict[str, Any]:
    """Set ``active_task`` / ``active_phase`` / ``focus_area`` (None clears one)."""
    unknown = set(changes) - set(CONTEXT_KEYS)
    if unknown:
        raise InputError(f"unknown context field(s) {', '.join(sorted(unknown))}")
    clean = {k: _opt_text(k, v) for k, v in changes.items()}

    def apply(session: Session) -> dict[str, Any]:
        session["current_context"].update(clean)
        _check_part("current_context", session["current_context"])
        return dict(session["current_context"])

    return _mutate(layout, store, session_id, apply, now=now, states=("active", "paused"))[1]


def rename(
    layout: Layout,
    store: Store,
    config: Mapping[str, Any] | None,
    session_id: str,
    name: str | None,
    *,
    now: datetime,
) -> Session:
    clean = _name(name)
    return _mutate(
        layout, store, session_id, lambda s: s.update(name=clean), now=now, states=STATUSES
    )[0]


def pause(
    layout: Layout,
    store: Store,
    config: Mapping[str, Any] | None,
    session_id: str,
    *,
    now: datetime,
) -> Session:
    """Pause; with ``persistOnPause`` the state is saved in ``checkpoint``."""
    persist = Settings.of(config).persist_on_pause

    def apply(session: Session) -> None:
        session["checkpoint"] = snapshot(session, now) if persist else None
        session["status"] = "paused"

    return _mutate(layout, store, session_id, apply, now=now)[0]


def resume(
    layout: Layout,
    store: Store,
    config: Mapping[str, Any] | None,
    session_id: str,
    *,
    now: datetime,
) -> Session:
    """Resume a paused session, restoring its checkpoint when it has one."""

    def apply(session: Session) -> None:
        if session.get("checkpoint"):
            _restore_into(session, session["checkpoint"])
        session["checkpoint"] = None
        session["status"] = "active"
        schema.check("session", session)

    return _mutate(layout, store, session_id, apply, now=now, states=("paused",))[0]


def restore(
    layout: Layout,
    store: Store,
    config: Mapping[str, Any] | None,
    session_id: str,
    data: Mapping[str, Any],
    *,
    now: datetime,
) -> Session:
    """Put a ``snapshot`` back into the session (``restore_from_checkpoint``)."""

    clean = privacy.redact_value(dict(data)) if isinstance(data, Mapping) else data

    def apply(session: Session) -> None:
        _restore_into(session, clean)
        schema.check("session", session)

    return _mutate(layout, store, session_id, apply, now=now, states=("active", "paused"))[0]


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


def end(
    layout: Layout,
    store: Store,
    config: Mapping[str, Any] | None,
    session_id: str,
    summarizer: summarize.Summarizer,
    *,
    now: datetime,
) -> Session:
    """End the session with seed 003's summary. If the summariser fails, nothing changes."""
    session = _load(store, layout, session_id).value
    _require(session, ("active", "paused"))
    result = summarizer.end_summary(end_request(session)).as_dict()
    result["goal"] = privacy.redact(result["goal"])
    for key in ("instructions", "discoveries", "accomplished", "next_steps"):
        result[key] = [privacy.redact(item) for item in result[key]]
    _check_part("end_summary", result)

    def apply(s: Session) -> None:
        s.update(status="ended", ended_at=timestamp(now), end_summary=result, checkpoint=None)

    return _mutate(layout, store, session_id, apply, now=now, states=("active", "paused"))[0]


def end_request(session: Mapping[str, Any]) -> summarize.EndRequest:
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
    session_id: str
    paths: list[str]  # every file removed, relative to the repository
    message_ids: list[str]  # for the caller to drop from derived indexes


def delete(layout: Layout, store: Store, session_id: str) -> Deleted:
    """Delete the session and all that belongs to it: archive chunks and queued summary."""
    removed: list[str] = []
    with store.lock():
        path = layout.session_path(session_id)
        chunks = [p for _start, p in chunk_paths(layout, store, session_id)]
        ids = [m["id"] for chunk in chunks for m in store.read_json(chunk).get("messages", [])]
        if path.exists():
            ids += [m["id"] for m in _load(store, layout, session_id).value["messages"]]
        targets = [path, *chunks, queue_path(layout, session_id)]
        for target in targets:
            if store.delete(target):
                removed.append(store.rel(target))
    if not removed:
        raise NotFoundError(f"no session {session_id}", record_id=session_id)
    return Deleted(session_id, removed, ids)


# -- summaries ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class SummaryOutcome:
    """What one session's summary run did. ``status``: ``done`` (summarised and/or archived),
    ``nothing`` (nothing was due), ``skipped`` (paused; stays queued), ``waiting`` (fewer
    messages due than ``min_batch``; stays queued), ``failed`` (the
    summariser failed: ``error`` says why; the session is unchanged and stays queued),
    ``gone`` (the session was deleted)."""

    session_id: str
    status: str
    summarized: int = 0
    archived: int = 0
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def queued(layout: Layout, store: Store) -> list[str]:
    """Ids of the sessions waiting for a summary."""
    return [p.name[: -len(".json")] for p in store.list_json(queue_dir(layout))]


def drain_summary_queue(
    layout: Layout,
    store: Store,
    config: Mapping[str, Any] | None,
    summarizer: summarize.Summarizer,
    now: datetime,
    *,
    session_ids: Sequence[str] | None = None,
    min_batch: int = 1,
) -> list[SummaryOutcome]:
    """Summarise every queued session (or just ``session_ids``, queued or not). A session
    with fewer than ``min_batch`` messages due stays queued (``waiting``): a daemon using an
    LLM command can pass e.g. 10 so that it does not call the model for every message."""
    ids = list(session_ids) if session_ids is not None else queued(layout, store)
    return [
        summarize_session(layout, store, config, summarizer, sid, now=now, min_batch=min_batch)
        for sid in ids
    ]


def summarize_session(
    layout: Layout,
    store: Store,
    config: Mapping[str, Any] | None,
    summarizer: summarize.Summarizer,
    session_id: str,
    *,
    now: datetime,
    min_batch: int = 1,
) -> SummaryOutcome:
    """Fold what is older than the window into the rolling summary, a batch per summariser
    call (run outside the lock), then archive past ``maxConversationLength``."""
    settings = Settings.of(config)
    done = archived = 0
    for _round in range(MAX_DRAIN_ROUNDS):
        with store.lock():
            try:
                session = _load(store, layout, session_id).value
            except NotFoundError:
                _dequeue(layout, store, session_id)
                return SummaryOutcome(session_id, "gone", done, archived)
            if session["status"] == "paused":
                return SummaryOutcome(session_id, "skipped", done, archived)
            batch = _batch(session, settings)
            if batch and not done and len(batch) < min_batch:
                return SummaryOutcome(session_id, "waiting")
            if not batch:
                archived += _apply(layout, store, session_id, settings, None, (), now)
                _dequeue(layout, store, session_id)
                return SummaryOutcome(
                    session_id, "done" if done or archived else "nothing", done, archived
                )
            request = summarize.SummaryRequest(
                messages=batch,
                previous_summary=session["rolling_summary"]["summary"],
                previous_facts=tuple(session["rolling_summary"]["key_facts"]),
                goal=session.get("goal"),
            )
        try:
            result = summarizer.summarize(request)
        except ExternalCommandError as exc:
            _note_failure(layout, store, session_id, str(exc), now)
            return SummaryOutcome(session_id, "failed", done, archived, str(exc))
        with store.lock():
            archived += _apply(layout, store, session_id, settings, result, batch, now)
        done += len(batch)
    return SummaryOutcome(session_id, "done", done, archived)


def _batch(session: Mapping[str, Any], settings: Settings) -> list[dict[str, Any]]:
    """The oldest unsummarised messages outside the window, at most ``SUMMARY_BATCH``."""
    first = summarized_live(session)
    last = len(session["messages"]) - settings.window
    return (
        list(session["messages"][first : min(last, first + SUMMARY_BATCH)]) if last > first else []
    )


def _apply(
    layout: Layout,
    store: Store,
    session_id: str,
    settings: Settings,
    result: summarize.Summary | None,
    batch: Sequence[Mapping[str, Any]],
    now: datetime,
) -> int:
    """Under the lock: fold ``result`` for ``batch`` into the summary (only if the batch still
    follows the summary's end: otherwise another process got there first), then archive.
    Returns how many messages were archived."""
    loaded = _load(store, layout, session_id)
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
        rolling["key_facts"] = _cap_facts([*rolling["key_facts"], *facts])
        rolling["last_summarized_msg_id"] = batch[-1]["id"]
        rolling["message_count"] = int(rolling["message_count"]) + len(batch)
        _check_part("rolling_summary", rolling)
        changed = True
    moved = _archive_move(layout, store, session, settings)
    if changed or moved:
        session["updated_at"] = max(session["updated_at"], timestamp(now))
        _write(store, loaded.path, session, expect=loaded.digest)
    return moved


def _archive_move(layout: Layout, store: Store, session: Session, settings: Settings) -> int:
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
    store.write_json(chunk_path(layout, session["id"], start), chunk)
    del live[:count]
    session["archived_count"] = start + count
    return count


def _note_failure(layout: Layout, store: Store, session_id: str, error: str, now: datetime) -> None:
    """Record why the summary failed in the queue marker (the session stays unchanged)."""
    path = queue_path(layout, session_id)
    with store.lock():
        entry = store.read_json(path) if path.exists() else {"session_id": session_id}
        entry["attempts"] = int(entry.get("attempts", 0)) + 1
        entry["last_error"] = error
        entry["last_attempt_at"] = timestamp(now)
        entry.setdefault("queued_at", timestamp(now))
        store.write_json(path, entry)


# -- context -----------------------------------------------------------------------------------
def system_timezone(now: datetime) -> tzinfo:
    """The system's timezone: ``$TZ``, else ``/etc/localtime``'s zone, else the libc offset."""
    names = [os.environ.get("TZ", "").lstrip(":")]
    with contextlib.suppress(OSError, IndexError):
        names.append(os.readlink("/etc/localtime").split("zoneinfo/", 1)[1])
    for name in names:
        if name and not name.startswith("/"):
            try:
                return ZoneInfo(name)
            except (ZoneInfoNotFoundError, ValueError):
                continue
    return now.astimezone().tzinfo or ZoneInfo("UTC")


def timezone_of(config: Mapping[str, Any] | None, now: datetime) -> tzinfo:
    name = Settings.of(config).timezone
    return temporal.zone(name) if name else system_timezone(now)


def temporal_context(
    layout: Layout,
    store: Store,
    config: Mapping[str, Any] | None,
    session_id: str | None,
    *,
    now: datetime,
    tz: tzinfo | None = None,
) -> temporal.TemporalContext:
    """Date, time, timezone and the gap notice since the session's last message. Call it
    before recording the incoming message (or use ``Appended.gap_days``)."""
    last = None
    if session_id is not None:
        messages = _load(store, layout, session_id).value["messages"]
        last = parse_timestamp(messages[-1]["at"]) if messages else None
    return temporal.temporal_context(now, tz or timezone_of(config, now), last)


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
    layout: Layout,
    store: Store,
    config: Mapping[str, Any] | None,
    session_id: str,
    *,
    now: datetime,
) -> dict[str, Any]:
    """What an agent should know about the session (``get_session_context``)."""
    session = get(layout, store, session_id)
    settings = Settings.of(config)
    messages = session["messages"]
    last = parse_timestamp(messages[-1]["at"]) if messages else None
    stamp = temporal.temporal_context(now, timezone_of(config, now), last)
    info = _info(layout, session)
    return {
        "session": info.as_dict(),
        "current_context": session["current_context"],
        "conversation_context": conversation_context(session),
        "rolling_summary": session["rolling_summary"],
        "window": window(layout, store, config, session_id, settings.window),
        "not_yet_summarized": max(0, unsummarized(session) - settings.window),
        "decisions": session["decisions"][-10:],
        "files_accessed": session["files_accessed"][-20:],
        "steps": session["steps"][-10:],
        "temporal": stamp.as_dict(),
    }

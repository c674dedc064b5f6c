"""Claude Code sessions as ours: the map from Claude's ``session_id``, its transcript captured.

Sessions live on the channel ``claude-code``; Claude's ``session_id`` maps to ours through a
small file per Claude session under ``memory/short-term/claude-code/`` (gitignored with the
rest of short-term memory, and shared by the worktrees of a repository), which also keeps how
far its transcript (``transcript_path``) has been read; the session's ``name`` is
``claude-code <session_id>``. Capturing the transcript reads only the bytes added since the
last capture and logs Claude's text and tool calls and any prompt ``UserPromptSubmit`` did
not log, and the decisions the messages state. Mapping a new Claude session first closes the
``claude-code`` sessions left open with no activity for a while (a crash, a closed terminal):
their transcript is captured and they end with the built-in summariser. The other sessions
still open (crashed a moment ago, or running elsewhere) are ``unfinished``: a new session is
told about them at once.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planning_memory.agents.transcript import Turns, parse_time, read_new, turns
from planning_memory.errors import PlanningMemoryError
from planning_memory.memory import Memory, clip

if TYPE_CHECKING:
    from planning_memory.sessions import Unfinished

CHANNEL = "claude-code"
MAP_DIR = "claude-code"  # under memory/short-term/
STALE_AFTER = timedelta(minutes=5)  # an open session idle this long was left behind
STALE_PER_START = 20  # sessions left behind closed by one start (the newest first)
_SAFE_ID = re.compile(r"^[A-Za-z0-9_-]{1,100}$")


# -- session mapping -------------------------------------------------------------------------------
def _map_path(mem: Memory, claude_id: str) -> Path:
    safe = (
        claude_id if _SAFE_ID.match(claude_id) else hashlib.sha256(claude_id.encode()).hexdigest()
    )
    return mem.layout.short_term / MAP_DIR / f"{safe[:100]}.json"


def _status(mem: Memory, session_id: str) -> str | None:
    path = mem.layout.session_path(session_id)
    if not path.is_file():
        return None
    value = mem.store.read_json(path)
    return str(value.get("status")) if isinstance(value, dict) else None


def mapped_session(mem: Memory, payload: Mapping[str, Any]) -> str | None:
    """Our open session for the payload's Claude session, or None."""
    claude_id = payload.get("session_id")
    if not isinstance(claude_id, str) or not claude_id:
        return _current(mem)
    path = _map_path(mem, claude_id)
    if not path.is_file():
        return None
    value = mem.store.read_json(path)
    sid = value.get("session_id") if isinstance(value, dict) else None
    if isinstance(sid, str) and _status(mem, sid) in ("active", "paused"):
        return sid
    return None


def _current(mem: Memory) -> str | None:
    try:
        return mem.sessions.current_id(start=False)
    except PlanningMemoryError:
        return None


def ensure_session(mem: Memory, payload: Mapping[str, Any]) -> str:
    """The session for the payload's Claude session, started (and mapped) if there is none.
    Starting one first closes the sessions left open (``close_stale``), then carries the
    standing facts of the last ended session into the new one (``Sessions.inherit``); a
    resumed Claude session keeps how far its transcript was read."""
    with mem.store.lock():  # parallel tool calls run their hooks at the same time
        found = mapped_session(mem, payload)
        if found is not None:
            return found
        claude_id = payload.get("session_id")
        if not isinstance(claude_id, str) or not claude_id:
            return mem.sessions.current_id()
        close_stale(mem)
        last = mem.sessions.last_summarized(CHANNEL)
        name = f"{CHANNEL} {claude_id}"[:200] if "\n" not in claude_id else None
        sid = str(mem.sessions.start(name=name)["id"])
        if last is not None:
            mem.sessions.inherit(sid, last[0].id)
        state = state_of(mem, claude_id)
        state.update(claude_session_id=claude_id, session_id=sid, seen=0)
        path = payload.get("transcript_path")
        if isinstance(path, str) and path:
            state.setdefault("transcript_path", path)
        save_state(mem, claude_id, state)
        return sid


def state_of(mem: Memory, claude_id: str) -> dict[str, Any]:
    """The map file of a Claude session: ``session_id`` (ours), ``transcript_path``,
    ``offset`` (bytes read), ``last_at`` (the newest line's time), ``seen`` (our session's
    message count after the last capture) and ``decided`` (how many of its messages were
    read for decisions); {} when there is none."""
    path = _map_path(mem, claude_id)
    value = mem.store.read_json(path) if path.is_file() else None
    return dict(value) if isinstance(value, dict) else {}


def save_state(mem: Memory, claude_id: str, state: Mapping[str, Any]) -> None:
    mem.store.write_json(_map_path(mem, claude_id), dict(state))


def _claude_id(name: Any) -> str | None:
    """The Claude session id in one of our session names (``claude-code <id>``)."""
    prefix = f"{CHANNEL} "
    return name[len(prefix) :] if isinstance(name, str) and name.startswith(prefix) else None


def live_session(mem: Memory) -> str | None:
    """The hooks' open session with the latest activity, unless it has been idle for
    ``STALE_AFTER`` (what the MCP server's session tools join), or None."""
    found = [(last, info.id) for info, mapped, last in _hooked(mem) if mapped is not None]
    last, sid = max(found, default=(None, None))
    return sid if last is not None and mem.now() - last < STALE_AFTER else None


def _hooked(
    mem: Memory, infos: Sequence[Any] | None = None
) -> list[tuple[Any, dict[str, Any] | None, datetime]]:
    """The open ``claude-code`` sessions (among ``infos``, default: all), each with its map
    file's state when a Claude session maps to it (else None) and when it was last active
    (our file or the transcript)."""
    found = []
    listed = mem.sessions.list() if infos is None else infos
    for info in (i for i in listed if i.channel == CHANNEL and i.status == "active"):
        claude_id = _claude_id(info.name)
        state = state_of(mem, claude_id) if claude_id else {}
        mapped = state if state.get("session_id") == info.id else None
        found.append((info, mapped, _last_activity(info.updated_at, mapped or {})))
    return found


# -- the transcript ------------------------------------------------------------------------------
def capture(
    mem: Memory, claude_id: str, path: str | None = None, *, final: bool = False
) -> str | None:
    """Log what the Claude session's transcript gained since the last capture into its open
    session of ours: assistant text and tool calls, and prompts UserPromptSubmit did not log.
    Lines read while the session is ended are passed over; a paused one waits. Returns the
    open session's id, None when there is none. ``final``: the session is over, so an
    unterminated last line is taken if it parses."""
    with mem.store.lock():
        state = state_of(mem, claude_id)
        sid = state.get("session_id")
        status = _status(mem, sid) if isinstance(sid, str) else None
        where = path or state.get("transcript_path")
        if not isinstance(sid, str) or status == "paused" or not isinstance(where, str):
            return sid if status in ("active", "paused") else None
        same = state.get("transcript_path") == where
        chunk = read_new(Path(where), int(state.get("offset") or 0) if same else 0, final=final)
        active = status == "active"
        since = _since(mem, sid, state, fresh=not same or chunk.restarted) if active else None
        read = turns(chunk.entries, since=since, cwd=str(mem.layout.repo_root))
        if active:
            _log(mem, sid, read, int(state.get("seen") or 0))
            state["seen"] = _message_count(mem, sid)
        state.update(transcript_path=where, offset=chunk.offset)
        state["last_at"] = read.last_at or state.get("last_at")
        save_state(mem, claude_id, state)
        return sid if active else None


def _since(mem: Memory, sid: str, state: Mapping[str, Any], *, fresh: bool) -> datetime | None:
    """Lines older than this are not logged: before the first capture, those from before our
    session started (a resumed conversation's history); on a new or shorter file, those up to
    the last line read."""
    if "offset" not in state:
        return parse_time(mem.sessions.load(sid).value.get("started_at"))
    last = parse_time(state.get("last_at"))
    return last + timedelta(microseconds=1) if fresh and last else None  # newer lines only


def _log(mem: Memory, sid: str, read: Turns, seen: int) -> None:
    prompts = [t.text for t in read.turns if t.role == "user"]
    logged = iter(mem.sessions.recorded(sid, "user", prompts, after=seen) if prompts else [])
    for turn in read.turns:
        if turn.role == "user" and next(logged):
            continue  # UserPromptSubmit logged it
        results = tuple({"name": name, "output": said} for name, said in turn.tools)
        mem.log(clip(turn.text), role=turn.role, session_id=sid, tool_results=results)
    if read.todos is not None:
        mem.sessions.set_context(sid, {"active_task": read.active_task()})


def _message_count(mem: Memory, sid: str) -> int:
    session = mem.sessions.load(sid).value
    return len(session["messages"]) + int(session.get("archived_count") or 0)


def capture_session(mem: Memory, session_id: str, *, final: bool = False) -> None:
    """Capture the transcript of the Claude session that ``session_id`` of ours is mapped
    to, if it is one (the MCP server's ``session_end`` does this before ending)."""
    claude_id = _claude_id(mem.sessions.load(session_id).value.get("name"))
    if claude_id and state_of(mem, claude_id).get("session_id") == session_id:
        capture(mem, claude_id, final=final)


def close_stale(mem: Memory) -> list[str]:
    """End the open ``claude-code`` sessions with no activity (our session file or its
    transcript) for ``STALE_AFTER``, at most ``STALE_PER_START`` of them, the newest first:
    what their transcript gained is logged first with the decisions it states, and the
    built-in summariser writes their summary, so that a new session starts knowing them."""
    closed: list[str] = []
    for info, state, last in _hooked(mem):
        if mem.now() - last < STALE_AFTER or len(closed) >= STALE_PER_START:
            continue
        claude_id = str(state["claude_session_id"]) if state is not None else None
        if claude_id is not None:
            capture(mem, claude_id, final=True)
        record_decisions(mem, info.id, claude_id)
        mem.sessions.end(info.id, mem.sessions.extractive)
        closed.append(info.id)
    return closed


def _last_activity(updated_at: str, state: Mapping[str, Any]) -> datetime:
    times = [parse_time(updated_at) or datetime.min.replace(tzinfo=UTC)]
    where = state.get("transcript_path")
    if isinstance(where, str) and where:
        with contextlib.suppress(OSError):
            times.append(datetime.fromtimestamp(Path(where).stat().st_mtime, UTC))
    return max(times)


def capture_payload(mem: Memory, payload: Mapping[str, Any], *, final: bool = False) -> str | None:
    """Capture the payload's transcript; our open session for it, or None."""
    claude_id = payload.get("session_id")
    if not isinstance(claude_id, str) or not claude_id:
        return mapped_session(mem, payload)
    path = payload.get("transcript_path")
    return capture(mem, claude_id, path if isinstance(path, str) and path else None, final=final)


def keep_decisions(mem: Memory, payload: Mapping[str, Any], *, final: bool = False) -> str | None:
    """Log the transcript's new lines (``final``: see ``capture``), then keep the decisions
    they state (``record_decisions``). Returns our open session, or None."""
    sid = capture_payload(mem, payload, final=final)
    claude_id = payload.get("session_id")
    if sid is not None:
        record_decisions(mem, sid, claude_id if isinstance(claude_id, str) and claude_id else None)
    return sid


def record_decisions(mem: Memory, sid: str, claude_id: str | None) -> None:
    """Record the decisions stated in the session's messages not yet read for them
    (``sessions.decided``; the map file of ``claude_id`` says how many were read) as the
    session's decisions, each once."""
    with mem.store.lock():
        state = state_of(mem, claude_id) if claude_id else {}
        history = mem.sessions.history(sid)
        known = {_said(d["decision"]) for d in mem.sessions.load(sid).value["decisions"]}
        for found in mem.sessions.stated_decisions(history, int(state.get("decided") or 0)):
            if _said(found.decision) not in known:
                mem.sessions.record_decision(
                    sid,
                    found.question,
                    found.decision,
                    reasoning=found.reasoning,
                    alternatives=found.alternatives,
                )
                known.add(_said(found.decision))
        if state and claude_id:
            save_state(mem, claude_id, {**state, "decided": len(history)})


def _said(text: str) -> str:
    return " ".join(text.casefold().split())


def unfinished(mem: Memory, session_id: str | None) -> list[Unfinished]:
    """The other open sessions (a crash a moment ago, or one running elsewhere), the
    ``claude-code`` ones with their transcript captured first (not in a tree this process may
    only read) so that their last words count, each with when it was last active (its
    transcript's last write, when newer)."""
    infos = [i for i in mem.sessions.list() if i.status in ("active", "paused")]
    active_at: dict[str, datetime] = {}
    for info, state, last in _hooked(mem, infos):
        if info.id != session_id:
            active_at[info.id] = last
            if state is not None and not mem.store.read_only:
                capture(mem, str(state["claude_session_id"]))
    ids = [i.id for i in infos]
    return mem.sessions.unfinished(
        exclude=[session_id] if session_id else [], active_at=active_at, among=ids
    )

"""Recording into a session: messages, decisions, file accesses, steps and the current context.

Recording is quick and never summarises: when the messages not yet summarised outgrow the
window it drops the queue marker (``rolling`` drains it). Every text is redacted on the way in
and refused past the field limit. Decisions past ``maxDecisions`` fold (oldest first) into the
rolling summary's key facts.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from planning_memory.core import Layout, new_id, parse_timestamp, privacy, temporal, timestamp
from planning_memory.errors import InputError, UnsafePathError
from planning_memory.sessions.files import (
    CONTEXT_KEYS,
    Session,
    SessionFiles,
    Settings,
    check_part,
    needs_summary,
)
from planning_memory.sessions.summary_base import memorize_markers

ROLES = ("user", "assistant", "system", "tool")
FILE_ACTIONS = ("read", "created", "modified", "deleted")
STEP_RESULT_CHARS = 200  # seed 002: resultado[:200]


def millis(now: datetime) -> int:
    return int(now.timestamp() * 1000)


def text(name: str, value: Any, *, empty: bool = True) -> str:
    """``value`` as stored text: a string, private parts and secrets redacted, within limits."""
    if not isinstance(value, str):
        raise InputError(f"{name} must be text, not {type(value).__name__}", json_path=name)
    clean = privacy.redact(value)
    privacy.check_field_length(name, clean)
    if not empty and not clean.strip():
        raise InputError(f"{name} is empty", json_path=name)
    return clean


def opt_text(name: str, value: Any) -> str | None:
    return None if value is None else text(name, value)


@dataclass(frozen=True)
class Appended:
    """What recording a message did; ``memorize`` holds the ``[MEMORIZE: ...]`` facts found
    in assistant output, for the caller to save as long-term learnings."""

    session_id: str
    message: dict[str, Any]
    memorize: list[str]
    summary_queued: bool
    previous_at: str | None  # when the message before this one was recorded
    newly_queued: bool = False  # this message queued the summary (it was not queued yet)

    def gap_days(self) -> int | None:
        if self.previous_at is None:
            return None
        return temporal.gap_days(
            parse_timestamp(self.message["at"]), parse_timestamp(self.previous_at)
        )

    def gap_notice(self) -> str | None:
        """The notice an agent gets with this message after a gap of a day or more."""
        return temporal.gap_notice(self.gap_days())


def append_message(
    files: SessionFiles,
    settings: Settings,
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
        "id": new_id("msg", millis(now)),
        "role": role,
        "content": text("content", content),
        "at": timestamp(now),
        "tool_results": [_tool_result(t) for t in tool_results],
    }
    check_part("messages", [message])

    def add(session: Session) -> tuple[str | None, bool]:
        previous = session["messages"][-1]["at"] if session["messages"] else None
        session["messages"].append(message)
        return previous, needs_summary(session, settings)

    with files.store.lock():
        _s, (previous, queue) = files.mutate(session_id, add, now=now)
        newly = files.enqueue(session_id, now) if queue else False
    memorize = memorize_markers(message["content"]) if role == "assistant" else []
    return Appended(session_id, message, memorize, queue, previous, newly)


def _tool_result(value: Mapping[str, Any]) -> dict[str, str]:
    if not isinstance(value, Mapping) or set(value) != {"name", "output"}:
        raise InputError("a tool result is {name, output}")
    return {
        "name": text("tool_results.name", value["name"], empty=False),
        "output": text("tool_results.output", value["output"]),
    }


def record_decision(
    files: SessionFiles,
    settings: Settings,
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
        "id": new_id("dec", millis(now)),
        "question": text("question", question, empty=False),
        "decision": text("decision", decision, empty=False),
        "reasoning": text("reasoning", reasoning),
        "alternatives": [text("alternatives", a) for a in alternatives],
        "decided_at": timestamp(now),
    }
    check_part("decisions", [item])

    def add(session: Session) -> None:
        session["decisions"].append(item)
        excess = len(session["decisions"]) - settings.max_decisions
        if excess > 0:
            folded = [decision_fact(d) for d in session["decisions"][:excess]]
            del session["decisions"][:excess]
            facts = session["rolling_summary"]["key_facts"]
            session["rolling_summary"]["key_facts"] = settings.cap_facts([*facts, *folded])

    files.mutate(session_id, add, now=now)
    return item


def decision_fact(decision: Mapping[str, Any]) -> str:
    """A folded decision as a key fact: ``Decision: question -> decision (reasoning)``."""
    fact = f"Decision: {decision['question']} -> {decision['decision']}"
    return f"{fact} ({decision['reasoning']})" if decision.get("reasoning") else fact


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
    files: SessionFiles, session_id: str, path: str, action: str, *, now: datetime
) -> dict[str, Any]:
    """Record that ``path`` was read, created, modified or deleted."""
    if action not in FILE_ACTIONS:
        raise InputError(f"unknown file action {action!r}; expected {', '.join(FILE_ACTIONS)}")
    item = {"path": repo_path(files.layout, path), "action": action, "at": timestamp(now)}
    check_part("files_accessed", [item])
    files.mutate(session_id, lambda s: s["files_accessed"].append(item), now=now)
    return item


def add_step(
    files: SessionFiles, session_id: str, action: str, result: str = "", *, now: datetime
) -> dict[str, Any]:
    """Record a step (seed 002); the result is cut to 200 characters, ending in ``…``."""
    kept = text("result", result)
    if len(kept) > STEP_RESULT_CHARS:
        kept = kept[: STEP_RESULT_CHARS - 1] + "…"
    item = {"action": text("action", action, empty=False), "result": kept, "at": timestamp(now)}
    check_part("steps", [item])
    files.mutate(session_id, lambda s: s["steps"].append(item), now=now)
    return item


def set_context(
    files: SessionFiles, session_id: str, changes: Mapping[str, str | None], *, now: datetime
) -> dict[str, Any]:
    """Set ``active_task`` / ``active_phase`` / ``focus_area`` (None clears one)."""
    unknown = set(changes) - set(CONTEXT_KEYS)
    if unknown:
        raise InputError(f"unknown context field(s) {', '.join(sorted(unknown))}")
    clean = {k: opt_text(k, v) for k, v in changes.items()}

    def apply(session: Session) -> dict[str, Any]:
        session["current_context"].update(clean)
        check_part("current_context", session["current_context"])
        return dict(session["current_context"])

    return files.mutate(session_id, apply, now=now, states=("active", "paused"))[1]


MAX_INJECTED = 10  # injections kept per session (the newest)
INJECTED_TEXT_CHARS = 100_000


def record_injection(
    files: SessionFiles,
    session_id: str,
    event: str,
    task: str,
    pack: Mapping[str, Any],
    *,
    now: datetime,
) -> dict[str, Any]:
    """Keep what was injected into the agent's context (``pack``: a context pack's
    ``as_dict()``): the event, the task searched for, the budget and tokens, each item's
    section, id, reason and estimated tokens, and the text. The newest ``MAX_INJECTED`` stay."""
    items = [
        {
            "section": str(item.get("section") or ""),
            "id": str(item.get("id") or "")[:300],
            "reason": str(item.get("reason") or "")[:500],
            "tokens": -(-len(str(item.get("text") or "")) // 4),
        }
        for item in pack.get("items") or ()
    ]
    entry = {
        "at": timestamp(now),
        "event": text("event", event, empty=False),
        "task": privacy.redact(str(task))[:2000],
        "budget": int(pack.get("budget") or 0),
        "tokens": int(pack.get("tokens") or 0),
        "items": items[:500],
        "text": privacy.redact(str(pack.get("text") or ""))[:INJECTED_TEXT_CHARS],
    }

    def apply(session: Session) -> None:
        session["injected"] = [*(session.get("injected") or []), entry][-MAX_INJECTED:]

    files.mutate(session_id, apply, now=now, states=("active", "paused"))
    return entry

"""Claude Code hook handlers: ``pmem hook claude-code <event>`` reads the hook's JSON on stdin.

- ``SessionStart`` (``startup``, ``resume``, ``clear``, ``compact``): prints the memory
  context block (and the last session's end summary) as ``hookSpecificOutput.
  additionalContext``, within the config's ``injectBudgetTokens``.
- ``UserPromptSubmit``: logs the prompt in the session and runs the learning triggers
  ("always use X", "nunca uses Y", ...); when something was learned, says so in one line of
  ``additionalContext``.
- ``PostToolUse`` (``Read``, ``Edit``, ``MultiEdit``, ``Write``, ``NotebookEdit``): records the
  file access (read, modified, created); files outside the repository are ignored.
- ``PreCompact``: folds the session's older messages into its rolling summary.
- ``SessionEnd``: ends the session with its Goal / Instructions / Discoveries / Accomplished /
  Next Steps / Relevant Files summary.

Sessions live on the channel ``claude-code``; Claude's ``session_id`` maps to ours through a
small file per Claude session under ``memory/short-term/claude-code/`` (gitignored with the
rest of short-term memory), and the session's ``name`` is ``claude-code <session_id>``.

A hook never blocks the agent: any error becomes one line on stderr and exit code 0. The hook
path imports only the facade; the index, the context packer and the summariser are loaded by
the events that need them.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planning_memory.errors import PlanningMemoryError, UnsafePathError
from planning_memory.memory import Memory

CHANNEL = "claude-code"
MAP_DIR = "claude-code"  # under memory/short-term/
MAX_STDIN = 64 * 1024 * 1024
ITEM_CHARS = 200
LAST_ITEMS = 5
FILE_TOOLS = {
    "Read": "read",
    "Edit": "modified",
    "MultiEdit": "modified",
    "NotebookEdit": "modified",
}
_SAFE_ID = re.compile(r"^[A-Za-z0-9_-]{1,100}$")
_KEBAB = re.compile(r"(?<=[a-z])(?=[A-Z])")


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
    """The session for the payload's Claude session, started (and mapped) if there is none."""
    with mem.store.lock():  # parallel tool calls run their hooks at the same time
        found = mapped_session(mem, payload)
        if found is not None:
            return found
        claude_id = payload.get("session_id")
        if not isinstance(claude_id, str) or not claude_id:
            return mem.sessions.current_id()
        name = f"{CHANNEL} {claude_id}"[:200] if "\n" not in claude_id else None
        sid = str(mem.sessions.start(name=name)["id"])
        mem.store.write_json(
            _map_path(mem, claude_id), {"claude_session_id": claude_id, "session_id": sid}
        )
        return sid


# -- events ----------------------------------------------------------------------------------------
def _context_output(event: str, text: str) -> dict[str, Any] | None:
    if not text.strip():
        return None
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def _line(text: Any, limit: int = ITEM_CHARS) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def last_ended_summary(mem: Memory, exclude: str | None = None) -> dict[str, Any] | None:
    """The newest ended ``claude-code`` session's end summary (with ``ended_at``), or None."""
    for info in mem.sessions.list(channel=CHANNEL, status="ended"):
        data = mem.store.read_json(mem.layout.session_path(info.id))
        summary = data.get("end_summary") if isinstance(data, dict) else None
        if info.id != exclude and isinstance(summary, dict):
            return {**summary, "ended_at": info.ended_at or info.updated_at}
    return None


def render_last(summary: Mapping[str, Any] | None) -> str:
    """A short Markdown section of the last session's goal, accomplishments and next steps
    (the context packer cuts it to its share of the budget)."""
    if not summary:
        return ""
    lines = [f"## Last session (ended {summary.get('ended_at')})"]
    if summary.get("goal"):
        lines.append(f"Goal: {_line(summary['goal'])}")
    for key, title in (("accomplished", "Accomplished"), ("next_steps", "Next steps")):
        items = [i for i in summary.get(key) or [] if str(i).strip()][:LAST_ITEMS]
        if items:
            lines += [f"{title}:", *(f"- {_line(i)}" for i in items)]
    return "\n".join(lines) if len(lines) > 1 else ""


def _task_hint(mem: Memory, session_id: str, last: Mapping[str, Any] | None) -> str:
    """What to search memory for at session start: the session's goal and latest prompts,
    else the last session's goal and next steps."""
    data = mem.store.read_json(mem.layout.session_path(session_id))
    parts = [str(data.get("goal") or "")] if isinstance(data, dict) else []
    messages = (data.get("messages") or []) if isinstance(data, dict) else []
    parts += [str(m.get("content") or "") for m in messages if m.get("role") == "user"][-3:]
    if not any(parts) and last:
        parts = [str(last.get("goal") or ""), *map(str, last.get("next_steps") or [])]
    return _line(" ".join(p for p in parts if p), 1000)


def session_start(mem: Memory, payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """Inject the context block (at startup, resume, clear and after compaction): the last
    session's summary, then the packed memory context, within ``injectBudgetTokens``."""
    sid = ensure_session(mem, payload)
    last = last_ended_summary(mem, exclude=sid)
    pack = mem.context(
        _task_hint(mem, sid, last), session_id=sid, agent=CHANNEL, preamble=render_last(last)
    )
    return _context_output("SessionStart", pack.text)


def user_prompt(mem: Memory, payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """Log the prompt and learn from its trigger phrases."""
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return None
    sid = ensure_session(mem, payload)
    mem.log(Memory.clip(prompt), role="user", session_id=sid)
    lesson = mem.learn_utterance(Memory.clip(prompt), source=f"session:{sid}")
    if lesson.outcome is None:
        return None
    done = lesson.outcome.summary()
    note = f"planning-memory: {done['action']} {done['type']} {done['id']}: {_line(done['title'])}"
    if done["notes"]:
        note += f" ({_line(done['notes'][0])})"
    return _context_output("UserPromptSubmit", note)


def _file_action(payload: Mapping[str, Any]) -> tuple[str, str] | None:
    tool = payload.get("tool_name")
    given = payload.get("tool_input")
    inputs = given if isinstance(given, Mapping) else {}
    path = inputs.get("file_path") or inputs.get("notebook_path")
    if not isinstance(path, str) or not path:
        return None
    if tool == "Write":
        response = payload.get("tool_response")
        kind = response.get("type") if isinstance(response, Mapping) else None
        return path, "created" if kind == "create" else "modified"
    action = FILE_TOOLS.get(str(tool))
    return (path, action) if action else None


def post_tool_use(mem: Memory, payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """Record a file read, modified or created by Claude (not files outside the repo)."""
    found = _file_action(payload)
    if found is None:
        return None
    path, action = found
    if not Path(path).is_absolute() and isinstance(payload.get("cwd"), str):
        path = str(Path(payload["cwd"]) / path)
    sid = ensure_session(mem, payload)
    try:
        mem.record_file_access(path, action, session_id=sid)
    except UnsafePathError:
        return None  # outside the repository: not part of this project's memory
    return None


def pre_compact(mem: Memory, payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """Summarise what is older than the window before Claude compacts its context."""
    sid = mapped_session(mem, payload)
    if sid is not None:
        mem.sessions.drain([sid])
    return None


def session_end(mem: Memory, payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """End the session with its end summary."""
    sid = mapped_session(mem, payload)
    if sid is not None:
        mem.sessions.end(sid)
    return None


Handler = Callable[[Memory, Mapping[str, Any]], "dict[str, Any] | None"]
HANDLERS: dict[str, Handler] = {
    "SessionStart": session_start,
    "UserPromptSubmit": user_prompt,
    "PostToolUse": post_tool_use,
    "PreCompact": pre_compact,
    "SessionEnd": session_end,
}


def event_name(name: str) -> str | None:
    """``SessionStart`` or ``session-start`` (any case) to the canonical event name."""
    wanted = name.replace("-", "").replace("_", "").lower()
    return next((e for e in HANDLERS if e.lower() == wanted), None)


# -- running one hook ------------------------------------------------------------------------------
@dataclass
class HookRun:
    """What a hook prints and its exit code (always 0: a hook never blocks the agent)."""

    stdout: str = ""
    errors: list[str] = field(default_factory=list)
    exit_code: int = 0

    @property
    def stderr(self) -> str:
        return "".join(f"pmem hook: {e}\n" for e in self.errors)


def _payload(text: str) -> dict[str, Any]:
    if len(text) > MAX_STDIN:
        raise ValueError(f"hook input is over {MAX_STDIN:,} characters")
    try:
        value = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise ValueError(f"hook input is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ValueError("hook input must be a JSON object")
    return value


def handle(
    event: str, payload: Mapping[str, Any], root: Path | None = None
) -> dict[str, Any] | None:
    """Run ``event``'s handler on the memory of the payload's project; may raise."""
    name = event_name(event)
    if name is None:
        known = ", ".join(HANDLERS)
        raise ValueError(f"unknown Claude Code hook event {event!r}; expected one of {known}")
    cwd = payload.get("cwd")
    mem = Memory.open(root or (cwd if isinstance(cwd, str) and cwd else None))
    mem.channel = CHANNEL
    return HANDLERS[name](mem, payload)


def run(event: str, stdin_text: str, root: Path | None = None) -> HookRun:
    """Parse the hook input and run the handler; every error becomes one stderr line."""
    result = HookRun()
    try:
        output = handle(event, _payload(stdin_text), root)
    except PlanningMemoryError as exc:
        result.errors.append(f"{event}: {exc.one_line()}")
        return result
    except (OSError, ValueError) as exc:
        result.errors.append(f"{event}: {_line(exc, 500)}")
        return result
    except Exception as exc:  # a bug: report it, never block the agent
        result.errors.append(f"{event}: internal error {type(exc).__name__}: {_line(exc, 400)}")
        return result
    if output is not None:
        result.stdout = json.dumps(output, ensure_ascii=False) + "\n"
    return result

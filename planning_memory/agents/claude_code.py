"""Claude Code hook handlers: ``pmem hook claude-code <event>`` reads the hook's JSON on stdin.

- ``SessionStart`` (``startup``, ``resume``, ``clear``, ``compact``): prints the memory
  context block (and the last session's end summary) as ``hookSpecificOutput.
  additionalContext``, opened by the unfinished work of the other open sessions (one that
  crashed a moment ago, or runs in another terminal or worktree: goal, next step, when last
  active), within the config's ``injectBudgetTokens``, and keeps it with the
  session (``pmem session injected``). Without a search index (a fresh clone) it indexes the
  memories only and leaves the code map and the code to ``pmem reindex --finish``, started
  in the background.
- ``UserPromptSubmit``: logs the prompt in the session and runs the learning triggers
  ("always use X", "nunca uses Y", ...: every rule of the prompt; a correction that names
  nothing, "No, así no", learns nothing); answers in ``additionalContext`` with one line per
  rule learned and the few memories relevant to the prompt (``Memory.recall``: the taught
  rules it touches, its best matches; no index is built for it). The first prompt that
  states a task (not only rules, not "vale, sigue") gives the session its goal.
- ``PostToolUse`` (``Read``, ``Edit``, ``MultiEdit``, ``Write``, ``NotebookEdit``): records the
  file access (read, modified, created); files outside the repository are ignored. A change
  of a file resolves the session's open errors about it.
- ``PostToolUseFailure`` (a tool call failed): keeps the tool, its input in short and its
  error in the session's errors list (``pmem session show``); an interrupt is not an error.
- ``Stop`` (Claude finished a reply): logs what the reply added to the transcript.
- ``PreCompact``: logs the transcript's new lines, keeps the decisions stated in the messages
  ("we'll use JWT instead of DB sessions", "decidimos usar Postgres") as the session's
  decision records, folds the session's older messages into its rolling summary, and keeps a
  checkpoint: the summary so far with its outcome (confirmed, failed, unknown). A
  ``SessionStart`` after compaction keeps the decisions too, before it answers.
- ``SessionEnd``: logs the transcript's last lines and keeps the decisions they state
  (as PreCompact does), then ends the session with its Goal /
  Instructions / Discoveries / Accomplished / Next Steps / Relevant Files summary.

Sessions live on the channel ``claude-code``, one of ours per Claude session
(``agents.claude_map``: the map files, the transcript capture, the sessions left behind).

In a tree this process may only read (another user's checkout, a read-only mount),
``SessionStart`` and ``UserPromptSubmit`` answer from memory and keep no session, and the
other events do nothing.

A hook never blocks the agent: any error becomes one line on stderr and exit code 0. The hook
path imports only the facade; the index, the context packer and the summariser are loaded by
the events that need them.
"""

from __future__ import annotations

import json
import re
import sys
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planning_memory.agents.claude_map import CHANNEL as CHANNEL
from planning_memory.agents.claude_map import (
    capture_payload,
    ensure_session,
    keep_decisions,
    mapped_session,
    unfinished,
)
from planning_memory.agents.claude_map import capture_session as capture_session
from planning_memory.agents.claude_map import live_session as live_session
from planning_memory.agents.hook_client import detach
from planning_memory.agents.transcript import tool_summary
from planning_memory.errors import BrokenFileWarning, PlanningMemoryError, UnsafePathError
from planning_memory.memory import Memory, clip, inline

MAX_STDIN = 64 * 1024 * 1024
ITEM_CHARS = 200
FILE_TOOLS = {
    "Read": "read",
    "Edit": "modified",
    "MultiEdit": "modified",
    "NotebookEdit": "modified",
}
UNFINISHED_HEADING = "## Unfinished in other sessions"
UNFINISHED_LEAD = "Open elsewhere (still running, or crashed): check before redoing their work."
MIN_BUDGET = 200  # tokens left to the memory block whatever the other sessions take
LOCK_WAIT = 5.0  # seconds a hook waits for the memory lock (installed timeouts: 15 s and up)
_SURROGATE = re.compile("[\ud800-\udfff]")
AT_SIGN = "\uff20"  # what an "@" of memory text becomes in CLAUDE.md (views.inert)


def at_as_written(text: str) -> str:
    """Memory text for an answer nothing imports from (a hook's context, an MCP answer):
    each ``＠`` of the inert form back to the ``@`` it stands for."""
    return text.replace(AT_SIGN, "@")


# -- events ----------------------------------------------------------------------------------------
def _context_output(event: str, text: str) -> dict[str, Any] | None:
    """The hook's answer: ``text`` as ``additionalContext``, its ``@`` as written. Memory
    text is made inert as for CLAUDE.md, where ``@path`` imports a file and so becomes
    ``＠path``; Claude Code imports nothing from a hook's context, so "@types/node" and
    "@pytest.fixture" reach the model as the person wrote them."""
    if not text.strip():
        return None
    text = at_as_written(text)
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def _line(text: Any, limit: int = ITEM_CHARS) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def last_ended_summary(mem: Memory, exclude: str | None = None) -> dict[str, Any] | None:
    """The newest ended ``claude-code`` session's end summary (with ``ended_at``), or None;
    sessions without one, or with an empty one, are passed over."""
    found = mem.sessions.last_summarized(CHANNEL, exclude)
    if found is None:
        return None
    info, summary = found
    return {**summary, "ended_at": info.ended_at or info.updated_at}


def _task_hint(mem: Memory, session_id: str | None, last: Mapping[str, Any] | None) -> str:
    """What to search memory for at session start: the session's goal and latest prompts,
    else the last session's goal and next steps."""
    data = None if session_id is None else mem.store.read_json(mem.layout.session_path(session_id))
    parts = [str(data.get("goal") or "")] if isinstance(data, dict) else []
    messages = (data.get("messages") or []) if isinstance(data, dict) else []
    parts += [str(m.get("content") or "") for m in messages if m.get("role") == "user"][-3:]
    if not any(parts) and last:
        parts = [str(last.get("goal") or ""), *map(str, last.get("next_steps") or [])]
    return _line(" ".join(p for p in parts if p), 1000)


def session_start(mem: Memory, payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """Inject the context block (at startup, resume, clear and after compaction), within
    ``injectBudgetTokens``: the unfinished work of the other open sessions (crashed, or
    running elsewhere), what a person taught, pinned memories, preferences, the last session
    (when it ended, its open next steps), then what the session's task matches. In a tree
    this process may only read, the same block, and no session is kept."""
    sid = None if mem.store.read_only else ensure_session(mem, payload)
    if payload.get("source") == "compact" and sid is not None:  # its decisions stay
        keep_decisions(mem, payload)
    elsewhere = _unfinished_lines(mem, sid)
    last = last_ended_summary(mem, exclude=sid)
    task = _task_hint(mem, sid, last)
    budget = int(mem.config["memory"]["contextual"]["injectBudgetTokens"])
    spent = (sum(map(len, elsewhere)) + 3) // 4
    pack = mem.context(
        task, session_id=sid, agent=CHANNEL, quick=True, budget=max(MIN_BUDGET, budget - spent)
    )
    text = _with_section(pack.text, elsewhere)
    if sid is not None:
        mem.sessions.record_injection(sid, "SessionStart", task, {**pack.as_dict(), "text": text})
    if mem.contextual.pending:  # a fresh clone: the memories are indexed, the code comes after
        detach("planning_memory", "-C", str(mem.layout.repo_root), "reindex", "--finish")
    return _context_output("SessionStart", text)


def _unfinished_lines(mem: Memory, sid: str | None) -> list[str]:
    """The section on the other open sessions: a heading and one line each, or none."""
    found = unfinished(mem, sid)
    if not found:
        return []
    now = mem.now()
    lines = [f"- {inline(u.line(now), 500)} [{u.session_id}]" for u in found]
    return [UNFINISHED_HEADING, UNFINISHED_LEAD, *lines]


def _with_section(text: str, lines: list[str]) -> str:
    """``lines`` as the first section of the block ``text`` (under its title)."""
    if not lines:
        return text
    head, _, rest = text.partition("\n")
    if not head.startswith("# "):
        return "\n".join([*lines, text])
    return "\n".join([head, *lines, rest])


def user_prompt(mem: Memory, payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """Log the prompt, learn from its trigger phrases, and answer with what was learned and
    the few memories relevant to the prompt (a taught rule it touches, its best matches); in a
    tree this process may only read, the memories alone."""
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return None
    if mem.store.read_only:  # a tree this process may only read: nothing logged or learned
        return _context_output("UserPromptSubmit", mem.recall(clip(prompt)).text.strip())
    sid = ensure_session(mem, payload)
    logged = mem.log(clip(prompt), role="user", session_id=sid)
    lesson = mem.learn_utterance(clip(prompt), source=f"session:{sid}")
    _set_goal(mem, sid, prompt)
    lines, learned = [], []
    notice = logged.gap_notice()
    if notice is not None:  # seed 001: the agent hears how long the person was away
        lines += [mem.sessions.temporal(sid).clock_line, notice]
    for outcome in (each.outcome for each in lesson.each() if each.outcome is not None):
        done = outcome.summary()
        note = f"planning-memory: {done['action']} {done['type']} {done['id']}: "
        note += inline(str(done["title"]), ITEM_CHARS)
        if done["notes"]:
            note += f" ({inline(str(done['notes'][0]), ITEM_CHARS)})"
        lines.append(note)
        learned.append(str(done["id"]))
    relevant = mem.recall(clip(prompt), exclude=learned)
    mem.count_applied(sid, [item.id for item in relevant.items])  # once per session each
    return _context_output("UserPromptSubmit", "\n".join([*lines, relevant.text]).strip())


def _set_goal(mem: Memory, sid: str, prompt: str) -> None:
    """Give a session with no goal the task ``prompt`` states: not the rules it teaches,
    nor an acknowledgement or a go-on ("vale, sigue", "ok continue")."""
    if mem.sessions.load(sid).value.get("goal"):
        return
    task = mem.sessions.task_of(clip(prompt))
    if task:
        mem.sessions.set_goal(sid, task)


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
    """Record a file read, modified or created by Claude (not files outside the repo); a
    command that ran through resolves the session's open errors of the same command."""
    if payload.get("tool_name") == "Bash":
        return _command_went_through(mem, payload)
    found = _file_action(payload)
    if found is None:
        return None
    path, action = found
    if not Path(path).is_absolute() and isinstance(payload.get("cwd"), str):
        path = str(Path(payload["cwd"]) / path)
    sid = ensure_session(mem, payload)
    try:
        mem.record_file_access(path, action, session_id=sid)
        if action != "read":  # an error about the file met earlier is resolved by this change
            done = f"a later {payload.get('tool_name')} of the file succeeded"
            mem.sessions.resolve_file_errors(sid, path, done)
    except UnsafePathError:
        return None  # outside the repository: not part of this project's memory
    return None


def _command_went_through(mem: Memory, payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """A Bash command that exited 0 (Claude Code sends a failed one as PostToolUseFailure):
    the open errors kept when the same command failed earlier in the session are resolved.
    A command sent to the background, or interrupted, says nothing of how it ends."""
    given, response = payload.get("tool_input"), payload.get("tool_response")
    if not isinstance(given, Mapping) or given.get("run_in_background"):
        return None
    if isinstance(response, Mapping) and (
        response.get("interrupted") or response.get("backgroundTaskId")
    ):
        return None
    call = tool_summary(given, str(payload.get("cwd") or ""))
    sid = mapped_session(mem, payload)
    if call and sid is not None:
        mem.sessions.resolve_call_errors(sid, "Bash", call, "the same command succeeded later")
    return None


def post_tool_use_failure(mem: Memory, payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """Keep a failed tool call in the session's errors list: the tool, what it was called
    on and its error (an interrupt by the user is not an error); the file it names, when
    inside the repository."""
    message = payload.get("error")
    if payload.get("is_interrupt") or not isinstance(message, str) or not message.strip():
        return None
    tool = _line(payload.get("tool_name") or "tool", 200)
    about = tool_summary(payload.get("tool_input"), str(payload.get("cwd") or ""))
    text = f"{tool} {about}: {message.strip()}" if about else f"{tool}: {message.strip()}"
    sid = ensure_session(mem, payload)
    found = _file_action({**payload, "tool_response": None})
    path = found[0] if found else None
    if path and not Path(path).is_absolute() and isinstance(payload.get("cwd"), str):
        path = str(Path(payload["cwd"]) / path)
    try:
        mem.record_error(clip(text), file=path, tool=tool, session_id=sid)
    except UnsafePathError:  # a file outside the repository: keep the error without it
        mem.record_error(clip(text), tool=tool, session_id=sid)
    return None


def stop(mem: Memory, payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """Log what Claude's reply added to the transcript: its text and tool calls."""
    capture_payload(mem, payload)
    return None


def pre_compact(mem: Memory, payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """Log the transcript's new lines and keep the decisions they state, summarise what is
    older than the window, and keep the session's summary so far with its outcome (a
    checkpoint) before Claude compacts its context."""
    sid = keep_decisions(mem, payload)
    if sid is not None:
        mem.sessions.drain([sid])
        mem.sessions.checkpoint(sid)  # seed 003: the summary so far, with its outcome
    return None


def session_end(mem: Memory, payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """Log the transcript's last lines and keep the decisions they state, then end the
    session with its end summary."""
    sid = keep_decisions(mem, payload, final=True)
    if sid is not None:
        mem.sessions.end(sid, summarize=bool(mem.settings("agents")["autoSummary"]))
    return None


Handler = Callable[[Memory, Mapping[str, Any]], "dict[str, Any] | None"]
HANDLERS: dict[str, Handler] = {
    "SessionStart": session_start,
    "UserPromptSubmit": user_prompt,
    "PostToolUse": post_tool_use,
    "PostToolUseFailure": post_tool_use_failure,
    "Stop": stop,
    "PreCompact": pre_compact,
    "SessionEnd": session_end,
}


# the events that answer with memory; the others only keep what happened in the session
ANSWERING = ("SessionStart", "UserPromptSubmit")


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
    warnings: list[str] = field(default_factory=list)  # broken files skipped, one line each

    @property
    def stderr(self) -> str:
        lines = [f"warning: {w}" for w in self.warnings] + self.errors
        return "".join(f"pmem hook: {line}\n" for line in lines)


def _payload(text: str) -> dict[str, Any]:
    """The hook's JSON object, every string cleaned: a lone surrogate (what a cut emoji's
    ``\\ud83d`` escape becomes) or an undecodable byte is replaced by U+FFFD, so the input is
    kept and can be stored as UTF-8."""
    if len(text) > MAX_STDIN:
        raise ValueError(f"hook input is over {MAX_STDIN:,} characters")
    try:
        value = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise ValueError(f"hook input is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ValueError("hook input must be a JSON object")
    cleaned: dict[str, Any] = without_lone_surrogates(value)
    return cleaned


def without_lone_surrogates(item: Any) -> Any:
    """``item`` (decoded JSON) with every lone surrogate in its strings and keys replaced by
    U+FFFD (what a cut emoji's ``\\ud83d`` escape decodes to: not storable as UTF-8)."""
    if isinstance(item, str):
        return _SURROGATE.sub("\ufffd", item)
    if isinstance(item, list):
        return [without_lone_surrogates(inner) for inner in item]
    if isinstance(item, dict):
        return {
            without_lone_surrogates(key): without_lone_surrogates(inner)
            for key, inner in item.items()
        }
    return item


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
    if not mem.settings("agents")["enabled"]:
        return None  # turned off in memory-config.json: the hooks do nothing
    if mem.store.read_only and name not in ANSWERING:
        return None  # a tree this process may only read: nothing of the session is kept
    mem.channel = CHANNEL
    mem.store.lock_timeout = LOCK_WAIT  # a long `pmem scan` costs one answer, not a timeout
    return HANDLERS[name](mem, payload)


def run(event: str, stdin_text: str, root: Path | None = None) -> HookRun:
    """Parse the hook input and run the handler; every error becomes one stderr line."""
    result = HookRun()
    try:
        with warnings.catch_warnings(record=True) as caught:  # hooks run one at a time
            warnings.simplefilter("always", BrokenFileWarning)
            try:
                output = handle(event, _payload(stdin_text), root)
            finally:
                result.warnings = _warning_lines(caught)
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


def _warning_lines(caught: list[warnings.WarningMessage]) -> list[str]:
    """Each warning a hook met as one line (a broken file it skipped, as the CLI says it),
    without the source line Python's own format adds."""
    lines = []
    for got in caught:
        skipped = issubclass(got.category, BrokenFileWarning)
        text = f"{got.message}; skipped" if skipped else f"{got.category.__name__}: {got.message}"
        if (line := _line(text, 1000)) not in lines:
            lines.append(line)
    return lines


def answer(event: str, data: bytes, root: Path | None = None) -> HookRun:
    """``run`` on the hook's input as it arrives (bytes; undecodable ones become U+FFFD)."""
    return run(event, data.decode("utf-8", "replace"), root)


def main(event: str, root: Path | None = None) -> int:
    """``pmem hook claude-code EVENT`` as a process: the payload from stdin, the hook's answer
    on stdout, errors on stderr, and always exit code 0 (a hook never blocks the agent)."""
    done = answer(event, sys.stdin.buffer.read(MAX_STDIN + 1), root)
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    return 0

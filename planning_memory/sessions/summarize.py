"""Summarisers for sessions: the interface, the built-in extractive one and an external command.

A summariser does two jobs. ``summarize`` folds a run of messages into a session's rolling
summary (seed 001): it gets the previous summary and facts and returns the new summary and the
facts the messages add. ``end_summary`` writes seed 003's end-of-session summary (Goal,
Instructions, Discoveries, Accomplished, Next Steps, Relevant Files).

- ``ExtractiveSummarizer``: built in, offline, deterministic. It keeps decisions, stated facts
  and preferences (phrase rules in English and Spanish) and ``[MEMORIZE: ...]`` facts.
- ``CommandSummarizer``: runs any LLM command line (``llm -m haiku``, ``claude -p``, ...) with
  the prompt on stdin and reads the summary from stdout (JSON, or Markdown/plain text). A
  failing, missing or hanging command (after ``timeout`` seconds its process group is killed)
  raises ``ExternalCommandError``; callers then leave the session unchanged.

This module writes nothing; the session workflow applies the results under the store lock.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from planning_memory import longterm
from planning_memory.errors import ExternalCommandError

Message = Mapping[str, Any]

MAX_SUMMARY_CHARS = 4000  # the extractive summary keeps its newest lines within this
MAX_FACT_CHARS = 300
MAX_END_ITEMS = 20
MAX_OUTPUT_BYTES = 1_000_000
MAX_PROMPT_MESSAGE_CHARS = 4000

END_SECTIONS = ("goal", "instructions", "discoveries", "accomplished", "next_steps")
SECTION_TITLES = {
    "goal": "Goal",
    "instructions": "Instructions",
    "discoveries": "Discoveries",
    "accomplished": "Accomplished",
    "next_steps": "Next Steps",
    "relevant_files": "Relevant Files",
}


# -- requests and results ----------------------------------------------------------------------
@dataclass(frozen=True)
class SummaryRequest:
    """Messages to fold into a rolling summary, with what the summary already holds."""

    messages: Sequence[Message]
    previous_summary: str = ""
    previous_facts: Sequence[str] = ()
    goal: str | None = None


@dataclass(frozen=True)
class Summary:
    """The new rolling summary text (it replaces the old one) and the facts to add."""

    summary: str
    key_facts: tuple[str, ...] = ()


@dataclass(frozen=True)
class EndRequest:
    """What the end summary is written from: the rolling summary plus everything not in it."""

    goal: str | None
    summary: str
    key_facts: Sequence[str]
    messages: Sequence[Message]
    decisions: Sequence[Mapping[str, Any]] = ()
    files_accessed: Sequence[Mapping[str, Any]] = ()
    steps: Sequence[Mapping[str, Any]] = ()
    current_context: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EndSummary:
    """Seed 003's end-of-session summary."""

    goal: str
    instructions: tuple[str, ...] = ()
    discoveries: tuple[str, ...] = ()
    accomplished: tuple[str, ...] = ()
    next_steps: tuple[str, ...] = ()
    relevant_files: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "goal": self.goal,
            "instructions": list(self.instructions),
            "discoveries": list(self.discoveries),
            "accomplished": list(self.accomplished),
            "next_steps": list(self.next_steps),
            "relevant_files": list(self.relevant_files),
        }


class Summarizer(Protocol):
    """What the session workflow needs from a summariser."""

    name: str

    def summarize(self, request: SummaryRequest) -> Summary: ...

    def end_summary(self, request: EndRequest) -> EndSummary: ...


# -- extractive rules --------------------------------------------------------------------------
_PREFERENCE = re.compile(
    r"\b(i prefer|i'd prefer|i would rather|i'd rather|i like|i want|please always|always use"
    r"|always|never|don't use|do not use|avoid|instead of|prefiero|me gusta|quiero que"
    r"|siempre|nunca|no uses|evita|en vez de|en lugar de)\b",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"\b(we decided|decided to|decision|let's use|let's go with|we'll use|we will use"
    r"|going with|we chose|chose to|decidimos|hemos decidido|vamos a usar|usaremos|elegimos"
    r"|nos quedamos con)\b",
    re.IGNORECASE,
)
_FACT = re.compile(
    r"\b(my name is|i am|i'm|we are|we use|we're using|our|the project|the server|the app"
    r"|the repo|runs on|is deployed|is hosted|lives in|me llamo|soy|somos|usamos|nuestro"
    r"|nuestra|el proyecto|el servidor|la app|se ejecuta|corre en|está en)\b"
    r"|\b\d{1,3}(\.\d{1,3}){3}\b|\bv?\d+\.\d+(\.\d+)?\b|https?://\S+",
    re.IGNORECASE,
)
_NEXT = re.compile(
    r"\b(next|todo|to do|still need|remaining|pending|later|tomorrow|then we|follow[- ]up"
    r"|falta|pendiente|siguiente|próximo|después|luego|mañana)\b",
    re.IGNORECASE,
)
_MEMORIZE = re.compile(
    r"\[(?:MEMORIZE|MEMORIZAR)\s*:\s*((?:[^\[\]\n]|\[[^\[\]\n]*\])+?)\s*\]", re.IGNORECASE
)  # the fact may hold one level of brackets, e.g. a ``[REDACTED]`` left by privacy
_REDACTED = re.compile(r"\[REDACTED(?::[^\]]*)?\]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def sentences(text: str) -> list[str]:
    """Non-empty sentences of ``text`` (split at ``.!?`` followed by space, and newlines)."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def _clip(text: str, limit: int = MAX_FACT_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def unique(items: Iterable[str]) -> list[str]:
    """``items`` without repeats (case- and space-insensitive), first occurrence kept."""
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        key = " ".join(item.lower().split())
        if key and key not in seen:
            seen.add(key)
            out.append(item)
    return out


def memorize_markers(text: str) -> list[str]:
    """The facts of ``[MEMORIZE: ...]`` / ``[MEMORIZAR: ...]`` markers in ``text`` (a fact
    that is nothing but redacted text is dropped)."""
    found = longterm.extract_memorize_markers(text)
    return [f for f in found if _REDACTED.sub("", f).strip(" \t.,;:-")]


def message_facts(message: Message) -> list[str]:
    """Decisions, stated facts and preferences in one message (extractive rules)."""
    role = message.get("role")
    text = str(message.get("content", ""))
    found = [_clip(f) for f in memorize_markers(text)]
    for sentence in sentences(_MEMORIZE.sub("", text)):
        if _DECISION.search(sentence) or (
            role == "user" and (_PREFERENCE.search(sentence) or _FACT.search(sentence))
        ):
            found.append(_clip(sentence))
    return found


def _gist(message: Message) -> str:
    first = sentences(str(message.get("content", "")))
    return _clip(first[0], 120) if first else ""


def _keep_tail(text: str, limit: int) -> str:
    """The newest lines of ``text`` that fit in ``limit`` characters."""
    lines = text.splitlines()
    kept: list[str] = []
    size = 0
    for line in reversed(lines):
        if size + len(line) + 1 > limit:
            break
        kept.append(line)
        size += len(line) + 1
    return "\n".join(reversed(kept))


class ExtractiveSummarizer:
    """Built-in summariser: deterministic, offline, no model."""

    name = "extractive"

    def summarize(self, request: SummaryRequest) -> Summary:
        msgs = list(request.messages)
        if not msgs:
            return Summary(request.previous_summary, ())
        asked = unique(g for g in (_gist(m) for m in msgs if m.get("role") == "user") if g)
        line = (
            f"{len(msgs)} messages from {msgs[0].get('at', '?')} to {msgs[-1].get('at', '?')}"
            f" ({sum(1 for m in msgs if m.get('role') == 'user')} from the user)."
        )
        if asked:
            line += " User: " + " | ".join(asked[:8])
        text = f"{request.previous_summary}\n{line}" if request.previous_summary else line
        facts = [f for m in msgs for f in message_facts(m)]
        known = {" ".join(f.lower().split()) for f in request.previous_facts}
        new = [f for f in unique(facts) if " ".join(f.lower().split()) not in known]
        return Summary(_keep_tail(text, MAX_SUMMARY_CHARS), tuple(new))

    def end_summary(self, request: EndRequest) -> EndSummary:
        msgs = list(request.messages)
        user_sentences = [
            s for m in msgs if m.get("role") == "user" for s in sentences(m["content"])
        ]
        facts = [*request.key_facts, *(f for m in msgs for f in message_facts(m))]
        instructions = [f for f in facts if _PREFERENCE.search(f)]
        discoveries = [f for f in facts if f not in instructions and not _DECISION.search(f)]
        goal = request.goal or (_clip(user_sentences[0], 200) if user_sentences else "")
        return EndSummary(
            goal=goal,
            instructions=_cap(instructions),
            discoveries=_cap(discoveries),
            accomplished=_cap(_accomplished(request, facts)),
            next_steps=_cap(_next_steps(request, msgs)),
            relevant_files=tuple(_relevant_files(request.files_accessed)),
        )


def _cap(items: Iterable[str]) -> tuple[str, ...]:
    """At most ``MAX_END_ITEMS``, newest kept."""
    return tuple(unique(_clip(i) for i in items)[-MAX_END_ITEMS:])


def _accomplished(request: EndRequest, facts: Sequence[str]) -> list[str]:
    done = [f"Decided: {d['decision']} ({d['question']})" for d in request.decisions]
    done += [f for f in facts if _DECISION.search(f)]
    done += [
        f"{s['action']}: {s['result']}" if s.get("result") else s["action"] for s in request.steps
    ]
    done += [
        f"{f['action'].capitalize()} {f['path']}"
        for f in request.files_accessed
        if f.get("action") in ("created", "modified", "deleted")
    ]
    return done


def _next_steps(request: EndRequest, msgs: Sequence[Message]) -> list[str]:
    tail = [s for m in msgs[-10:] for s in sentences(str(m.get("content", "")))]
    found = [s for s in tail if _NEXT.search(s)]
    task = request.current_context.get("active_task")
    if task:
        found.append(f"Continue: {task}")
    return found


def _relevant_files(files: Sequence[Mapping[str, Any]]) -> list[str]:
    return unique(str(f["path"]) for f in files if f.get("path"))


# -- external command --------------------------------------------------------------------------
ROLLING_PROMPT = """\
You are compressing part of a conversation between a user and an AI coding agent so that the
agent remembers it later. Keep decisions taken, facts stated (names, versions, hosts, paths)
and the user's preferences and instructions; drop small talk.
Reply with JSON only, no prose around it:
{"summary": "<the whole conversation so far, previous summary included, in at most 200 words>",
 "key_facts": ["<each NEW fact from these messages, one short sentence each>"]}
"""

END_PROMPT = """\
The work session below has ended. Write its summary for whoever continues it.
Reply with JSON only, no prose around it:
{"goal": "<one sentence>", "instructions": ["<instructions and preferences the user gave>"],
 "discoveries": ["<facts learned>"], "accomplished": ["<what was done>"],
 "next_steps": ["<what is left>"], "relevant_files": ["<repo-relative paths>"]}
"""


def _render_messages(messages: Sequence[Message]) -> str:
    lines = []
    for m in messages:
        content = str(m.get("content", ""))[:MAX_PROMPT_MESSAGE_CHARS]
        lines.append(f"[{m.get('at', '')}] {m.get('role', '?')}: {content}")
    return "\n".join(lines)


def rolling_prompt(request: SummaryRequest) -> str:
    facts = "\n".join(f"- {f}" for f in request.previous_facts)
    return (
        f"{ROLLING_PROMPT}\n<goal>{request.goal or ''}</goal>\n"
        f"<previous_summary>\n{request.previous_summary}\n</previous_summary>\n"
        f"<previous_key_facts>\n{facts}\n</previous_key_facts>\n"
        f"<messages>\n{_render_messages(request.messages)}\n</messages>\n"
    )


def end_prompt(request: EndRequest) -> str:
    def block(tag: str, items: Iterable[str]) -> str:
        return f"<{tag}>\n" + "\n".join(f"- {i}" for i in items) + f"\n</{tag}>\n"

    return (
        f"{END_PROMPT}\n<goal>{request.goal or ''}</goal>\n"
        f"<summary_of_earlier_messages>\n{request.summary}\n</summary_of_earlier_messages>\n"
        + block("key_facts", request.key_facts)
        + block("decisions", (f"{d['question']} -> {d['decision']}" for d in request.decisions))
        + block("steps", (f"{s['action']}: {s['result']}" for s in request.steps))
        + block("files", (f"{f['action']} {f['path']}" for f in request.files_accessed))
        + block("current_context", (f"{k}: {v}" for k, v in request.current_context.items() if v))
        + f"<recent_messages>\n{_render_messages(request.messages)}\n</recent_messages>\n"
    )


class CommandSummarizer:
    """Runs ``command`` (a command line, split like a shell would, never run by a shell)."""

    name = "command"

    def __init__(self, command: str | Sequence[str], timeout: float = 60.0) -> None:
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise ExternalCommandError("the summariser command is empty")
        self.timeout = timeout

    def summarize(self, request: SummaryRequest) -> Summary:
        return parse_rolling(self.run(rolling_prompt(request)))

    def end_summary(self, request: EndRequest) -> EndSummary:
        result = parse_end(self.run(end_prompt(request)))
        if not result.relevant_files:
            result = replace(result, relevant_files=tuple(_relevant_files(request.files_accessed)))
        if not result.goal and request.goal:
            result = replace(result, goal=request.goal)
        return result

    def run(self, prompt: str) -> str:
        """The command's stdout for ``prompt`` on stdin; ExternalCommandError on any failure."""
        try:
            proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # its own process group, so a timeout kills it all
            )
        except OSError as exc:
            raise self._error(f"could not start: {exc.strerror or exc}") from None
        try:
            out, err = proc.communicate(prompt.encode("utf-8"), timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            raise self._error(f"timed out after {self.timeout:g} s and was stopped") from None
        if proc.returncode != 0:
            last = err.decode("utf-8", "replace").strip().splitlines()
            why = f": {last[-1][:300]}" if last else ""
            raise self._error(f"exited with status {proc.returncode}{why}")
        text = out[:MAX_OUTPUT_BYTES].decode("utf-8", "replace").strip()
        if not text:
            raise self._error("printed nothing")
        return text

    def _error(self, what: str) -> ExternalCommandError:
        return ExternalCommandError(
            f"summariser command {shlex.join(self.argv)!r} {what}",
            hint="the session was left unchanged; fix memory.shortTerm.summarizer.command "
            "or unset it to use the built-in summariser",
        )


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.communicate(timeout=5)


# -- parsing command output --------------------------------------------------------------------
_FENCE = re.compile(r"```(?:json)?\s*\n(.*?)\n```", re.DOTALL)


def _json_object(text: str) -> dict[str, Any] | None:
    """The JSON object in ``text`` (bare, fenced, or the outermost ``{...}``), else None."""
    fenced = _FENCE.search(text)
    candidates = [fenced.group(1)] if fenced else []
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return ()
    return tuple(
        _clip(str(v), 2000) for v in value if isinstance(v, (str, int, float)) and str(v).strip()
    )


def parse_rolling(text: str) -> Summary:
    """A rolling summary from command output: JSON ``{summary, key_facts}`` or plain text."""
    obj = _json_object(text)
    if obj is not None and isinstance(obj.get("summary"), str):
        return Summary(obj["summary"].strip(), _strings(obj.get("key_facts")))
    return Summary(text, ())


_HEADING = re.compile(r"^\s*(?:#{1,6}\s*|\*\*)?([A-Za-z][A-Za-z ]+?)(?:\*\*)?\s*:?\s*$")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def _markdown_sections(text: str) -> dict[str, list[str]]:
    """``{section key: lines}`` for headings named like seed 003's sections."""
    keys = {title.lower(): key for key, title in SECTION_TITLES.items()}
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading and heading.group(1).strip().lower() in keys:
            current = keys[heading.group(1).strip().lower()]
            sections.setdefault(current, [])
        elif current is not None and line.strip():
            sections[current].append(_BULLET.sub("", line).strip())
    return sections


def parse_end(text: str) -> EndSummary:
    """An end summary from command output: JSON with the six keys, or Markdown sections."""
    obj = _json_object(text)
    if obj is None or not any(k in obj for k in SECTION_TITLES):
        obj = _markdown_sections(text)
        if not obj:
            raise ExternalCommandError(
                "summariser output has none of the sections " + ", ".join(SECTION_TITLES.values()),
                hint="the session was left unchanged; the command must print JSON or Markdown "
                "with those headings",
            )
        obj = {k: (" ".join(v) if k == "goal" else v) for k, v in obj.items()}
    goal = obj.get("goal")
    return EndSummary(
        goal=_clip(goal, 2000) if isinstance(goal, str) else "",
        instructions=_strings(obj.get("instructions")),
        discoveries=_strings(obj.get("discoveries")),
        accomplished=_strings(obj.get("accomplished")),
        next_steps=_strings(obj.get("next_steps")),
        relevant_files=tuple(p for p in _strings(obj.get("relevant_files")) if _safe_rel(p)),
    )


def _safe_rel(path: str) -> bool:
    parts = path.replace("\\", "/").split("/")
    return bool(path) and not path.startswith("/") and ".." not in parts and "\x00" not in path


def from_config(config: Mapping[str, Any]) -> Summarizer:
    """The summariser an effective config names: its command, else the extractive one."""
    spec = config["memory"]["shortTerm"].get("summarizer") or {}
    command = spec.get("command")
    if command:
        return CommandSummarizer(command, float(spec.get("timeoutSeconds") or 60))
    return ExtractiveSummarizer()

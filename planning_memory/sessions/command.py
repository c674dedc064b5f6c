"""The external-command summariser: any LLM command line, the prompt on stdin.

It reads the summary from stdout (JSON, or Markdown/plain text). A failing, missing or
hanging command (after ``timeout`` seconds its process group is killed) raises
``ExternalCommandError``; the session workflow then falls back to the built-in summariser.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from planning_memory.errors import ExternalCommandError
from planning_memory.sessions.summary_base import (
    MAX_OUTPUT_BYTES,
    MAX_PROMPT_MESSAGE_CHARS,
    SECTION_TITLES,
    EndRequest,
    EndSummary,
    Message,
    Summary,
    SummaryRequest,
    clip,
    error_line,
    relevant_files,
    safe_rel,
)

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
        + block("errors", map(error_line, request.errors))
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
            result = replace(result, relevant_files=tuple(relevant_files(request.files_accessed)))
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
        clip(str(v), 2000) for v in value if isinstance(v, (str, int, float)) and str(v).strip()
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
        goal=clip(goal, 2000) if isinstance(goal, str) else "",
        instructions=_strings(obj.get("instructions")),
        discoveries=_strings(obj.get("discoveries")),
        accomplished=_strings(obj.get("accomplished")),
        next_steps=_strings(obj.get("next_steps")),
        relevant_files=tuple(p for p in _strings(obj.get("relevant_files")) if safe_rel(p)),
    )

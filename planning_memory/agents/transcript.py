"""Claude Code transcripts: the lines a session's JSONL file gained since a byte offset, as turns.

Claude Code appends one JSON object per line to the file a hook's ``transcript_path`` names:
``type`` ``user`` (a prompt, or tool results) and ``assistant`` (text, thinking and tool
calls, often one content block per line), plus ``system``, ``summary`` and bookkeeping lines.
``read_new`` reads only the bytes after an offset and stops at the last complete line, so a
line still being written is read next time; ``turns`` keeps what memory wants: the user's
prompts and, for each stretch of assistant lines, its text and its tool calls (name and a
short summary of the input). Sub-agent (sidechain) and meta lines, slash-command output,
compaction summaries and thinking are left out. This module reads; it writes nothing.
"""

from __future__ import annotations

import json
import re
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

MAX_READ = 16 * 1024 * 1024  # bytes read per call; the rest waits for the next call
SKIP_BLOCK = 1024 * 1024  # how a line longer than MAX_READ is stepped over
INPUT_CHARS = 200  # a tool call's input summary
# the input field that says what a tool call was about, first present wins
INPUT_KEYS = (
    "file_path",
    "notebook_path",
    "command",
    "url",
    "pattern",
    "query",
    "path",
    "description",
    "prompt",
)
NOT_PROMPTS = (  # user lines that are Claude Code's own, not something the user said
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "Caveat: ",
    "[Request interrupted by user",
)
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)


@dataclass(frozen=True)
class Chunk:
    """What ``read_new`` read: the lines' JSON objects and the offset after the last one."""

    entries: list[dict[str, Any]]
    offset: int
    restarted: bool = False  # the file was shorter than the offset, so it was read from 0


@dataclass(frozen=True)
class Turn:
    """A user prompt, or an assistant's text and tool calls (``(name, input summary)``)."""

    role: str
    text: str
    tools: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Turns:
    """The turns of some transcript lines, the newest to-do list and the newest timestamp."""

    turns: list[Turn]
    todos: list[dict[str, Any]] | None  # the last TodoWrite's list; None: no TodoWrite
    last_at: str | None

    def active_task(self) -> str | None:
        """The to-do in progress (else the first pending one); None when all are done."""
        items = [t for t in self.todos or [] if isinstance(t, Mapping)]
        for status in ("in_progress", "pending"):
            found = next((t for t in items if t.get("status") == status), None)
            if found is not None and str(found.get("content") or "").strip():
                return _clip(str(found["content"]), 500)
        return None


# -- reading -------------------------------------------------------------------------------------
def read_new(path: Path, offset: int, *, final: bool = False, limit: int = MAX_READ) -> Chunk:
    """The complete lines after ``offset`` (at most ``limit`` bytes of them). A missing file
    reads as nothing; a file shorter than ``offset`` (replaced or truncated) is read from its
    start. An unterminated last line is left for the next call, unless ``final`` and it
    parses. Lines that are not JSON objects are skipped."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return Chunk([], offset)
    if not stat.S_ISREG(info.st_mode):  # a FIFO would block the hook forever
        raise ValueError(f"{path}: the transcript is not a regular file")
    size = info.st_size
    restarted = size < offset
    start = 0 if restarted else offset
    with path.open("rb") as file:
        file.seek(start)
        data = file.read(limit)
        end = data.rfind(b"\n") + 1
        if end == 0 and len(data) >= limit:  # one line longer than the limit: step over it
            return Chunk([], _line_end(file, start + len(data)), restarted)
    entries = _objects(data[:end].split(b"\n"))
    tail = data[end:]
    if final and tail.strip() and len(data) < limit:
        last = _objects([tail])
        if last:
            entries, end = [*entries, *last], len(data)
    return Chunk(entries, start + end, restarted)


def _line_end(file: BinaryIO, position: int) -> int:
    """The offset just past the next newline at or after ``position`` (or the file's end)."""
    file.seek(position)
    while block := file.read(SKIP_BLOCK):
        found = block.find(b"\n")
        if found >= 0:
            return position + found + 1
        position += len(block)
    return position


def _objects(lines: Iterable[bytes]) -> list[dict[str, Any]]:
    found = []
    for line in lines:
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


# -- turns ---------------------------------------------------------------------------------------
def turns(
    entries: Sequence[Mapping[str, Any]], *, since: datetime | None = None, cwd: str = ""
) -> Turns:
    """The user prompts and assistant turns of ``entries``, in order; lines older than
    ``since`` are left out. Paths under ``cwd`` in tool inputs are shown relative to it."""
    out: list[Turn] = []
    text: list[str] = []
    tools: list[tuple[str, str]] = []
    todos: list[dict[str, Any]] | None = None
    last_at: str | None = None

    def flush() -> None:
        if text or tools:
            out.append(Turn("assistant", "\n\n".join(text), tuple(tools)))
        text.clear()
        tools.clear()

    for entry in entries:
        at = entry.get("timestamp")
        last_at = at if isinstance(at, str) else last_at
        if _skipped(entry, since):
            continue
        message = entry.get("message")
        message = message if isinstance(message, Mapping) else {}
        if entry.get("type") == "assistant" and message.get("model") != "<synthetic>":
            for block in _blocks(message.get("content")):
                if block.get("type") == "text":
                    said = _clean(block.get("text"))
                    text.extend([said] if said else [])
                elif block.get("type") == "tool_use":
                    name = _clip(str(block.get("name") or "tool"), 200)
                    tools.append((name, tool_summary(block.get("input"), cwd)))
                    given = block.get("input")
                    if name == "TodoWrite" and isinstance(given, Mapping):
                        listed = given.get("todos")
                        todos = list(listed) if isinstance(listed, list) else todos
        elif entry.get("type") == "user":
            prompt = _prompt(message.get("content"))
            if prompt:
                flush()
                out.append(Turn("user", prompt))
    flush()
    return Turns(out, todos, last_at)


def _skipped(entry: Mapping[str, Any], since: datetime | None) -> bool:
    if entry.get("isSidechain") or entry.get("isMeta") or entry.get("isCompactSummary"):
        return True
    at = parse_time(entry.get("timestamp"))
    return since is not None and at is not None and at < since


def parse_time(value: Any) -> datetime | None:
    """An ISO 8601 timestamp (``2026-01-20T11:57:17.716Z``) as an aware datetime, else None."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def _blocks(content: Any) -> list[Mapping[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, Mapping)]
    return []


def _prompt(content: Any) -> str:
    """What the user typed, or "" for tool results and Claude Code's own lines."""
    blocks = _blocks(content)
    if any(b.get("type") == "tool_result" for b in blocks):
        return ""
    text = "\n".join(_clean(b.get("text")) for b in blocks if b.get("type") == "text").strip()
    return "" if text.startswith(NOT_PROMPTS) else text


def _clean(value: Any) -> str:
    return _REMINDER.sub("", value).strip() if isinstance(value, str) else ""


def tool_summary(given: Any, cwd: str = "") -> str:
    """A tool call's input in one short line: its path, command, URL, pattern, ... (paths
    under ``cwd`` made relative), a to-do list's items, else its compact JSON."""
    if not isinstance(given, Mapping):
        return ""
    for key in INPUT_KEYS:
        value = given.get(key)
        if isinstance(value, str) and value.strip():
            return _clip(value.replace(cwd.rstrip("/") + "/", "") if cwd else value)
    todos = given.get("todos")
    if isinstance(todos, list):
        items = [t for t in todos if isinstance(t, Mapping)]
        return _clip("; ".join(f"{t.get('status')}: {t.get('content')}" for t in items))
    return _clip(json.dumps(given, ensure_ascii=False, separators=(",", ":"), default=str))


def _clip(text: str, limit: int = INPUT_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"

"""Aider's ``read:`` list in ``.aider.conf.yml``, edited as text: items added, and taken back.

The top-level ``read:`` key is extended in the form it has. A block list gets ``- item`` lines
after its last one, each marked ``# planning-memory``; a key that was not there comes marked
too. A one-line value (``read: NOTES.md``, ``read: [a, b]``) becomes a flow list, and its line
keeps what it was after ``# planning-memory, was:``. Taking the items back removes the marked
lines (the marked key too once it lists nothing) or puts the one line back as it was, so the
file comes back byte for byte; what the user listed stays, whatever its name. Every other line
and comment is left as it is. Pure: text in, text out.
"""

from __future__ import annotations

import re
from pathlib import Path

MARK = "# planning-memory"
WAS = f"{MARK}, was: "

_READ = re.compile(r"^read:[ \t]*(?P<value>[^#]*?)[ \t]*(?P<comment>#.*)?$")
_ITEM = re.compile(r"^(?P<pad>[ \t]*)-(?:[ \t]+(?P<item>[^#]*?))?[ \t]*(?P<comment>#.*)?$")


def _lines(text: str | None) -> list[str]:
    """``text``'s lines with their line ends (only ``\\n`` ends a line, as in git)."""
    parts = (text or "").split("\n")
    return [line + "\n" for line in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _bare(line: str) -> str:
    return line.rstrip("\r\n")


def _eol(text: str | None) -> str:
    return "\r\n" if text and "\r\n" in text else "\n"


def _unquote(value: str) -> str:
    return value.strip().strip("'\"")


def _flow(value: str) -> list[str]:
    """The items of a one-line value: ``[a, b]`` or ``a``."""
    if value.startswith("[") and value.endswith("]"):
        return [_unquote(v) for v in value[1:-1].split(",") if v.strip()]
    return [_unquote(value)] if value else []


class Found:
    """The top-level ``read:`` key: its line, the line after its items, its items, whether it
    is a block list, and which item lines are marked as ours."""

    def __init__(self, lines: list[str], first: int) -> None:
        self.lines, self.first = lines, first
        head = _READ.match(_bare(lines[first]))
        assert head is not None
        self.value, self.comment = head.group("value"), head.group("comment") or ""
        self.block = not self.value
        self.stop = first + 1
        self.items: list[str] = _flow(self.value)
        self.marked: list[int] = []
        while self.block and self.stop < len(lines):
            item = _ITEM.match(_bare(lines[self.stop]))
            if item is None:
                break
            self.items.append(_unquote(item.group("item") or ""))
            if (item.group("comment") or "").strip() == MARK:
                self.marked.append(self.stop)
            self.stop += 1

    @classmethod
    def of(cls, lines: list[str]) -> Found | None:
        for number, line in enumerate(lines):
            if _READ.match(_bare(line)):
                return cls(lines, number)
        return None


def reads_of(text: str | None, path: Path) -> list[str]:
    found = Found.of(_lines(text))
    return found.items if found else []


def set_reads(text: str | None, files: list[str], path: Path) -> str:
    """``text`` whose top-level ``read:`` lists ``files`` too (the key added when absent)."""
    lines, eol = _lines(text), _eol(text)
    found = Found.of(lines)
    missing = [f for f in files if found is None or f not in found.items]
    if not missing:
        return text or ""
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += eol
    if found is None:
        return "".join(lines) + f"read:  {MARK}{eol}" + _block(missing, "  ", eol)
    if found.block:
        last = _ITEM.match(_bare(lines[found.stop - 1])) if found.stop > found.first + 1 else None
        indent = last.group("pad") if last else "  "
        head, tail = "".join(lines[: found.stop]), "".join(lines[found.stop :])
        return head + _block(missing, indent, eol) + tail
    was = found.comment if found.comment.startswith(WAS) else WAS + _bare(lines[found.first])
    line = f"read: [{', '.join([*found.items, *missing])}]  {was}{eol}"
    return "".join(lines[: found.first]) + line + "".join(lines[found.stop :])


def _block(items: list[str], indent: str, eol: str) -> str:
    return "".join(f"{indent}- {item}  {MARK}{eol}" for item in items)


def drop_reads(text: str | None, files: list[str], path: Path) -> str:
    """``text`` without the ``read:`` items ``set_reads`` added (and its key, when it added
    that and it lists nothing else)."""
    lines = _lines(text)
    found = Found.of(lines)
    if found is None:
        return text or ""
    if not found.block and found.comment.startswith(WAS):
        return _one_line_back(found, files)
    own = [n for n in found.marked if _item(lines[n]) in files]
    if found.comment.strip() == MARK and len(own) == len(found.items):
        own = list(range(found.first, found.stop))
    return "".join(line for n, line in enumerate(lines) if n not in own)


def _one_line_back(found: Found, files: list[str]) -> str:
    """The one-line ``read:`` value put back as it was before we extended it."""
    lines = found.lines
    was = found.comment[len(WAS) :]
    eol = lines[found.first][len(_bare(lines[found.first])) :]
    before = _READ.match(was)
    original = _flow(before.group("value")) if before else []
    kept = [i for i in found.items if i not in files or i in original]
    line = was + eol if kept == original else f"read: [{', '.join(kept)}]{eol}"
    return "".join(lines[: found.first]) + line + "".join(lines[found.stop :])


def _item(line: str) -> str | None:
    found = _ITEM.match(_bare(line))
    return _unquote(found.group("item") or "") if found else None

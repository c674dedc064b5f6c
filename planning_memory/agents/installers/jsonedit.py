"""JSON files edited in place: a new value written into the old text with the least change.

``parse`` reads JSON with ``//`` and ``/* */`` comments allowed (VS Code's ``mcp.json`` and
Gemini CLI's ``settings.json`` are JSONC). ``patch`` gives the text that holds a new value by
changing only what differs: a member or item added or taken out, a value replaced; every other
byte (indentation, one-line objects, key order, comments, line endings) stays, and new text is
laid out as the file is. Adding members and taking them out again gives the same bytes back.
Pure: text in, text out.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planning_memory.errors import InputError

_COMMENT = re.compile(r'"(?:[^"\\]|\\.)*"|//[^\n]*|/\*.*?\*/', re.DOTALL)
_SPACE = re.compile(r"[ \t\r\n]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SCALAR = re.compile(r"[^\s,:\]}]+")


def blank_comments(text: str) -> str:
    """``text`` with its comments turned to spaces (line breaks kept): positions, lines and
    columns stay those of ``text``."""
    if "/" not in text:
        return text

    def blank(found: re.Match[str]) -> str:
        part = found.group()
        return part if part.startswith('"') else re.sub(r"[^\r\n]", " ", part)

    return _COMMENT.sub(blank, text)


def parse(text: str | None, path: Path) -> Any:
    """The value of JSON ``text`` ({} for a missing or blank file), or one clear error."""
    if text is None or not text.strip():
        return {}
    try:
        return json.loads(blank_comments(text))
    except json.JSONDecodeError as exc:
        raise InputError(
            f"not valid JSON: {exc.msg}",
            path=str(path),
            line=exc.lineno,
            column=exc.colno,
            hint="fix or move the file; nothing was written",
        ) from None


# -- where each value is -----------------------------------------------------------------------
@dataclass
class Node:
    """A value's span in the text; a container's members (object keys, or None for items)."""

    start: int
    end: int
    kind: str = ""  # "{", "[" or "" (a scalar)
    members: list[Member] = field(default_factory=list)


@dataclass
class Member:
    key: str | None
    start: int  # the key's start (an item: the value's)
    sep: str  # between the key and the value (": ")
    node: Node

    @property
    def end(self) -> int:
        return self.node.end


def _skip(text: str, at: int) -> int:
    found = _SPACE.match(text, at)
    return found.end() if found else at


def _node(text: str, at: int) -> Node:
    """The value starting at ``at`` of valid JSON ``text`` (comments blanked)."""
    first = text[at]
    if first == '"':
        found = _STRING.match(text, at)
        return Node(at, found.end() if found else len(text))
    if first not in "{[":
        scalar = _SCALAR.match(text, at)
        return Node(at, scalar.end() if scalar else at + 1)
    close = "}" if first == "{" else "]"
    node = Node(at, at, first)
    at = _skip(text, at + 1)
    while text[at] != close:
        start, key, sep = at, None, ""
        if first == "{":
            found = _STRING.match(text, at)
            assert found is not None  # valid JSON: a key is a string
            key, at = json.loads(found.group()), found.end()
            value_at = _skip(text, _skip(text, at) + 1)
            sep, at = text[at:value_at], value_at
        child = _node(text, at)
        node.members.append(Member(key, start, sep, child))
        at = _skip(text, child.end)
        if text[at] == ",":
            at = _skip(text, at + 1)
    node.end = at + 1
    return node


# -- the file's layout -------------------------------------------------------------------------
@dataclass(frozen=True)
class Style:
    eol: str  # "\n" or "\r\n"
    unit: str  # one level of indentation
    key_sep: str  # ": " or ":"
    item_sep: str  # between items of a one-line container: ", " or ","

    @classmethod
    def of(cls, text: str, root: Node) -> Style:
        eol = "\r\n" if "\r\n" in text else "\n"
        seps = [m.sep for m in _members(root) if m.key is not None and "\n" not in m.sep]
        key_sep = seps[0] if seps else ": "
        item_sep, unit = None, None
        for node in _containers(root):
            if len(node.members) > 1 and not _multiline(text, node) and item_sep is None:
                item_sep = text[node.members[0].end : node.members[1].start]
            if _multiline(text, node) and unit is None:
                inner, outer = _indent(text, node.members[0].start), _indent(text, node.start)
                unit = inner[len(outer) :] if inner.startswith(outer) and inner != outer else None
        item_sep = item_sep if item_sep is not None else "," + key_sep[1:]
        return cls(eol, unit or "  ", key_sep, item_sep)


def _containers(node: Node) -> list[Node]:
    found = [node] if node.kind else []
    for member in node.members:
        found += _containers(member.node)
    return found


def _members(node: Node) -> list[Member]:
    return [m for each in _containers(node) for m in each.members]


def _indent(text: str, at: int) -> str:
    """The leading white space of the line ``at`` is on."""
    start = text.rfind("\n", 0, at) + 1
    end = start
    while end < len(text) and text[end] in " \t":
        end += 1
    return text[start:end]


def _multiline(text: str, node: Node) -> bool:
    """Whether a container's members are on lines of their own."""
    return bool(node.members) and "\n" in text[node.start : node.members[0].start]


# -- patch -------------------------------------------------------------------------------------
Edit = tuple[int, int, str]  # replace text[start:end] with the string


def patch(text: str | None, new: Any) -> str:
    """``text`` changed so that it holds ``new``: only what differs is rewritten, in the
    file's layout (a blank or missing file: ``new`` with a 2-space indent)."""
    if text is None or not text.strip():
        return json.dumps(new, indent=2, ensure_ascii=False) + "\n" if new else text or ""
    blank = blank_comments(text)
    old = json.loads(blank)
    root = _node(blank, _skip(blank, 0))
    layout = Layout(text, Style.of(text, root))
    layout.diff(root, old, new, "\n" in text.strip() or not root.members)
    out = text
    for start, end, part in sorted(layout.edits, reverse=True):
        out = out[:start] + part + out[end:]
    return out


@dataclass
class Layout:
    """The edits that turn a file's value into another, laid out as the file is."""

    text: str
    style: Style
    edits: list[Edit] = field(default_factory=list)

    def dump(self, value: Any, indent: str, multiline: bool) -> str:
        if not multiline:
            seps = (self.style.item_sep, self.style.key_sep)
            return json.dumps(value, ensure_ascii=False, separators=seps)
        seps = (",", self.style.key_sep)
        text = json.dumps(value, ensure_ascii=False, indent=self.style.unit, separators=seps)
        return text.replace("\n", self.style.eol + indent)

    def diff(self, node: Node, old: Any, new: Any, multiline: bool) -> None:
        """The edits turning ``old`` (at ``node``) into ``new``; ``multiline``: whether the
        container it is in has a line per member."""
        if old == new and type(old) is type(new):
            return
        if node.kind == "{" and isinstance(old, dict) and isinstance(new, dict):
            self._object(node, old, new)
        elif node.kind == "[" and isinstance(old, list) and isinstance(new, list):
            self._array(node, old, new)
        else:
            indent = _indent(self.text, node.start)
            self.edits.append((node.start, node.end, self.dump(new, indent, multiline)))

    def _object(self, node: Node, old: dict[str, Any], new: dict[str, Any]) -> None:
        last = {m.key: n for n, m in enumerate(node.members)}
        gone = {n for key, n in last.items() if key not in new}
        added = [(key, value) for key, value in new.items() if key not in old]
        if gone and added:  # both in one object: write it out anew
            self._replace(node, new)
            return
        inner = self._inner_multiline(node)
        for key, value in new.items():
            if key in old:
                self.diff(node.members[last[key]].node, old[key], value, inner)
        texts = [self._member(node, key, value) for key, value in added]
        self._members(node, gone, {len(node.members) - 1: texts} if texts else {})

    def _array(self, node: Node, old: list[Any], new: list[Any]) -> None:
        def keys(values: list[Any]) -> list[str]:
            return [json.dumps(v, sort_keys=True) for v in values]

        matcher = difflib.SequenceMatcher(None, keys(old), keys(new), autojunk=False)
        pairs: list[tuple[int, int]] = []
        gone: set[int] = set()
        added: dict[int, list[Any]] = {}
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            paired = min(i2 - i1, j2 - j1)
            pairs += [(i1 + k, j1 + k) for k in range(paired)]
            gone.update(range(i1 + paired, i2))
            if j2 - j1 > paired:
                added.setdefault(i1 + paired - 1, []).extend(new[j1 + paired : j2])
        if gone and added:  # both in one array: write it out anew
            self._replace(node, new)
            return
        inner = self._inner_multiline(node)
        for i, j in pairs:
            self.diff(node.members[i].node, old[i], new[j], inner)
        texts = {n: [self._member(node, None, v) for v in values] for n, values in added.items()}
        self._members(node, gone, texts)

    def _replace(self, node: Node, new: Any) -> None:
        multiline = "\n" in self.text[node.start : node.end] or self._inner_multiline(node)
        indent = _indent(self.text, node.start)
        self.edits.append((node.start, node.end, self.dump(new, indent, multiline)))

    def _inner_multiline(self, node: Node) -> bool:
        """Whether a container has (or, empty, gets) a line per member."""
        if node.members:
            return _multiline(self.text, node)
        return "\n" in self.text.strip() or node.start == _skip(self.text, 0)

    def _member_indent(self, node: Node) -> str:
        if _multiline(self.text, node):
            return _indent(self.text, node.members[0].start)
        return _indent(self.text, node.start) + self.style.unit

    def _member(self, node: Node, key: str | None, value: Any) -> str:
        text = self.dump(value, self._member_indent(node), self._inner_multiline(node))
        if key is None:
            return text
        return json.dumps(key, ensure_ascii=False) + self.style.key_sep + text

    def _members(self, node: Node, gone: set[int], added: dict[int, list[str]]) -> None:
        """Take out the members ``gone``; put ``added[n]`` after member n (-1: first)."""
        members, multiline = node.members, self._inner_multiline(node)
        sep = "," + self.style.eol + self._member_indent(node) if multiline else self.style.item_sep
        if gone and len(gone) == len(members):
            self.edits.append((node.start + 1, node.end - 1, ""))
        else:
            for first, last in _runs(sorted(gone)):
                if last + 1 < len(members):
                    self.edits.append((members[first].start, members[last + 1].start, ""))
                else:
                    self.edits.append((members[first - 1].end, members[last].end, ""))
        for after, texts in added.items():
            if not members:
                head = sep[1:] if multiline else ""
                close = self.style.eol + _indent(self.text, node.start) if multiline else ""
                self.edits.append((node.start + 1, node.end - 1, head + sep.join(texts) + close))
            elif after < 0:
                at = members[0].start
                self.edits.append((at, at, "".join(t + sep for t in texts)))
            else:
                at = members[after].end
                self.edits.append((at, at, "".join(sep + t for t in texts)))


def _runs(numbers: list[int]) -> list[tuple[int, int]]:
    """Consecutive runs of sorted ``numbers`` as (first, last)."""
    runs: list[tuple[int, int]] = []
    for n in numbers:
        if runs and runs[-1][1] == n - 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    return runs

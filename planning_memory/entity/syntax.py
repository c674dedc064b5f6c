"""Shared tree-sitter plumbing for the extractors: queries, nested scopes and text clean-up.

Extractors run one query per file and work on the captured nodes only; they never walk the
whole tree in Python. ``nest`` turns the captured definitions into qualified names and
``innermost`` assigns positions (calls, branch points) to the innermost enclosing function.
Pure: no I/O.
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from functools import lru_cache

from tree_sitter import Language, Node, Parser, Query, QueryCursor

from planning_memory.entity.facts import FunctionFact

FUNCTION_KINDS = frozenset({"function", "method", "constructor"})
MAX_SIGNATURE = 300
MAX_SUMMARY = 200
MAX_CALL = 120

_WS = re.compile(r"\s+")
_ARGS = re.compile(r"\((?:[^()]|\(\))+\)")  # arguments, calls in them already reduced
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_STRING_PREFIX = re.compile(r"[rRbBuUfF]{1,2}(?=[\"'])")
_LICENSE = re.compile(r"copyright|license|spdx-|all rights reserved", re.IGNORECASE)


class Grammar:
    """A tree-sitter language with its parser and compiled query (built once per process)."""

    def __init__(self, language: object, query: str) -> None:
        self.language = Language(language)
        self.parser = Parser(self.language)
        self.query = Query(self.language, query)

    def captures(self, source: bytes) -> tuple[Node, dict[str, list[Node]]]:
        root = self.parser.parse(source).root_node
        return root, QueryCursor(self.query).captures(root)


class Scope:
    """A named definition (function, method, class, module block) and what happened in it."""

    __slots__ = ("branches", "calls", "end", "kind", "name", "node", "parent", "qualified", "start")

    def __init__(self, node: Node, name: str, kind: str) -> None:
        self.node = node
        self.name = name
        self.kind = kind
        self.start = node.start_byte
        self.end = node.end_byte
        self.parent: Scope | None = None
        self.qualified = name
        self.calls: list[str] = []
        self.branches = 0

    @property
    def is_function(self) -> bool:
        return self.kind in FUNCTION_KINDS

    @property
    def depth_zero(self) -> bool:
        return self.parent is None


def nest(scopes: list[Scope]) -> list[Scope]:
    """Sort ``scopes`` by position and set each one's parent and dotted qualified name."""
    scopes.sort(key=lambda s: (s.start, -s.end))
    stack: list[Scope] = []
    for scope in scopes:
        while stack and stack[-1].end <= scope.start:
            stack.pop()
        if stack:
            scope.parent = stack[-1]
            scope.qualified = f"{stack[-1].qualified}.{scope.name}"
        stack.append(scope)
    return scopes


def innermost(scopes: Sequence[Scope], positions: Iterable[int]) -> list[Scope | None]:
    """For each position (ascending), the innermost function scope containing it, or None."""
    result: list[Scope | None] = []
    # open scopes, each with the innermost function scope at or above it
    stack: list[tuple[Scope, Scope | None]] = []
    i, count = 0, len(scopes)
    for pos in positions:
        while i < count and scopes[i].start <= pos:
            scope = scopes[i]
            while stack and stack[-1][0].end <= scope.start:
                stack.pop()
            above = stack[-1][1] if stack else None
            stack.append((scope, scope if scope.kind in FUNCTION_KINDS else above))
            i += 1
        while stack and stack[-1][0].end <= pos:
            stack.pop()
        result.append(stack[-1][1] if stack else None)
    return result


def assign_calls(scopes: Sequence[Scope], callees: list[tuple[int, str]]) -> None:
    """Append each ``(position, callee)`` to the innermost function holding it."""
    callees.sort(key=lambda item: item[0])
    owners = innermost(scopes, [pos for pos, _ in callees])
    for owner, (_pos, callee) in zip(owners, callees, strict=True):
        if owner is not None:
            owner.calls.append(callee)


def count_branches(scopes: Sequence[Scope], nodes: list[Node]) -> int:
    """Add branch points to their functions; returns the file's total."""
    positions = sorted(node.start_byte for node in nodes)
    for owner in innermost(scopes, positions):
        if owner is not None:
            owner.branches += 1
    return len(positions)


def ordered(nodes: list[Node]) -> list[Node]:
    """``nodes`` in source order (captures of different patterns come grouped)."""
    return sorted(nodes, key=lambda n: n.start_byte)


def within(positions: list[int], start: int, end: int) -> tuple[int, int]:
    """Index range of the sorted ``positions`` that fall in ``[start, end)``."""
    return bisect_left(positions, start), bisect_left(positions, end)


# -- text ----------------------------------------------------------------------------------
def text(node: Node | None) -> str:
    if node is None:
        return ""
    raw = node.text
    return raw.decode("utf-8", "replace") if raw is not None else ""


def node_texts(nodes: Sequence[Node], source: bytes) -> list[str]:
    """Each node's ``text``; an ASCII source (most files) is decoded once and sliced by byte
    offsets, which are its character offsets, instead of copying and decoding each node."""
    if not source.isascii():
        return [text(node) for node in nodes]
    whole = source.decode("ascii")
    return [whole[node.start_byte : node.end_byte] for node in nodes]


def field_text(node: Node, field: str) -> str:
    return text(node.child_by_field_name(field))


def squash(value: str, limit: int = MAX_SIGNATURE) -> str:
    """Whitespace collapsed to single spaces, capped at ``limit`` characters."""
    # a printable text holds no whitespace but single spaces there (most signatures)
    if "  " in value or not value.isprintable():
        value = _WS.sub(" ", value)
    value = value.strip()
    return value if len(value) <= limit else value[: limit - 1] + "…"


@lru_cache(maxsize=1 << 16)  # a scan meets the same call texts over and over
def callee(value: str) -> str:
    """A callee expression as written, with chained call arguments reduced to ``()``."""
    if "(" in value:
        previous = None
        while previous != value:
            previous, value = value, _ARGS.sub("()", value)
    if "\n" in value or "  " in value or "\t" in value:
        value = _WS.sub("", value)
    value = value.removeprefix("await ")
    return value if len(value) <= MAX_CALL else value[: MAX_CALL - 1] + "…"


def unique(items: Iterable[str]) -> list[str]:
    """Items without repeats, in first-seen order."""
    return list(dict.fromkeys(items))


def last_segment(name: str) -> str:
    for sep in ("::", "."):
        if sep in name:
            name = name.rsplit(sep, 1)[1]
    return name.rstrip("!")


def short_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=8).hexdigest()


def lines(node: Node) -> list[int]:
    return [node.start_point.row + 1, node.end_point.row + 1]


def string_value(raw: str) -> str:
    """The content of a Python-style string literal: its prefix (``r``, ``b``, ``f``...) and
    quotes removed. Text that is not a prefixed literal is only unquoted, never shortened."""
    match = _STRING_PREFIX.match(raw)
    return unquote(raw[match.end() :] if match else raw)


def unquote(raw: str) -> str:
    """``raw`` without one pair of surrounding quotes (``"``, ``'``, backtick or triple)."""
    for quote in ('"""', "'''", '"', "'", "`"):
        if raw.startswith(quote) and raw.endswith(quote) and len(raw) >= 2 * len(quote):
            return raw[len(quote) : -len(quote)]
    return raw


def summary(raw: str | None) -> str | None:
    """The first sentence of a docstring or comment's first paragraph, or None if empty."""
    if not raw:
        return None
    paragraph: list[str] = []
    for line in raw.strip().splitlines():
        line = line.strip()
        if not line:
            if paragraph:
                break
            continue
        if line.startswith("@") and paragraph:
            break
        paragraph.append(line)
    if not paragraph:
        return None
    joined = " ".join(paragraph)
    first = _SENTENCE_END.split(joined, maxsplit=1)[0]
    return squash(first, MAX_SUMMARY) or None


def comment_body(raw: str) -> str:
    """The words of a comment, its markers (``//``, ``#``, ``/* */``, ``///``, ``*``) removed."""
    raw = raw.strip()
    if raw.startswith("/*"):
        raw = raw[2:]
        raw = raw[:-2] if raw.endswith("*/") else raw
        out = []
        for line in raw.splitlines():
            line = line.strip()
            line = line[1:] if line.startswith("*") else line
            out.append(line.lstrip("*!").strip())
        return "\n".join(out)
    out = []
    for line in raw.splitlines():
        line = line.strip()
        for marker in ("//!", "///", "//", "#"):
            if line.startswith(marker):
                line = line[len(marker) :]
                break
        out.append(line.strip())
    return "\n".join(out)


def is_license(body: str) -> bool:
    return bool(_LICENSE.search(body[:400]))


def comments_before(node: Node, kinds: frozenset[str], skip: frozenset[str]) -> str | None:
    """The comment block directly above ``node`` (contiguous lines, nodes in ``skip``
    such as attributes stepped over), as raw text, or None."""
    parts: list[str] = []
    row = node.start_point.row
    sibling = node.prev_sibling
    while sibling is not None:
        if sibling.type in skip:
            row = sibling.start_point.row
            sibling = sibling.prev_sibling
            continue
        if sibling.type not in kinds or sibling.end_point.row < row - 1:
            break
        parts.append(text(sibling))
        row = sibling.start_point.row
        sibling = sibling.prev_sibling
    if not parts:
        return None
    return "\n".join(comment_body(part) for part in reversed(parts))


def leading_comment(
    root: Node, kinds: frozenset[str], skip: frozenset[str], documents: frozenset[str]
) -> str | None:
    """The first non-licence comment block at the top of a file, or None.

    A block glued (no blank line) to a following node whose type is in ``documents`` (a
    function or class declaration) is that declaration's doc comment, not the file's.
    """
    block: list[str] = []
    last_row = -2
    for child in root.children:
        if child.type in skip and not block:
            continue
        if child.type in kinds:
            if block and child.start_point.row > last_row + 1:
                found = _file_comment(block)
                if found:
                    return found
                block = []
            block.append(comment_body(text(child)))
            last_row = child.end_point.row
            continue
        glued = child.start_point.row <= last_row + 1
        if block and not (glued and child.type in documents):
            return _file_comment(block)
        return None
    return _file_comment(block) if block else None


def _file_comment(block: list[str]) -> str | None:
    body = "\n".join(block)
    return None if is_license(body) or not body.strip() else body


def function_fact(
    scope: Scope, source: bytes, *, signature: str, purpose: str | None, exported: bool
) -> FunctionFact:
    """The facts of one function or method: what every language's extractor reports, with
    the language-specific parts (signature, doc comment, visibility) passed in."""
    return {
        "name": scope.name,
        "qualified_name": scope.qualified,
        "kind": scope.kind,
        "lines": lines(scope.node),
        "signature": signature,
        "purpose": summary(purpose),
        "calls": unique(scope.calls),
        "exported": exported,
        "complexity": 1 + scope.branches,
        "hash": short_hash(source[scope.start : scope.end]),
    }

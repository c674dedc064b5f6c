"""The block structure of a Markdown text, the one place markdown-it-py is used.

``scan`` finds what the view parser needs and cannot see line by line: which lines are code,
where the level-2 item headings are, and which blocks would swallow the items below them (a
fence or HTML block that is never closed, or one that contains an item heading). Pure.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from planning_memory.views.fileformat import (
    HEADING_LIKE_RE,
    MARKER_HINT_RE,
    Issue,
    normalize_newlines,
)

_HTML_CLOSERS = (
    (
        re.compile(r"^<(?:script|pre|style|textarea)(?:[\s>]|$)", re.I),
        ("</script>", "</pre>", "</style>", "</textarea>"),
    ),
    (re.compile(r"^<!--"), ("-->",)),
    (re.compile(r"^<\?"), ("?>",)),
    (re.compile(r"^<!\[CDATA\["), ("]]>",)),
    (re.compile(r"^<![A-Za-z]"), (">",)),
)

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token


@functools.cache
def _parser(inline: bool) -> MarkdownIt:
    """The CommonMark parser, built on first use (importing markdown-it costs ~15 ms, which a
    command that only renders never pays): block structure only, unless ``inline``."""
    from markdown_it import MarkdownIt

    full = MarkdownIt("commonmark")
    return full if inline else full.disable(["inline", "text_join"])


def markdown_tokens(
    text: str, env: dict[str, object] | None = None, *, inline: bool = False
) -> list[Token]:
    """CommonMark tokens of ``text``: block structure only, unless ``inline``."""
    return _parser(inline).parse(text, {} if env is None else env)


@dataclass
class Blocks:
    """A text's lines (trailing spaces and tabs stripped) and what ``scan`` found in them;
    line numbers are 0-based."""

    lines: list[str]
    code: set[int] = field(default_factory=set)
    fences: dict[int, tuple[int, bool]] = field(default_factory=dict)  # start -> (end, closed)
    items: list[int] = field(default_factory=list)
    errors: list[Issue] = field(default_factory=list)
    reported: set[int] = field(default_factory=set)  # lines already named in an error


def _fence_closed(token: Token, lines: list[str]) -> bool:
    start, end = token.map or (0, 0)
    if end - start < 2:
        return False
    char, size = token.markup[0], len(token.markup)
    return re.match(rf"^ {{0,3}}{re.escape(char)}{{{size},}}[ \t]*$", lines[end - 1]) is not None


def _html_closed(first: str, last: str) -> bool:
    head = first.lstrip(" ")
    for opener, closers in _HTML_CLOSERS:
        if opener.match(head):
            return any(c in last.lower() for c in closers)
    return True  # kinds 6 and 7 end at a blank line


def _swallowed(doc: Blocks, start: int, end: int, what: str) -> bool:
    """Report an item heading inside lines ``start..end`` of a code or HTML block."""
    for number in range(start + 1, end):
        line = doc.lines[number]
        if HEADING_LIKE_RE.match(line) and MARKER_HINT_RE.search(line):
            doc.errors.append(
                Issue(
                    f"the {what} starting here swallows the item heading at "
                    f"line {number + 1}; is its closing line missing?",
                    start + 1,
                )
            )
            doc.reported.add(number)
            return True
    return False


def _scan_token(doc: Blocks, token: Token) -> None:
    start, end = token.map or (0, 0)
    if token.type in ("fence", "code_block"):
        doc.code.update(range(start, end))
    if token.level != 0:
        return
    if token.type == "fence":
        closed = _fence_closed(token, doc.lines)
        doc.fences[start] = (end, closed)
        if not closed:
            doc.errors.append(
                Issue(
                    "code fence is never closed, so all below it would be "
                    f"code; close it with {token.markup} (or look for a "
                    "missing closing fence above)",
                    start + 1,
                )
            )
        else:
            _swallowed(doc, start, end - 1, "code block")
    elif token.type == "html_block":
        swallowed = _swallowed(doc, start, end, "HTML block")
        if not swallowed and not _html_closed(doc.lines[start], doc.lines[end - 1]):
            doc.errors.append(
                Issue("HTML block is never closed; it would hide the rest of the file", start + 1)
            )
    elif token.type == "heading_open" and token.tag == "h2":
        if token.markup == "##":
            doc.items.append(start)
        else:
            doc.errors.append(
                Issue(
                    "text underlined with --- is a heading here; start items "
                    "with '## Title' or leave a blank line above the ---",
                    end,
                )
            )


def scan(text: str) -> Blocks:
    lines = [line.rstrip(" \t") for line in normalize_newlines(text).split("\n")]
    doc = Blocks(lines)
    for token in markdown_tokens("\n".join(lines)):
        if token.map is not None:
            _scan_token(doc, token)
    skip = doc.code | doc.reported | set(doc.items)
    for number, line in enumerate(lines):
        if "\x00" in line:
            doc.errors.append(Issue("contains a NUL character", number + 1))
        if number not in skip and HEADING_LIKE_RE.match(line):
            doc.errors.append(
                Issue(
                    "looks like an item heading but is not one (inside a list, "
                    "quote or HTML block?); move it to the start of a line",
                    number + 1,
                )
            )
    return doc

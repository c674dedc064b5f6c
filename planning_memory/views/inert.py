"""Make memory text inert before it goes into an agent's instructions (CLAUDE.md, AGENTS.md).

A memory is data, never an instruction channel: it must not import files (``@path``), hide
text (HTML comments, raw HTML, link reference definitions, invisible or bidirectional
characters), break out of the managed block, or open a new section. ``make_inert`` neutralises
all of that with visible changes; ``active_injections`` is the checker the tests use. The
managed block (``replace_managed_block``) is the only part of a repository's own CLAUDE.md or
AGENTS.md that planning-memory ever changes. Pure: no file I/O.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Collection

from planning_memory.errors import InputError

START_MARKER = "<!-- planning-memory:start -->"
END_MARKER = "<!-- planning-memory:end -->"
AT_SIGN = "\uff20"  # FULLWIDTH COMMERCIAL AT: reads as @, imports nothing

# Invisible characters outside category Cf (all of Cf is removed too): combining grapheme
# joiner, Khmer and Mongolian fillers, Hangul fillers, braille blank, variation selectors.
_FILLERS = "\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u2800\u3164\uffa0"
_INVISIBLE_EXTRA = frozenset(
    {*map(ord, _FILLERS), *range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)}
)
_LINE_BREAKS = re.compile("\r\n|\r|\u2028|\u2029|\u0085")
_ASCII_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f]")  # all but tab and newline
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_TAG_START = re.compile(r"(?<!\\)((?:\\\\)*)<(?=[A-Za-z/!?])")
_IMPORT_AT = re.compile(r"(?<![^\W_])@")
_ACTIVE_AT = re.compile(r"(?<![^\W_])@(?=\S)")
_BLOCK_START = re.compile(r"^([ \t]*)(#|=+[ \t]*$|-+[ \t]*$|`{3}|~{3}|\[)", re.MULTILINE)


def is_invisible(char: str) -> bool:
    """Zero-width, bidi, tag, variation-selector and filler characters, and controls other
    than tab and newline."""
    if char in "\t\n":
        return False
    return unicodedata.category(char) in ("Cf", "Cc") or ord(char) in _INVISIBLE_EXTRA


def strip_invisible(text: str) -> str:
    if text.isascii():  # the only invisible ASCII characters are the controls
        return _ASCII_CONTROLS.sub("", text)
    return "".join(c for c in text if not is_invisible(c))


def _remove_comments(text: str) -> str:
    while "<!--" in text:  # removing one comment can join the halves of another opener
        text = _COMMENT.sub("", text)
    return text


def make_inert(text: str) -> str:
    """``text`` with every way of acting on an agent neutralised, visibly and idempotently:

    line breaks normalised; invisible and control characters removed; HTML comments removed
    with their content; any other ``<`` that would open a tag or autolink escaped as ``\\<``;
    every ``@`` that starts a word replaced by ``＠`` (U+FF20); a line that would start a
    heading, setext underline, code fence or link reference definition escaped with ``\\``.
    """
    text = _LINE_BREAKS.sub("\n", text)
    text = strip_invisible(text)
    text = _remove_comments(text)
    text = _TAG_START.sub(r"\1\\<", text)
    text = _IMPORT_AT.sub(AT_SIGN, text)
    return _BLOCK_START.sub(r"\1\\\2", text)


def at_as_written(text: str) -> str:
    """Inert text for an output nothing imports from (the agent prompt, an MCP answer, a
    hook's context): each ``＠`` back to the ``@`` it stands for. Claude Code imports
    ``@path`` from CLAUDE.md only."""
    return text.replace(AT_SIGN, "@")


@functools.lru_cache(maxsize=8192)  # the context packer renders each item many times
def inline(text: str, limit: int) -> str:
    """``make_inert`` text on one line (whitespace runs become one space), cut to ``limit``
    characters with an ellipsis."""
    flat = " ".join(make_inert(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


# --- checker ----------------------------------------------------------------------------


def _marker_problems(lines: list[str]) -> list[str]:
    starts = [i for i, line in enumerate(lines) if line.strip() == START_MARKER]
    ends = [i for i, line in enumerate(lines) if line.strip() == END_MARKER]
    if not starts and not ends:
        return []
    if len(starts) == 1 and len(ends) == 1 and starts[0] < ends[0]:
        return []
    return [f"managed-block markers out of place (start lines {starts}, end lines {ends})"]


def _token_problems(text: str, allowed_headings: Collection[str]) -> list[str]:
    from planning_memory.views.blocks import markdown_tokens  # the checker only: no parser cost

    env: dict[str, object] = {}
    tokens = markdown_tokens(text, env, inline=True)
    refs = env.get("references")
    found = [
        f"link reference definition [{label}] (hidden text)"
        for label in (refs if isinstance(refs, dict) else {})
    ]
    for number, token in enumerate(tokens):
        if token.type == "html_block":
            found.append(f"HTML block: {token.content.strip()[:60]!r}")
        elif token.type in ("fence", "code_block"):
            found.append(f"code block at line {(token.map or [0])[0] + 1}")
        elif token.type == "heading_open":
            title = tokens[number + 1].content.strip()
            if title not in allowed_headings:
                found.append(f"heading {title[:60]!r} not made by planning-memory")
        for child in token.children or []:
            if child.type == "html_inline":
                found.append(f"inline HTML {child.content[:60]!r}")
    return found


def active_injections(text: str, *, allowed_headings: Collection[str] = ()) -> list[str]:
    """Everything in a rendered instructions text that could act on an agent or hide from a
    reviewer: invisible characters, ``@`` imports, HTML (comments included), link reference
    definitions, code blocks, headings not in ``allowed_headings``, and managed-block markers
    other than one well-ordered pair. Empty when the text is inert."""
    found = [
        f"invisible character U+{ord(c):04X}"
        for c in sorted(set(text))
        if is_invisible(c) and c != "\r"
    ]
    found += [f"@ import {text[m.start() : m.start() + 40]!r}" for m in _ACTIVE_AT.finditer(text)]
    lines = text.replace("\r\n", "\n").split("\n")
    found += _marker_problems(lines)
    blanked = "\n".join(
        "" if line.strip() in (START_MARKER, END_MARKER) else line for line in lines
    )
    return found + _token_problems(blanked, allowed_headings)


# --- managed block ----------------------------------------------------------------------

_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")


def _split_lines(text: str) -> list[str]:
    """Lines with their own line endings kept; joining them gives ``text`` back."""
    return [m.group(0) for m in _LINE_RE.finditer(text) if m.group(0)]


def _eol(text: str) -> str:
    match = re.search(r"\r\n|\r|\n", text)
    return match.group(0) if match else "\n"


def _block_span(lines: list[str]) -> tuple[int, int] | None:
    """Indexes of the start and end marker lines, None if there is no block; an InputError
    when the markers are not exactly one well-ordered pair."""
    starts = [i for i, line in enumerate(lines) if line.strip() == START_MARKER]
    ends = [i for i, line in enumerate(lines) if line.strip() == END_MARKER]
    if not starts and not ends:
        return None
    if len(starts) == 1 and len(ends) == 1 and starts[0] < ends[0]:
        return starts[0], ends[0]
    first = min(starts + ends) + 1
    raise InputError(
        "the planning-memory block markers are broken (each must appear once, start before end)",
        line=first,
        hint=f"fix or remove the lines {START_MARKER} / {END_MARKER}",
    )


def extract_managed_block(text: str) -> str | None:
    """The text between the markers (LF line endings), or None when there is no block."""
    lines = _split_lines(text)
    span = _block_span(lines)
    if span is None:
        return None
    inner = "".join(lines[span[0] + 1 : span[1]])
    return inner.replace("\r\n", "\n").replace("\r", "\n")


def replace_managed_block(existing_text: str, block: str) -> str:
    """``existing_text`` with the managed block's content set to ``block``; every byte
    before the start marker line and after the end marker line stays as it was. With no block
    yet, one is appended after a blank line. The block uses the file's line ending."""
    if any(line.strip() in (START_MARKER, END_MARKER) for line in block.splitlines()):
        raise ValueError("the block text must not contain the managed-block markers")
    lines = _split_lines(existing_text)
    span = _block_span(lines)
    eol = _eol(lines[span[0]] if span else existing_text)
    body = block.replace("\r\n", "\n").rstrip("\n")
    inner = "".join(line + eol for line in body.split("\n")) if body else ""
    if span is None:
        gap = _gap(existing_text, eol)
        return existing_text + gap + START_MARKER + eol + inner + END_MARKER + eol
    start, end = span
    end_line = lines[end]
    end_eol = end_line[len(end_line.rstrip("\r\n")) :]
    head, tail = "".join(lines[: start + 1]), "".join(lines[end + 1 :])
    return head + inner + END_MARKER + end_eol + tail


def _gap(text: str, eol: str) -> str:
    if not text or text.endswith(eol + eol):
        return ""
    return eol if text.endswith(("\n", "\r")) else eol + eol

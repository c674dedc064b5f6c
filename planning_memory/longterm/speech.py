"""What in a text is a person speaking: injected turns, code and quotes masked; sentences,
statements and questions found (for the learning triggers).

Masking keeps every offset: what is not speech becomes spaces (or ``x`` for inline code and
quoted words), so a match in the masked text points into the original.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_INJECTED_TEXT = """
system-reminder command-name command-message command-args command-contents local-command-stdout
local-command-stderr local-command-caveat bash-input bash-stdout bash-stderr
user-prompt-submit-hook task-notification
"""
_INJECTED_TAGS = frozenset(_INJECTED_TEXT.split())  # left open, they run to the end
_TAG = re.compile(r"<(?P<name>[a-z][a-z0-9]*(?:-[a-z0-9]+)+)(?:\s[^<>\n]*)?>", re.IGNORECASE)
_CAVEAT = re.compile(
    r"(?i)caveat:\s*the\s+messages\s+below\s+were\s+generated\s+by\s+the\s+user\s+while"
    r"\s+running\s+local\s+commands"
)
_QUOTES = "\"'“«‘"
_QUOTED = re.compile(
    r'"[^"\n]{1,300}"|“[^”\n]{1,300}”|«[^»\n]{1,300}»|‘[^’\n]{1,300}’'
    r"|(?<![\w'])'(?=[^\s'])[^'\n]{0,300}?(?<=[^\s'])'(?!\w)"
)
_DOUBT = re.compile(
    r"(?i)[\s¿¡\"'(]*(?:is\s+(?:that|this|it)|are\s+(?:they|those|these)|still|right|correct"
    r"|true|really|sure|verdad|cierto|seguro|sigue|todav[ií]a|es\s+(?:as[ií]|correcto|cierto))\b"
)
_FENCE = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)", re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_CODE_LINE = re.compile(
    r"^[ \t]*(?://|/\*|#|<!--|\$\s|>>>|def\s|class\s|function\s|const\s|let\s|var\s"
    r"|import\s|from\s+\S+\s+import|return\b|if\s*\(|for\s*\(|while\s*\(|[{}]).*$"
    r"|^.*[;{}][ \t]*$",
    re.MULTILINE,
)
_SENTENCE = re.compile(r"(?:[^.!?\n]|[.!?]+(?=[^\s.!?]))+[.!?]*")


def _blank(match: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", match.group(0))


def mask(text: str) -> str:
    """What is not speech blanked out with the same length, so offsets still point into the
    original: injected turns, fences and code lines become spaces; inline code and quoted
    words become ``x`` (a word that is no trigger, so "use `x` instead of `y`" still reads)."""
    text = _mask_injected(text)
    if "```" in text or "~~~" in text:
        text = _FENCE.sub(_blank, text)
    text = _CODE_LINE.sub(_blank, text)
    if "`" in text:
        text = _INLINE_CODE.sub(lambda m: "x" * len(m.group(0)), text)
    if any(quote in text for quote in _QUOTES):
        text = _QUOTED.sub(
            lambda m: m.group(0)[0] + "x" * (len(m.group(0)) - 2) + m.group(0)[-1], text
        )
    return text


def _mask_injected(text: str) -> str:
    """Blank what an agent injects into a turn: a hyphenated tag through its closing tag (a
    known injected tag left open runs to the end), and the local-command caveat onwards."""
    if "<" not in text and "aveat" not in text:
        return text
    caveat = _CAVEAT.search(text)
    if caveat is not None:
        text = text[: caveat.start()] + _blank(caveat) + " " * (len(text) - caveat.end())
    lower, pos = text.lower(), 0
    pieces: list[str] = []
    unclosed: set[str] = set()
    while (tag := _TAG.search(text, pos)) is not None:
        name = tag.group("name").lower()
        close = -1 if name in unclosed else lower.find(f"</{name}", tag.end())
        if close == -1:
            unclosed.add(name)  # not closed after here, so not after a later one either
        if close != -1:
            end = text.find(">", close) + 1 or len(text)
        else:
            end = len(text) if name in _INJECTED_TAGS else tag.end()
        pieces += [text[pos : tag.start()], re.sub(r"[^\n]", " ", text[tag.start() : end])]
        pos = end
    return "".join([*pieces, text[pos:]])


def sentences(text: str) -> Iterator[tuple[int, int]]:
    for match in _SENTENCE.finditer(text):
        if match.group(0).strip():
            yield match.start(), match.end()


def statements(text: str) -> Iterator[tuple[int, int]]:
    """The sentences that are neither a question nor doubted by the question that follows
    ("Always use yarn. Still true?")."""
    spans = list(sentences(text))
    for index, (start, end) in enumerate(spans):
        if is_question(text, start, end):
            continue
        after = spans[index + 1] if index + 1 < len(spans) else None
        if after and is_question(text, *after) and _DOUBT.match(text, after[0], after[1]):
            continue
        yield start, end


def is_question(text: str, start: int, end: int) -> bool:
    sentence = text[start:end].strip()
    return sentence.endswith("?") or sentence.startswith("¿")

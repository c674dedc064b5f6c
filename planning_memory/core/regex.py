"""Regexes compiled on first use, and the literal text a regex's matches start with (pure).

A command that redacts one short text should not pay to compile every secret shape: most texts
hold none of the shapes' leading literals, so most shapes never run. ``Lazy`` compiles its
pattern the first time it is searched; ``literal_prefix`` reads the leading literal from the
pattern's text, without compiling or parsing it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

_META = frozenset("[](){}|?*+^$.\\")
_QUANTIFIERS = ("?", "*", "{")
_ESCAPED = frozenset(".-/:_@#%&=~'\" ")


class Lazy:
    """``re.compile(pattern, flags)``, done the first time one of its methods runs."""

    __slots__ = ("_compiled", "flags", "pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern, self.flags = pattern, flags
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled

    def search(self, text: str, *span: int) -> re.Match[str] | None:
        return self.compiled().search(text, *span)

    def match(self, text: str, *span: int) -> re.Match[str] | None:
        return self.compiled().match(text, *span)

    def finditer(self, text: str, *span: int) -> Iterator[re.Match[str]]:
        return self.compiled().finditer(text, *span)

    def findall(self, text: str, *span: int) -> list[Any]:
        return self.compiled().findall(text, *span)

    def __repr__(self) -> str:
        return f"Lazy({self.pattern!r}, {self.flags})"


def literal_prefix(pattern: str, flags: int = 0, *, lowered: bool = False) -> str:
    """The text every match of ``pattern`` starts with ("" when it has none or it cannot be
    told from the text), lower-cased for a pattern run on lower-cased text (``lowered``). A
    caseless pattern has none, unless it runs on lower-cased text. It may be shorter than the
    longest such text (it stops at the first construct that is not a plain or escaped
    character), never longer."""
    caseless = bool(flags & re.IGNORECASE) or pattern.startswith("(?i)")
    body = pattern.removeprefix("(?i)")
    if (caseless and not lowered) or flags & re.VERBOSE or _branches(body):
        return ""
    found: list[str] = []
    i = 0
    while i < len(body):
        char, step = body[i], 1
        if char == "\\":
            if body[i + 1 : i + 2] not in _ESCAPED:
                break
            char, step = body[i + 1], 2
        elif char in _META:
            break
        after = body[i + step : i + step + 1]
        if after in _QUANTIFIERS:
            break  # this character may be absent or repeated
        found.append(char)
        if after == "+":
            break
        i += step
    text = "".join(found)
    return text.lower() if lowered else text


def _branches(pattern: str) -> bool:
    """Whether ``pattern`` is an alternation at its top level (``a|b``: no common start)."""
    depth, in_class, escaped = 0, False, False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            return True
    return False

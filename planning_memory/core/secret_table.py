"""Finds the provider secret shapes of ``secret_rules`` in a text (pure: no I/O).

One regex pass over the lower-cased text finds every rule keyword that starts a word (or, for a
keyword that starts with a punctuation mark, anywhere); only the rules of the keywords found
run, each only on the lines around its keyword. The first texts of a process (up to
``WORD_BUDGET`` characters in all: a command's few memories or messages) are looked up word
by word instead, with the same result, so the keyword regex (~5 ms to build and compile) is
built only by a process that scans more (an index build, a code scan), where it is faster.
Nothing compiles at import: each rule's regex compiles the first
time one of its keywords (or for a rule without keywords, its leading literal) turns up, so a
process that never meets a provider's keyword never compiles that provider's rule.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache, cached_property

from planning_memory.core.regex import Lazy, literal_prefix
from planning_memory.core.secret_rules import ALLOW, EXTRA, GITLEAKS, Rule

RULES: tuple[Rule, ...] = EXTRA + GITLEAKS
KINDS: tuple[str, ...] = tuple(dict.fromkeys(rule.kind for rule in RULES))
_WINDOW_BEFORE = 256  # characters of a long line searched before a keyword
_WINDOW_AFTER = 2048  # and after it
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/=")
WORD_BUDGET = 65_536  # characters looked up word by word before the keyword regex is built
_WORD_START = Lazy(r"(?<![a-z0-9])[a-z0-9]")


@dataclass(frozen=True, slots=True)
class Span:
    kind: str
    start: int
    end: int


class _Table:
    """The keyword regex and, per keyword, the rules to try (compiled on demand)."""

    def __init__(self) -> None:
        keyed: dict[str, list[int]] = {}
        self.unkeyed = [i for i, r in enumerate(RULES) if not r.keywords and not r.anchor]
        self.anchored = [i for i, r in enumerate(RULES) if not r.keywords and r.anchor]
        self.anchors: dict[int, re.Pattern[str]] = {}
        for i, rule in enumerate(RULES):
            for word in rule.keywords:
                keyed.setdefault(word.lower(), []).append(i)
        # A keyword found also runs the rules of the keywords it starts with ("sk-" runs "sk").
        self.rules = {
            word: sorted({i for n in range(len(word)) for i in keyed.get(word[: n + 1], ())})
            for word in keyed
        }
        words = sorted(keyed)
        # A keyword that starts with a letter or digit must start a word; one that starts with
        # a punctuation mark (``_mmk``, ``:aa``) is looked for anywhere, by a substring search.
        self.words = [w for w in words if w[0].isalnum()]
        self.by_start: dict[str, list[str]] = {}  # first 2 characters -> keywords, longest first
        for word in sorted(self.words, key=len, reverse=True):
            self.by_start.setdefault(word[:2], []).append(word)
        self.inner = tuple(w for w in words if not w[0].isalnum())
        self.prefixes = {i: literal_prefix(RULES[i].pattern) for i in self.unkeyed}
        self.compiled: dict[int, re.Pattern[str]] = {}
        self.word_budget = WORD_BUDGET  # what is left of it (``_keywords``)
        self.allow = Lazy("|".join(f"(?:{rx})" for rx in ALLOW))

    @cached_property
    def keywords(self) -> re.Pattern[str]:
        """Every keyword that starts a word (the character before it is not a letter or a
        digit), the longest one at each place, found in one pass over a long text. The
        lookahead on the keywords' first characters lets a place fail before the trie is tried
        (a fifth of the regex's time on source code)."""
        firsts = re.escape("".join(sorted({word[0] for word in self.words})))
        return re.compile(f"[^a-z0-9](?=[{firsts}])({_trie(self.words)})")

    def anchor(self, index: int) -> re.Pattern[str]:
        rx = self.anchors.get(index)
        if rx is None:
            rx = self.anchors[index] = re.compile(RULES[index].anchor)
        return rx

    def regex(self, index: int) -> re.Pattern[str]:
        rx = self.compiled.get(index)
        if rx is None:
            rx = self.compiled[index] = re.compile(RULES[index].pattern, re.MULTILINE)
        return rx


@cache
def _table() -> _Table:
    return _Table()


def _trie(words: list[str]) -> str:
    """One regex alternation for ``words``, shared prefixes factored out (much faster to run
    than a flat alternation of 250 words)."""
    root: dict[str, dict] = {}  # type: ignore[type-arg]
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}
    return _emit(root)


def _emit(node: dict[str, dict]) -> str:  # type: ignore[type-arg]
    alts = [re.escape(ch) + _emit(sub) for ch, sub in sorted(node.items()) if ch]
    if not alts:
        return ""
    body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
    if "" in node:
        return f"(?:{body})?" if len(alts) == 1 else body + "?"
    return body


def entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character."""
    if not value:
        return 0.0
    size = len(value)
    return math.log2(size) - sum(n * math.log2(n) for n in Counter(value).values()) / size


def find(text: str, lowered: str) -> list[Span]:
    """The spans of every rule's secret in ``text`` (``lowered``: its same-length lower case)."""
    table = _table()
    found: list[Span] = []
    tried: set[tuple[int, int]] = set()
    for pos, word in _keywords(table, lowered):
        line = _window(text, pos, (0, 0))
        for index in table.rules[word]:
            rule = RULES[index]
            window = _window(text, pos, rule.window) if rule.window != (0, 0) else line
            if (index, window[0]) in tried or (rule.context and not _on_line(rule, lowered, pos)):
                continue
            tried.add((index, window[0]))
            found += _matches(table, index, text, *window)
    for index in table.unkeyed:  # each starts with a literal: a fast scan of the whole text
        if table.prefixes[index] not in text:
            continue
        found += (s for s in _matches(table, index, text, 0, len(text)) if _word_start(text, s))
    for index in table.anchored:
        for hit in table.anchor(index).finditer(text):
            window = _window(text, hit.start(), (0, 0))
            if (index, window[0]) not in tried:
                tried.add((index, window[0]))
                found += (s for s in _matches(table, index, text, *window) if _word_start(text, s))
    return found


def _on_line(rule: Rule, lowered: str, pos: int) -> bool:
    start = lowered.rfind("\n", 0, pos) + 1
    end = lowered.find("\n", pos)
    return lowered.find(rule.context, start, len(lowered) if end < 0 else end) >= 0


def _keywords(table: _Table, lowered: str) -> Iterator[tuple[int, str]]:
    if "keywords" not in table.__dict__ and len(lowered) <= table.word_budget:
        table.word_budget -= len(lowered)
        yield from _keywords_by_word(table, lowered)
    else:
        for hit in table.keywords.finditer(" " + lowered):
            yield hit.start(1) - 1, hit.group(1)
    for word in table.inner:
        pos = lowered.find(word)
        while pos >= 0:
            yield pos, word
            pos = lowered.find(word, pos + 1)


def _keywords_by_word(table: _Table, lowered: str) -> Iterator[tuple[int, str]]:
    """What ``table.keywords`` finds, a word at a time: at each word start the longest keyword
    the text starts with there, none starting inside the last one found (or right after it:
    the keyword regex's match takes the character before the keyword too)."""
    by_start, after = table.by_start, -1
    for hit in _WORD_START.finditer(lowered):
        pos = hit.start()
        if pos <= after:
            continue
        for word in by_start.get(lowered[pos : pos + 2], ()):
            if lowered.startswith(word, pos):
                yield pos, word
                after = pos + len(word)
                break


def _word_start(text: str, span: Span) -> bool:
    return span.start == 0 or not (text[span.start - 1].isalnum() or text[span.start - 1] == "_")


def _window(text: str, pos: int, lines: tuple[int, int]) -> tuple[int, int]:
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    end = len(text) if end < 0 else end
    before, after = lines
    if not before and not after:
        return max(start, pos - _WINDOW_BEFORE), min(end, pos + _WINDOW_AFTER)
    for _ in range(before):
        start = text.rfind("\n", 0, max(start - 1, 0)) + 1
    for _ in range(after):
        nxt = text.find("\n", end + 1)
        end = len(text) if nxt < 0 else nxt
    return start, end


def _matches(table: _Table, index: int, text: str, start: int, end: int) -> Iterator[Span]:
    rule = RULES[index]
    for match in table.regex(index).finditer(text, start, end):
        span = _secret_span(match, rule.group)
        if span is None:
            continue
        secret = text[span[0] : span[1]]
        if _cleared(table, rule, secret):
            continue
        yield Span(rule.kind, span[0], _extend(text, span[1]))


def _secret_span(match: re.Match[str], group: int) -> tuple[int, int] | None:
    if group >= 0:
        return match.span(group) if match.group(group) else None
    for i in range(1, (match.re.groups or 0) + 1):
        if match.group(i):
            return match.span(i)
    return match.span() if match.end() > match.start() else None


def _cleared(table: _Table, rule: Rule, secret: str) -> bool:
    """A stand-in rather than a secret: too regular, a template, or a documented example."""
    if rule.entropy and entropy(secret) < rule.entropy:
        return True
    if table.allow.match(secret):  # every pattern starts with ^
        return True
    return any(re.search(rx, secret) for rx in rule.allow)


def _extend(text: str, end: int) -> int:
    """A token cut short by a fixed-length regex is covered to its last character."""
    size = len(text)
    while end < size and text[end] in _TOKEN_CHARS:
        end += 1
    return end

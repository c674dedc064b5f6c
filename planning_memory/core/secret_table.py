"""Finds the provider secret shapes of ``secret_rules`` in a text (pure: no I/O).

One pass of an Aho-Corasick automaton (``ahocorasick_rs``, imported here only, built on first
use in well under a millisecond) over the lower-cased text finds every occurrence of every
literal looked for: the rule keywords, which count where they start a word (or, for a keyword
that starts with a punctuation mark, anywhere), the leading literals of the rules without
keywords, the words a rule needs on its keyword's line (``context``), and the literals a
caller adds (``privacy``'s shape prefixes), so that one pass answers every "does the text
hold X" question of the secret check. Only the rules of the keywords found run, each only on
the lines around its keyword. Nothing compiles at import: each rule's regex compiles the
first time one of its keywords (or for a rule without keywords, its leading literal) turns
up, so a process that never meets a provider's keyword never compiles that provider's rule.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

from planning_memory.core.regex import Lazy, literal_prefix
from planning_memory.core.secret_rules import ALLOW, EXTRA, GITLEAKS, Rule

RULES: tuple[Rule, ...] = EXTRA + GITLEAKS
KINDS: tuple[str, ...] = tuple(dict.fromkeys(rule.kind for rule in RULES))
_WINDOW_BEFORE = 256  # characters of a long line searched before a keyword
_WINDOW_AFTER = 2048  # and after it
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/=")
_SURROGATE = re.compile("[\ud800-\udfff]")
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")  # a keyword must not follow one


@dataclass(frozen=True, slots=True)
class Span:
    kind: str
    start: int
    end: int


class Literals(NamedTuple):
    """What one pass over a lower-cased text found: the rule keywords, in the order ``find``
    tries their rules, and every literal looked for that occurs anywhere (``present``)."""

    keywords: Sequence[tuple[int, str]]
    present: AbstractSet[str]


_NOTHING = Literals((), frozenset())


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
        self.inner = tuple(w for w in words if not w[0].isalnum())
        self.prefixes = {i: literal_prefix(RULES[i].pattern) for i in self.unkeyed}
        self.compiled: dict[int, re.Pattern[str]] = {}
        self.allow = Lazy("|".join(f"(?:{rx})" for rx in ALLOW))

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


class _Matcher:
    """One automaton over the table's literals and a caller's (``also``), with what each
    pattern is: a keyword that must start a word, or one found anywhere."""

    def __init__(self, table: _Table, also: tuple[str, ...]) -> None:
        import ahocorasick_rs  # on first use: a command that stores no text never needs it

        unkeyed = (p.lower() for p in table.prefixes.values() if len(p) > 1)
        contexts = (rule.context for rule in RULES if len(rule.context) > 1)
        self.patterns = sorted({*table.words, *table.inner, *unkeyed, *contexts, *also})
        words, inner = set(table.words), set(table.inner)
        self.word = [p in words for p in self.patterns]
        self.inner = [p in inner for p in self.patterns]
        self.automaton = ahocorasick_rs.AhoCorasick(self.patterns)


@cache
def _matcher(also: tuple[str, ...]) -> _Matcher:
    return _Matcher(_table(), tuple(a for a in also if len(a) > 1))


def literals(lowered: str, also: tuple[str, ...] = ()) -> Literals:
    """The keywords and literals in ``lowered`` (a text's same-length lower case), with
    ``also`` (lower-case literals) looked for in the same pass."""
    matcher = _matcher(also)
    try:
        hits = matcher.automaton.find_matches_as_indexes(lowered, overlapping=True)
    except UnicodeEncodeError:  # a lone surrogate (an undecodable argument or file name): the
        # automaton takes UTF-8 only; no literal holds one, and U+FFFD keeps every position
        searched = _SURROGATE.sub("\ufffd", lowered)
        hits = matcher.automaton.find_matches_as_indexes(searched, overlapping=True)
    if not hits:  # most short texts: nothing more to work out
        return _NOTHING
    patterns = matcher.patterns
    present = {patterns[i] for i, _start, _end in hits}
    return Literals(_keywords(matcher, lowered, hits), present)


def _keywords(
    matcher: _Matcher, lowered: str, hits: list[tuple[int, int, int]]
) -> list[tuple[int, str]]:
    """The keywords that start a word (the character before is not a letter or a digit): the
    longest one at each place, none starting inside the last one taken or right after it;
    then each keyword that starts with a punctuation mark, at every place it occurs."""
    patterns, word = matcher.patterns, matcher.word
    longest: dict[int, str] = {}
    for i, start, _end in hits:
        starts_word = start == 0 or lowered[start - 1] not in _WORD_CHARS
        if word[i] and starts_word and len(patterns[i]) > len(longest.get(start, "")):
            longest[start] = patterns[i]
    found: list[tuple[int, str]] = []
    after = -1
    for pos in sorted(longest):
        if pos > after:
            found.append((pos, longest[pos]))
            after = pos + len(longest[pos])
    inner = sorted([(patterns[i], start) for i, start, _end in hits if matcher.inner[i]])
    found += [(pos, keyword) for keyword, pos in inner]
    return found


def entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character."""
    if not value:
        return 0.0
    size = len(value)
    return math.log2(size) - sum(n * math.log2(n) for n in Counter(value).values()) / size


def find(text: str, lowered: str, seen: Literals | None = None) -> list[Span]:
    """The spans of every rule's secret in ``text`` (``lowered``: its same-length lower case;
    ``seen``: what ``literals`` found in it, when the caller has it)."""
    table = _table()
    seen = literals(lowered) if seen is None else seen
    found: list[Span] = []
    tried: set[tuple[int, int]] = set()
    for pos, word in seen.keywords:
        line = None
        for index in table.rules[word]:
            rule = RULES[index]
            if len(rule.context) > 1 and rule.context not in seen.present:
                continue  # on no line of the text, so not on the keyword's
            line = _window(text, pos, (0, 0)) if line is None else line
            window = _window(text, pos, rule.window) if rule.window != (0, 0) else line
            if (index, window[0]) in tried or (rule.context and not _on_line(rule, lowered, pos)):
                continue
            tried.add((index, window[0]))
            found += _matches(table, index, text, *window)
    for index in table.unkeyed:  # each starts with a literal: looked for in the same pass
        if not occurs(table.prefixes[index], text, seen.present):
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


def occurs(literal: str, text: str, present: AbstractSet[str]) -> bool:
    """Whether ``literal`` is in ``text``, told by ``present`` (what ``literals`` found in its
    lower case) without a scan when it is not there: a literal of two characters or more is
    in the lower case wherever it is in the text. A shorter one is a plain substring test."""
    if len(literal) < 2:
        return literal in text
    return literal.lower() in present and literal in text


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

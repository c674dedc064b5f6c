"""One relevance for every candidate of a query: BM25 over all its words, plus proximity.

The index's candidate steps (all words, the rarer words, words in titles) each rank with
FTS5's ``bm25()`` over the words of that step only, so their values cannot be compared. Here
every candidate is scored again over *all* the query's words the way FTS5 computes BM25 (same
k1, b, column weights, idf formula and document length), counting the words in the
document's text with the index's own tokenizer and stemmer (``stemming``): a document holding
every word gets FTS5's value (exactly, when the word counts are exact). To that a proximity
term is added: two different query words close together (at most ``PROXIMITY_WINDOW`` tokens
apart, in the title or the body) add ``PROXIMITY_WEIGHT * min(idf) / distance`` once per pair
of words, so "terminal output" written as a phrase ranks above a text that holds both words
far apart. No sqlite3 here: pure functions of the documents and the index totals.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from planning_memory.search.database import BM25_WEIGHTS, Totals
from planning_memory.search.rows import Row
from planning_memory.search.stemming import fold, stem, tokens

K1 = 1.2  # FTS5's bm25() constants
B = 0.75
PROXIMITY_WINDOW = 4  # tokens: words further apart than this are not "together"
PROXIMITY_WEIGHT = 0.75  # docs/search.md: how it was chosen
_WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)
_NEXT_RE = re.compile(r"[\W_]+([^\W_]+)", re.UNICODE)

Match = tuple[int, int, int]  # start, end (in the folded text), which query word


def idf(documents: int, count: int) -> float:
    """FTS5's idf: ``ln((N - n + 0.5) / (n + 0.5))``, at least 1e-6."""
    value = math.log((documents - count + 0.5) / (count + 0.5)) if documents else 0.0
    return value if value > 0 else 1e-6


@dataclass(frozen=True)
class Scorer:
    """Scores the documents of one index for the words of one query."""

    words: dict[tuple[str, ...], int]  # a word's stems (a phrase has several) -> its idf's place
    idfs: tuple[float, ...]
    mean_length: float
    heads: tuple[str, ...]  # how a token that may stem to a query word starts

    @classmethod
    def build(cls, counts: Mapping[str, int], totals: Totals) -> Scorer:
        """``counts``: how many documents hold each query word. A word found nowhere adds
        nothing and is left out; a word the tokenizer splits (``no_color``) is a phrase, as
        it is in the index's query."""
        by_stems: dict[tuple[str, ...], int] = {}
        for word, count in counts.items():
            stems = tuple(stem(t) for t in tokens(word))
            if count > 0 and stems:
                by_stems.setdefault(stems, count)
        # a token whose stem is ``s`` starts with ``s`` less its last two letters (Porter
        # rewrites at most the end: ``key`` -> ``kei``); ``tests/search/test_scoring.py``
        starts = sorted({k[0][: max(2, len(k[0]) - 2)] for k in by_stems})
        heads = tuple(h for n, h in enumerate(starts) if not any(map(h.startswith, starts[:n])))
        idfs = tuple(idf(totals.documents, n) for n in by_stems.values())
        words = {k: i for i, k in enumerate(by_stems)}
        return cls(words, idfs, totals.mean_length or 1.0, heads)

    def relevance(self, row: Row) -> float:
        """BM25 of ``row`` over every query word plus the proximity term (0 when it holds
        none of them)."""
        d = row.doc
        fields = (d.title, d.body, " ".join(d.tags), d.path, row.terms)
        freq = [0.0] * len(self.idfs)
        near: dict[tuple[int, int], int] = {}
        for column, (text, weight) in enumerate(zip(fields, BM25_WEIGHTS, strict=True)):
            if not text:
                continue
            folded = fold(text)
            found = self.find(folded)
            for _start, _end, i in found:
                freq[i] += weight
            if column < 2:  # title, body
                _closest(folded, found, near)
        length = row.length or sum(len(_WORD_RE.findall(text)) for text in fields)
        norm = K1 * (1 - B + B * length / self.mean_length)
        score = sum(w * f * (K1 + 1) / (f + norm) for w, f in zip(self.idfs, freq, strict=True))
        for (a, b), distance in near.items():
            score += PROXIMITY_WEIGHT * min(self.idfs[a], self.idfs[b]) / distance
        return score

    def find(self, folded: str) -> list[Match]:
        """Each query word in ``folded`` (a ``stemming.fold``-ed text), in order."""
        out = []
        for head in self.heads:
            at = folded.find(head)
            while at >= 0:
                if at == 0 or not folded[at - 1].isalnum():
                    found = self._word_at(folded, at)
                    if found:
                        out.append(found)
                at = folded.find(head, at + len(head))
        if len(self.heads) > 1:
            out.sort()
        return out

    def _word_at(self, folded: str, at: int) -> Match | None:
        """The query word (or phrase) whose first token starts at ``at``, if any."""
        token = _WORD_RE.match(folded, at)
        if token is None:
            return None
        first, end = stem(token.group()), token.end()
        found = None
        for key, i in self.words.items():
            if key[0] != first:
                continue
            if len(key) == 1:
                found = (at, end, i)
            elif stop := _phrase_end(folded, end, key[1:]):
                return (at, stop, i)
        return found


def _phrase_end(folded: str, end: int, rest: Sequence[str]) -> int:
    """Where the tokens after ``end`` end when their stems are ``rest``; 0 when they are not."""
    for want in rest:
        token = _NEXT_RE.match(folded, end)
        if token is None or stem(token.group(1)) != want:
            return 0
        end = token.end()
    return end


def _closest(folded: str, found: Sequence[Match], near: dict[tuple[int, int], int]) -> None:
    """For each pair of different query words next to each other in ``folded``, the fewest
    tokens apart they are (1: adjacent), kept in ``near`` when within ``PROXIMITY_WINDOW``."""
    for (_s, end, a), (start, _e, b) in itertools.pairwise(found):
        if a == b or start - end > 12 * PROXIMITY_WINDOW:
            continue
        distance = 1 + len(_WORD_RE.findall(folded, end, start))
        key = (min(a, b), max(a, b))
        if distance <= min(PROXIMITY_WINDOW, near.get(key, PROXIMITY_WINDOW + 1) - 1):
            near[key] = distance

"""Near-duplicate texts: what a message says once said many times ("run the tests again").

Two texts are near duplicates when the words they are made of (case, punctuation, order and a
closing counter such as "(12)" aside) are nearly the same set; a number is a word, so a
changed setting ("limit 7", "limit 9") is news. Pure: values in, values out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

NEAR = 0.8  # share of the two texts' words (Jaccard) from which they say the same
_WORD = re.compile(r"[^\W_]+")
_COUNTER = re.compile(r"\s*(?:\(\s*#?\d+\s*\)|#\d+)\W*$")
GIST_CHARS = 2000  # characters of a text compared
CONTAINED_WORDS = 4  # a text this long or longer, nearly all inside another, is said there


def words(text: str) -> frozenset[str]:
    """The words of ``text`` (case folded), without a closing counter."""
    return frozenset(_WORD.findall(_COUNTER.sub("", text[:GIST_CHARS]).casefold()))


def near(a: frozenset[str], b: frozenset[str], *, within: bool = False) -> bool:
    """Whether two texts' ``words`` say the same: nearly the same set of words, or with
    ``within``, the shorter one's words (``CONTAINED_WORDS`` or more) nearly all in the
    other (a fact and the line that repeats it with a label)."""
    if not a or not b:
        return a == b
    shared = len(a & b)
    if within and min(len(a), len(b)) >= CONTAINED_WORDS:
        return shared / min(len(a), len(b)) >= NEAR
    return shared / len(a | b) >= NEAR


def said_before(text: str, earlier: Iterable[frozenset[str]], *, within: bool = False) -> bool:
    """Whether ``text`` is a near duplicate of one of ``earlier`` (``words`` of texts)."""
    mine = words(text)
    return any(near(mine, other, within=within) for other in earlier)


def collapse(texts: Sequence[str]) -> list[tuple[int, int]]:
    """The texts that say something new, in order: ``(index, times)`` for the first of each
    group of near duplicates and how many texts it stands for."""
    kept: list[tuple[frozenset[str], int]] = []
    counts: list[int] = []
    for index, text in enumerate(texts):
        mine = words(text)
        group = next((g for g, (other, _) in enumerate(kept) if near(mine, other)), None)
        if group is None:
            kept.append((mine, index))
            counts.append(1)
        else:
            counts[group] += 1
    return [(index, counts[g]) for g, (_, index) in enumerate(kept)]

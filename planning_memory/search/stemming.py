"""Words as the index sees them: unicode61 tokens and their Porter stems. Pure, no sqlite3.

The index tokenizes with FTS5's ``porter unicode61 remove_diacritics 2``: a token is a run of
letters and digits (everything else, ``_`` included, separates), lower-cased, accents removed,
then reduced by the Porter (1980) stemmer when it is 3 to 64 bytes long. ``stem`` and
``tokens`` do the same in Python, so ranking can count a query word in a document's text
as FTS5 counts it (``tests/search/test_stemming.py`` compares both on every word of two real
packages; exotic Unicode may still differ).
"""

from __future__ import annotations

import functools
import re
import unicodedata

_TOKEN_RE = re.compile(r"[^\W_]+", re.UNICODE)
_MARKS_RE = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
_VOWELS = frozenset("aeiou")

_STEP2 = (
    ("ational", "ate"),
    ("tional", "tion"),
    ("enci", "ence"),
    ("anci", "ance"),
    ("izer", "ize"),
    ("bli", "ble"),
    ("alli", "al"),
    ("entli", "ent"),
    ("eli", "e"),
    ("ousli", "ous"),
    ("ization", "ize"),
    ("ation", "ate"),
    ("ator", "ate"),
    ("alism", "al"),
    ("iveness", "ive"),
    ("fulness", "ful"),
    ("ousness", "ous"),
    ("aliti", "al"),
    ("iviti", "ive"),
    ("biliti", "ble"),
    ("logi", "log"),
)
_STEP3 = (
    ("icate", "ic"),
    ("ative", ""),
    ("alize", "al"),
    ("iciti", "ic"),
    ("ical", "ic"),
    ("ful", ""),
    ("ness", ""),
)
_STEP4 = (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion",
    "ou", "ism", "ate", "iti", "ous", "ive", "ize",
)  # fmt: skip


def tokens(text: str) -> list[str]:
    """The unicode61 tokens of ``text``: lower-case, without diacritics, not stemmed."""
    return _TOKEN_RE.findall(fold(text))


def fold(text: str) -> str:
    """``text`` lower-cased with its accents removed (``remove_diacritics 2``)."""
    if text.isascii():
        return text.lower()
    return _MARKS_RE.sub("", unicodedata.normalize("NFKD", text)).lower()


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Porter stem of a lower-case token (one under 3 or over 64 bytes is kept whole, as
    FTS5 keeps it; a digit or a non-ASCII letter counts as a consonant)."""
    if not 3 <= len(word.encode()) <= 64:
        return word
    w = _step1a(word)
    w = _step1b(w)
    if w.endswith("y") and _has_vowel(w[:-1]):
        w = w[:-1] + "i"
    w = _replace(w, _STEP2, 0)
    w = _replace(w, _STEP3, 0)
    w = _step4(w)
    if w.endswith("e"):
        base = w[:-1]
        if _measure(base) > 1 or (_measure(base) == 1 and not _cvc(base)):
            w = base
    if w.endswith("ll") and _measure(w) > 1:
        w = w[:-1]
    return w


def _cons(w: str, i: int) -> bool:
    if w[i] in _VOWELS:
        return False
    if w[i] == "y":
        return i == 0 or not _cons(w, i - 1)
    return True


def _measure(w: str) -> int:
    """Porter's m: the number of vowel-consonant sequences in ``w``."""
    m, prev_vowel = 0, False
    for i in range(len(w)):
        vowel = not _cons(w, i)
        if prev_vowel and not vowel:
            m += 1
        prev_vowel = vowel
    return m


def _has_vowel(w: str) -> bool:
    return any(not _cons(w, i) for i in range(len(w)))


def _double(w: str) -> bool:
    return len(w) >= 2 and w[-1] == w[-2] and _cons(w, len(w) - 1)


def _cvc(w: str) -> bool:
    return (
        len(w) >= 3
        and _cons(w, len(w) - 3)
        and not _cons(w, len(w) - 2)
        and _cons(w, len(w) - 1)
        and w[-1] not in "wxy"
    )


def _step1a(w: str) -> str:
    if w.endswith("sses") or w.endswith("ies"):
        return w[:-2]
    if w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w


def _step1b(w: str) -> str:
    if w.endswith("eed"):
        return w[:-1] if _measure(w[:-3]) > 0 else w
    for suffix in ("ed", "ing"):
        if w.endswith(suffix) and _has_vowel(w[: -len(suffix)]):
            w = w[: -len(suffix)]
            if w.endswith(("at", "bl", "iz")):
                return w + "e"
            if _double(w) and w[-1] not in "lsz":
                return w[:-1]
            if _measure(w) == 1 and _cvc(w):
                return w + "e"
            return w
    return w


def _replace(w: str, rules: tuple[tuple[str, str], ...], min_m: int) -> str:
    for suffix, new in rules:
        if w.endswith(suffix):
            base = w[: -len(suffix)]
            return base + new if _measure(base) > min_m else w
    return w


def _step4(w: str) -> str:
    for suffix in _STEP4:
        if w.endswith(suffix):
            base = w[: -len(suffix)]
            if _measure(base) > 1 and (suffix != "ion" or base.endswith(("s", "t"))):
                return base
            return w
    return w

"""The live patterns (or mistakes) of a catalog kept in memory as bitmaps, for ``similar``.

Each record has a slot, a bit position. Per word of the records, the slots holding it (a set,
and a bitmap once ``COMMON`` records hold it); per bit of ``similarity.gram_mask``, a bitmap
of the slots whose mask has it. A lookup adds, slot by slot in parallel (bit-sliced counters
over Python integers), how many of the new text's words each record shares and the bound on
the trigrams it shares (``similarity.may_reach``'s mask part); then, for each number of shared
words, keeps the slots whose shared trigrams can still reach the threshold, however many words
and trigrams they have. Only those few are tried one by one, with ``may_reach`` itself; the
others fail its test (proved in ``reaching``), so the answer is the same as trying them all.
"""

from __future__ import annotations

import math
from collections import Counter

from planning_memory.longterm import similarity

COMMON = 64  # a word held by this many records keeps a bitmap of them
BUCKET_RATIO = 1.15  # records are grouped by their count of trigrams, in steps of this ratio
_BITS_OF_BYTE = [tuple(k for k in range(8) if byte >> k & 1) for byte in range(256)]

Row = tuple[int, str | None, int, int, int, int, frozenset[str]]
"""rid, scope, words, code words and trigrams counted, gram mask, words."""


class Live:
    """The live records of one type: slots, word postings and gram-bit bitmaps."""

    direct_below = 1500  # fewer posting entries to visit than this: each record is tried

    def __init__(self) -> None:
        self.rows: dict[int, Row] = {}  # slot -> row
        self.slot_of: dict[int, int] = {}  # rid -> slot
        self.free: list[int] = []
        self.postings: dict[str, set[int]] = {}  # word -> slots
        self.word_bits: dict[str, int] = {}  # word -> bitmap of its slots (common words)
        self.gram_bits: list[int] = [0] * similarity.MASK_BITS
        self.present = 0  # bitmap of the slots in use
        # slots grouped by trigram count (``_bucket``), each group with the fewest words and
        # trigrams a record of it ever had (lower bounds: never raised when one leaves)
        self.buckets: dict[int, int] = {}
        self.least: dict[int, tuple[int, int]] = {}

    # -- keeping it -------------------------------------------------------------------------
    def build(self, rows: list[tuple[int, str | None, int, int, int, bytes, str]]) -> None:
        """Fill an empty set with ``(rid, scope, nwords, ncode, ngrams, mask, words)`` rows
        (bitmaps made from byte arrays: setting bits of a growing integer one by one costs
        the square of the store)."""
        size = len(rows) // 8 + 1
        grams = [bytearray(size) for _ in range(similarity.MASK_BITS)]
        for slot, (rid, scope, nwords, ncode, ngrams, mask, words) in enumerate(rows):
            split = frozenset(words.split())
            self.rows[slot] = (rid, scope, nwords, ncode, ngrams, _int(mask), split)
            self.slot_of[rid] = slot
            for word in split:
                self.postings.setdefault(word, set()).add(slot)
            index, bit = slot >> 3, 1 << (slot & 7)
            for at, byte in enumerate(mask):
                if byte:
                    for k in _BITS_OF_BYTE[byte]:
                        grams[at * 8 + k][index] |= bit
        self.gram_bits = [int.from_bytes(bits, "little") for bits in grams]
        self.present = (1 << len(rows)) - 1
        members: dict[int, set[int]] = {}
        for slot, (_rid, _scope, nwords, _ncode, ngrams, _mask, _words) in self.rows.items():
            members.setdefault(self._note_bucket(nwords, ngrams), set()).add(slot)
        self.buckets = {key: _bitmap(slots, size) for key, slots in members.items()}
        for word, slots in self.postings.items():
            if len(slots) >= COMMON:
                self.word_bits[word] = _bitmap(slots, size)

    def add(
        self, rid: int, scope: str | None, counts: tuple[int, int, int], mask: bytes, words: str
    ) -> None:
        self.drop(rid)
        slot = self.free.pop() if self.free else len(self.rows)
        split = frozenset(words.split())
        self.rows[slot] = (rid, scope, *counts, _int(mask), split)
        self.slot_of[rid] = slot
        bit = 1 << slot
        self.present |= bit
        key = self._note_bucket(counts[0], counts[2])
        self.buckets[key] = self.buckets.get(key, 0) | bit
        for word in split:
            slots = self.postings.setdefault(word, set())
            slots.add(slot)
            if word in self.word_bits:
                self.word_bits[word] |= bit
            elif len(slots) >= COMMON:
                self.word_bits[word] = _bitmap(slots, len(self.rows) // 8 + 1)
        for at in _mask_bits(mask):
            self.gram_bits[at] |= bit

    def drop(self, rid: int) -> None:
        slot = self.slot_of.pop(rid, None)
        if slot is None:
            return
        row = self.rows.pop(slot)
        keep = ~(1 << slot)
        self.present &= keep
        self.buckets[_bucket(row[4])] &= keep
        for word in row[6]:
            self.postings[word].discard(slot)
            if word in self.word_bits:
                self.word_bits[word] &= keep
        for at in _mask_bits(row[5].to_bytes(similarity.MASK_BITS // 8, "little")):
            self.gram_bits[at] &= keep
        self.free.append(slot)

    def _note_bucket(self, nwords: int, ngrams: int) -> int:
        key = _bucket(ngrams)
        words, grams = self.least.get(key, (nwords, ngrams))
        self.least[key] = (min(words, nwords), min(grams, ngrams))
        return key

    # -- asking it --------------------------------------------------------------------------
    def reaching(
        self, scope: str | None, mine: similarity.Profile, threshold: float, margin: float
    ) -> set[int]:
        """The rids of the records of ``scope`` that pass ``similarity.may_reach(mine,
        margin)``; every record below the ceiling (``threshold < 1 - TOKEN_WEIGHT``), else
        only those sharing a word.

        Why the slots left out fail ``may_reach``: a record sharing ``s`` words, with at
        least ``w'`` words and ``g'`` trigrams (the least of its group), has a token part of
        at most ``3s / (w + max(w', s) + s)`` (``w`` words of ``mine``; every shared word code:
        ``token_ceiling`` at its largest) and a trigram part of at most ``2c / (g + max(g',
        c))``, where ``c`` is the mask bound capped at ``g``, the trigrams of ``mine``. Both
        grow with what they bound and rounding keeps that order, so a slot whose best case
        stays under ``margin`` fails the test."""
        test = similarity.may_reach(mine, margin)
        words, grams = len(mine[0]), len(mine[2])
        lowest = 0 if threshold < 1 - similarity.TOKEN_WEIGHT else 1
        kept = set()
        visits = sum(len(self.postings.get(word, ())) for word in mine[0])
        if lowest and visits <= self.direct_below:  # few to try: no bitmaps
            counts = Counter(slot for word in mine[0] for slot in self.postings.get(word, ()))
            for slot, shared in counts.items():
                rid, where, nwords, ncode, ngrams, mask, _theirs = self.rows[slot]
                if where == scope and test(shared, nwords, ncode, ngrams, mask):
                    kept.add(rid)
            return kept
        if not words or not grams or margin <= 0:
            chosen = self._sharing(mine) if lowest else self.present
        else:
            chosen = self._bounded(mine, margin, lowest)
        while chosen:
            low = chosen & -chosen
            chosen ^= low
            rid, where, nwords, ncode, ngrams, mask, theirs = self.rows[low.bit_length() - 1]
            if where == scope and test(len(mine[0] & theirs), nwords, ncode, ngrams, mask):
                kept.add(rid)
        return kept

    def _word_bitmap(self, word: str) -> int:
        found = self.word_bits.get(word)
        if found is not None:
            return found
        bits = 0
        for slot in self.postings.get(word, ()):
            bits |= 1 << slot
        return bits

    def _sharing(self, mine: similarity.Profile) -> int:
        found = 0
        for word in mine[0]:
            found |= self._word_bitmap(word)
        return found

    def _bounded(self, mine: similarity.Profile, margin: float, lowest: int) -> int:
        """The slots whose best case (see ``reaching``) reaches ``margin``: per number of
        shared words and group of trigram counts, those sharing enough trigrams."""
        shared: list[int] = []  # bit-sliced: bit k of a slot's count is in shared[k]
        for word in mine[0]:
            bits = self._word_bitmap(word)
            if bits:
                _add(shared, bits)
        common: list[int] = []
        for layer in similarity.gram_layers(mine[2]):
            while layer:
                low = layer & -layer
                layer ^= low
                _add(common, self.gram_bits[low.bit_length() - 1])
        words, grams = len(mine[0]), len(mine[2])
        full, chosen = self.present, 0
        at_least: dict[int, int] = {}  # fewest shared trigrams -> the slots with that many
        groups = [(bits, *self.least[key]) for key, bits in self.buckets.items() if bits]
        for count in range(lowest, min(words, (1 << len(shared)) - 1) + 1):
            with_count = _equal(shared, count, full)
            if not with_count:
                continue
            for bits, their_words, their_grams in groups:
                here = with_count & bits
                if not here:
                    continue
                theirs = max(their_words, count)
                tokens = min(1.0, 3 * count / max(1, words + theirs + count))
                fewest = _fewest(tokens, grams, their_grams, margin)
                if fewest is None:
                    continue
                if fewest not in at_least:
                    at_least[fewest] = _at_least(common, fewest, full)
                chosen |= here & at_least[fewest]
        return chosen


def _bucket(ngrams: int) -> int:
    return int(math.log(ngrams, BUCKET_RATIO)) if ngrams > 0 else -1


def _fewest(tokens: float, grams: int, their_grams: int, margin: float) -> int | None:
    """The fewest shared trigrams ``c`` (at most ``grams``) for which the best case
    ``TOKEN_WEIGHT * tokens + (1 - TOKEN_WEIGHT) * 2c / (grams + max(their_grams, c))``
    reaches ``margin``; None if none does (it grows with ``c``: a binary search)."""
    weight = similarity.TOKEN_WEIGHT

    def reaches(c: int) -> bool:
        total = grams + max(their_grams, c)
        return weight * tokens + (1 - weight) * (2 * c / total if total else 0.0) >= margin

    if not reaches(grams):
        return None
    low, high = 0, grams
    while low < high:
        middle = (low + high) // 2
        if reaches(middle):
            high = middle
        else:
            low = middle + 1
    return low


def _int(mask: bytes) -> int:
    return int.from_bytes(mask, "little")


def _mask_bits(mask: bytes) -> list[int]:
    return [at * 8 + k for at, byte in enumerate(mask) if byte for k in _BITS_OF_BYTE[byte]]


def _bitmap(slots: set[int], size: int) -> int:
    bits = bytearray(max(size, max(slots, default=0) // 8 + 1))
    for slot in slots:
        bits[slot >> 3] |= 1 << (slot & 7)
    return int.from_bytes(bits, "little")


def _add(levels: list[int], bits: int) -> None:
    """Add one to the counter of every slot in ``bits`` (``levels``: bit-sliced counters)."""
    at = 0
    while bits:
        if at == len(levels):
            levels.append(bits)
            return
        level = levels[at]
        levels[at] = level ^ bits
        bits &= level
        at += 1


def _equal(levels: list[int], value: int, full: int) -> int:
    """The slots of ``full`` whose counter is ``value``."""
    if value >> len(levels):
        return 0
    found = full
    for at, level in enumerate(levels):
        found = found & level if value >> at & 1 else found & ~level
    return found


def _at_least(levels: list[int], value: int, full: int) -> int:
    """The slots of ``full`` whose counter is ``value`` or more."""
    if value <= 0:
        return full
    if value >> len(levels):
        return 0
    greater, equal = 0, full
    for at in reversed(range(len(levels))):
        level = levels[at]
        if value >> at & 1:
            equal &= level
        else:
            greater |= equal & level
            equal &= ~level
    return greater | equal

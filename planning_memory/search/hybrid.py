"""Hybrid ranking: BM25, the nearest vectors and the related words, fused by reciprocal rank.

The query's vector is compared with every stored vector (``vectors.nearest``); the closest
``VECTOR_POOL`` whose cosine passes the query's median one by ``MARGIN`` form the second
list, read back through the same filters as BM25's. Each document then scores

    fused = BM25_WEIGHT * bm25_share / (RRF_K + bm25_rank)
            + VECTOR_WEIGHT * vector_share / (RRF_K + vector_rank)
            + RELATED_WEIGHT * related_share / (RRF_K + related_rank)
            + TRANSLATED_WEIGHT / (RRF_K + translated_rank)

(a list that does not hold it adds nothing): beside the vectors a vote counts by its rank
and by how strong the evidence behind it is, ``bm25_share`` the document's BM25 relevance
over the query's best (at least ``BM25_FLOOR``), ``vector_share`` its cosine's lift over the
query's median cosine against the nearest one's, ``related_share`` its BM25 over the related
words against the best one's (at least ``RELATED_FLOOR``). A document BM25 holds only weakly
(a word or two of a long question) gives way to one the vectors put close. When no vector
list is fused the related words weigh ``RELATED_ALONE``, as the stand-ins below, which keep
the code a query names above memories that share its subject, exist only beside the vectors.
The third list is BM25 over the words related to the query's (``related.GROUPS``) among the
records, the fourth BM25 over the query's words in the other language (``glossary``, Spanish
and English) among all documents; neither needs a model.
A query of fewer than ``MIN_WORDS`` words is not embedded. Code, docs and messages have no
vector, so the vector list can only ever vote for memories: left at that, a memory close in
meaning outranks the code chunk that matches the query's words. A document without a vector
whose BM25 evidence is strong (``strong_rows``: its relevance at least ``STRONG_SHARE`` of
the query's best, at least ``STRONG_WORDS`` of the query's words in it; the first
``STRONG_POOL`` of them) therefore stands in the vector list too, at its rank among them:
the code a query names keeps its place, and a memory still comes first when BM25 finds
nothing as good. Memory first (``memory_first``): a memory the vectors count near whose BM25
relevance is at least ``MEMORY_FIRST`` of a code or doc chunk's ranks above that chunk, as
the agent can search the code itself but not what the team learned. A document only the
vectors found is a hit too (``match`` "vector"): this is how a question in other words, or
in another language, finds a memory that shares none of its words.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from itertools import islice
from typing import TYPE_CHECKING, Any

from planning_memory.search import semantic, vectors
from planning_memory.search.database import BY_KEY, Filters, Index
from planning_memory.search.glossary import translations
from planning_memory.search.related import related_words

if TYPE_CHECKING:
    from planning_memory.search.rows import Row
    from planning_memory.search.semantic import Embedder

RRF_K = 60
BM25_WEIGHT = 1.0
VECTOR_WEIGHT = 1.0
VECTOR_POOL = 20  # closest documents taken from the vectors
RELATED_POOL = 20  # documents taken for the query's related words
RELATED_WEIGHT = 1.0  # at 0.5 a document only related words find ranks below BM25's 60th
RELATED_ALONE = 0.5  # without vectors no stand-in keeps the place of the code a query names
TRANSLATED_POOL = 20  # documents taken for the query's words in the other language
TRANSLATED_WEIGHT = 1.0  # a word in the other language is the query's own word
MIN_WORDS = 2  # a one-word query is a keyword look-up: its vector says little (BM25 alone)
VECTOR, RELATED, TRANSLATED = "vector", "related", "translated"
MARGIN = 0.025  # over the query's median cosine: what counts as near (docs/search.md)
STRONG_SHARE = 0.5  # of the best BM25 relevance: a document without a vector that has ...
STRONG_WORDS = 0.5  # ... and holds this share of the query's words stands in the vector list
STRONG_POOL = 5  # documents without a vector that stand in the vector list, at most
MEMORY_FIRST = 0.95  # of a chunk's BM25 relevance: a near memory with as much ranks above it
BM25_FLOOR = 0.25  # the least share a BM25 candidate's vote counts beside the vectors
RELATED_FLOOR = 0.5  # the least share a vote of the related words counts beside the vectors
AUTO = "auto"
_WORD_RE = re.compile(r"\w+", re.UNICODE)

# (score, row, step, relevance): a ranked candidate, as ``ranking`` keeps them
Scored = tuple[float, "Row", str, float]
# a further list's documents in its order, each with the share (0..1] its vote counts
Voted = Sequence[tuple["Row", float]]


def worth_embedding(text: str, terms: Sequence[str]) -> bool:
    """Whether a query is embedded: it has a searchable word and at least ``MIN_WORDS``
    words, stop words included ("should we use asyncio" is a question, "foobarbaz" a
    keyword)."""
    return bool(terms) and len(_WORD_RE.findall(text)) >= MIN_WORDS


def resolve(indexes: Sequence[Index], embedder: Embedder | str | None) -> Embedder | None:
    """The embedder a search uses: ``AUTO`` means the shared model when an index holds
    vectors (loaded then, and only then), else none."""
    if embedder != AUTO:
        return embedder if not isinstance(embedder, str) else None
    if not semantic.enabled(None) or not any(vectors.present(ix) for ix in indexes):
        return None
    model, _problem = semantic.load_embedder()
    return model


def query_soon(model: Embedder, text: str) -> Callable[[], Any]:
    """The query's vector, computed while the caller goes on (``Embedder.query_soon``; an
    embedder without it, e.g. one that holds vectors computed before, answers when asked)."""
    soon = getattr(model, "query_soon", None)
    return soon(text) if soon is not None else lambda: model.query(text)


def nearest_rows(indexes: Sequence[Index], query: Any, filters: Filters) -> list[tuple[Row, float]]:
    """The documents closest to ``query`` that pass ``filters``, closest first, each with its
    share: its cosine's lift over the query's median cosine, over the nearest one's."""
    found: list[tuple[float, Row]] = []
    for ix in indexes:
        near = {n.key: n.lift for n in vectors.nearest(ix, query, VECTOR_POOL, MARGIN)}
        if not near:
            continue
        marks = ",".join("?" * len(near))
        # by key: with a source filter SQLite would rather scan every record of the source
        rows = ix.where(f"d.key IN ({marks})", list(near), filters, len(near), index=BY_KEY)
        for row in rows:
            found.append((near[row.doc.key], row))
    found.sort(key=lambda pair: (-pair[0], pair[1].doc.key))
    top = found[0][0] if found else 1.0
    return [(row, lift / top) for lift, row in found[:VECTOR_POOL]]


def related_rows(
    indexes: Sequence[Index], terms: Sequence[str], filters: Filters
) -> list[tuple[Row, float]]:
    """The records holding words related to the query's (``related.GROUPS``: "gestor de
    paquetes" finds the pnpm rule), best BM25 first, each with its share beside the vectors
    (``RELATED_FLOOR`` and the rest by its BM25 over the best one's); none when the query
    touches no group or ``filters`` leave out records."""
    words = [w for w in related_words(terms) if w not in terms]
    if not words or (filters.sources and "record" not in filters.sources):
        return []
    found = _holding(indexes, words, replace(filters, sources=("record",)), RELATED_POOL)
    best = found[0][0] if found else 0.0  # FTS5's bm25: below zero, the best the lowest
    return [
        (row, RELATED_FLOOR + (1 - RELATED_FLOOR) * (bm25 / best if best else 1.0))
        for bm25, row in found
    ]


def translated_rows(indexes: Sequence[Index], terms: Sequence[str], filters: Filters) -> list[Row]:
    """The documents holding the query's words in the other language (``glossary``: "salida
    del comando" finds "command output"), best BM25 first; none when no word is in the
    glossary."""
    words = translations(terms)
    return (
        [row for _bm25, row in _holding(indexes, words, filters, TRANSLATED_POOL)] if words else []
    )


def _holding(
    indexes: Sequence[Index], words: Sequence[str], filters: Filters, n: int
) -> list[tuple[float, Row]]:
    """The ``n`` documents of ``indexes`` holding any of ``words`` that pass ``filters``,
    best BM25 first, each with its FTS5 BM25 (below zero, lower is better)."""
    expression = " OR ".join(f'"{w}"' for w in words)
    found: list[tuple[float, Row]] = []
    for ix in indexes:
        ranked = ix.ranked(expression, filters, n)
        found += [(bm25, row) for (_id, bm25), row in zip(ranked, ix.read(ranked), strict=False)]
    found.sort(key=lambda pair: (pair[0], pair[1].doc.key))
    return found[:n]


def strong_rows(
    scored: Sequence[Scored],
    terms: Sequence[str],
    matched: Callable[[Row, Sequence[str]], Sequence[str]],
) -> list[Row]:
    """The documents of BM25's ``scored`` list that have no vector (code, docs, messages,
    decisions) and strong evidence: relevance at least ``STRONG_SHARE`` of the best, and at
    least ``STRONG_WORDS`` of the query's ``terms`` among those ``matched`` finds in them;
    the first ``STRONG_POOL`` in BM25's order. They stand in the vector list, which cannot
    see them."""
    best = max((relevance for _s, _r, _h, relevance in scored), default=0.0)
    strong = (
        row
        for _score, row, _how, relevance in scored
        if not vectors.has_vector(row.doc.source, row.doc.type)
        and relevance >= STRONG_SHARE * best
        and len(matched(row, terms)) >= STRONG_WORDS * len(terms)
    )
    return list(islice(strong, STRONG_POOL))


def combine(
    scored: Sequence[Scored],
    near: Voted,
    strong: Sequence[Row],
    related: Voted,
    translated: Sequence[Row],
) -> list[Scored]:
    """BM25's ``scored`` list fused with the nearest documents (``nearest_rows``), the
    ``strong`` ones standing in beside them, and the ``related`` and ``translated`` lists;
    then memory first (``memory_first``). BM25's and the related words' votes count their
    share only beside the vectors: without them a weak BM25 match has nothing better to give
    way to."""
    if not near:
        related = evenly([row for row, _share in related])
    fused = fuse(
        scored,
        (VECTOR_WEIGHT, VECTOR, near),
        (VECTOR_WEIGHT, VECTOR, evenly(strong)),
        (RELATED_WEIGHT if near else RELATED_ALONE, RELATED, related),
        (TRANSLATED_WEIGHT, TRANSLATED, evenly(translated)),
        by_share=bool(near),
    )
    return memory_first(fused, near)


def evenly(rows: Sequence[Row]) -> list[tuple[Row, float]]:
    """A list whose every vote counts in full."""
    return [(row, 1.0) for row in rows]


def fuse(
    scored: Sequence[Scored], *lists: tuple[float, str, Voted], by_share: bool = True
) -> list[Scored]:
    """BM25's ``scored`` list and further ``(weight, step, voted rows)`` lists as one, by
    weighted RRF where each vote counts its share (BM25's, ``by_share``: the document's
    relevance over the best); a document only a further list found has that list's step
    (``VECTOR``, ``RELATED``) and relevance 0."""
    best = max((relevance for _s, _r, _h, relevance in scored), default=0.0)
    fused: dict[str, float] = {}
    entry: dict[str, Scored] = {}
    for rank, (score, row, how, relevance) in enumerate(scored, start=1):
        share = BM25_FLOOR + (1 - BM25_FLOOR) * relevance / best if by_share and best > 0 else 1.0
        fused[row.doc.key] = BM25_WEIGHT * share / (RRF_K + rank)
        entry[row.doc.key] = (score, row, how, relevance)
    for weight, how, rows in lists:
        for rank, (row, share) in enumerate(rows, start=1):
            key = row.doc.key
            fused[key] = fused.get(key, 0.0) + weight * share / (RRF_K + rank)
            entry.setdefault(key, (0.0, row, how, 0.0))
    order = sorted(fused, key=lambda key: (-fused[key], key))
    return [(fused[key], *entry[key][1:]) for key in order]


def memory_first(fused: Sequence[Scored], near: Voted) -> list[Scored]:
    """``fused`` with each memory of ``near`` (the vectors count it close) raised above every
    document without a vector (code, docs, messages, decisions) whose BM25 relevance is at
    most its own over ``MEMORY_FIRST``: of a memory and a chunk that match the query about
    as well, the memory comes first. Memories raised over the same chunk keep their order."""
    close = {row.doc.key for row, _share in near}
    chunks = [
        (score, relevance)
        for score, row, _how, relevance in fused
        if not vectors.has_vector(row.doc.source, row.doc.type)
    ]
    out = []
    for score, row, how, relevance in fused:
        if row.doc.key in close and relevance > 0:
            above = [s for s, r in chunks if s > score and relevance >= MEMORY_FIRST * r]
            score = max(above) + 1e-6 * score if above else score
        out.append((score, row, how, relevance))
    out.sort(key=lambda entry: (-entry[0], entry[1].doc.key))
    return out

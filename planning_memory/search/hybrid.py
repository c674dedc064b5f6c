"""Hybrid ranking: BM25, the nearest vectors and the related words, fused by reciprocal rank.

The query's vector is compared with every stored vector (``vectors.nearest``); the closest
``VECTOR_POOL`` whose cosine passes the query's median one by ``MARGIN`` form the second
list, read back through the same filters as BM25's. Each document then scores

    fused = BM25_WEIGHT / (RRF_K + bm25_rank) + VECTOR_WEIGHT / (RRF_K + vector_rank)
            + RELATED_WEIGHT / (RRF_K + related_rank)
            + TRANSLATED_WEIGHT / (RRF_K + translated_rank)

(a list that does not hold it adds nothing), and the fused order is the result; when no
vector list is fused the related words weigh ``RELATED_ALONE``, as the stand-ins below, which
keep the code a query names above memories that share its subject, exist only beside the
vectors. The third
list is BM25 over the words related to the query's (``related.GROUPS``) among the records,
the fourth BM25 over the query's words in the other language (``glossary``, Spanish and
English) among all documents; neither needs a model.
A query of fewer than ``MIN_WORDS`` words is not embedded. Code, docs and messages have no
vector, so the vector list can only ever vote for memories: left at that, a memory close in
meaning outranks the code chunk that matches the query's words. A document without a vector
whose BM25 evidence is strong (``strong_rows``: its relevance at least ``STRONG_SHARE`` of
the query's best, at least ``STRONG_WORDS`` of the query's words in it; the first
``STRONG_POOL`` of them) therefore stands in the vector list too, at its rank among them:
the code a query names keeps its place, and a memory still comes first when BM25 finds
nothing as good. A document only the vectors found is a hit too (``match`` "vector"): this
is how a question in other words, or in another language, finds a memory that shares none
of its words.
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
MARGIN = 0.03  # over the query's median cosine: what counts as near (docs/search.md)
STRONG_SHARE = 0.5  # of the best BM25 relevance: a document without a vector that has ...
STRONG_WORDS = 0.5  # ... and holds this share of the query's words stands in the vector list
STRONG_POOL = 5  # documents without a vector that stand in the vector list, at most
AUTO = "auto"
_WORD_RE = re.compile(r"\w+", re.UNICODE)

# (score, row, step, relevance): a ranked candidate, as ``ranking`` keeps them
Scored = tuple[float, "Row", str, float]


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


def nearest_rows(indexes: Sequence[Index], query: Any, filters: Filters) -> list[Row]:
    """The documents closest to ``query`` that pass ``filters``, closest first."""
    found: list[tuple[float, Row]] = []
    for ix in indexes:
        near = {n.key: n.cosine for n in vectors.nearest(ix, query, VECTOR_POOL, MARGIN)}
        if not near:
            continue
        marks = ",".join("?" * len(near))
        # by key: with a source filter SQLite would rather scan every record of the source
        rows = ix.where(f"d.key IN ({marks})", list(near), filters, len(near), index=BY_KEY)
        for row in rows:
            found.append((near[row.doc.key], row))
    found.sort(key=lambda pair: (-pair[0], pair[1].doc.key))
    return [row for _cosine, row in found[:VECTOR_POOL]]


def related_rows(indexes: Sequence[Index], terms: Sequence[str], filters: Filters) -> list[Row]:
    """The records holding words related to the query's (``related.GROUPS``: "gestor de
    paquetes" finds the pnpm rule), best BM25 first; none when the query touches no group
    or ``filters`` leave out records."""
    words = [w for w in related_words(terms) if w not in terms]
    if not words or (filters.sources and "record" not in filters.sources):
        return []
    return _holding(indexes, words, replace(filters, sources=("record",)), RELATED_POOL)


def translated_rows(indexes: Sequence[Index], terms: Sequence[str], filters: Filters) -> list[Row]:
    """The documents holding the query's words in the other language (``glossary``: "salida
    del comando" finds "command output"), best BM25 first; none when no word is in the
    glossary."""
    words = translations(terms)
    return _holding(indexes, words, filters, TRANSLATED_POOL) if words else []


def _holding(indexes: Sequence[Index], words: Sequence[str], filters: Filters, n: int) -> list[Row]:
    """The ``n`` documents of ``indexes`` holding any of ``words`` that pass ``filters``,
    best BM25 first."""
    expression = " OR ".join(f'"{w}"' for w in words)
    found: list[tuple[float, Row]] = []
    for ix in indexes:
        ranked = ix.ranked(expression, filters, n)
        found += [(bm25, row) for (_id, bm25), row in zip(ranked, ix.read(ranked), strict=False)]
    found.sort(key=lambda pair: (pair[0], pair[1].doc.key))
    return [row for _bm25, row in found[:n]]


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


def fuse(scored: Sequence[Scored], *lists: tuple[float, str, Sequence[Row]]) -> list[Scored]:
    """BM25's ``scored`` list and further ``(weight, step, rows)`` lists as one, by weighted
    RRF; a document only a further list found has that list's step (``VECTOR``,
    ``RELATED``) and relevance 0."""
    fused: dict[str, float] = {}
    entry: dict[str, Scored] = {}
    for rank, (score, row, how, relevance) in enumerate(scored, start=1):
        fused[row.doc.key] = BM25_WEIGHT / (RRF_K + rank)
        entry[row.doc.key] = (score, row, how, relevance)
    for weight, how, rows in lists:
        for rank, row in enumerate(rows, start=1):
            key = row.doc.key
            fused[key] = fused.get(key, 0.0) + weight / (RRF_K + rank)
            entry.setdefault(key, (0.0, row, how, 0.0))
    order = sorted(fused, key=lambda key: (-fused[key], key))
    return [(fused[key], *entry[key][1:]) for key in order]

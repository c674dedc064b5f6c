"""Search over the contextual index: query building, ranking, filters. No sqlite3 here.

Query: the words of the text (lower-cased, stop words and one-letter words dropped, at most
``MAX_TERMS``), each quoted. Candidates come from a few FTS5 queries (``_candidates``): every
word found in the index (AND); for ``auto`` (the default) and ``any`` also the rarest words
(OR, every match scored, within ``OR_BUDGET`` documents) and the more common words in a
title or the tags (within ``TITLE_BUDGET``). Each candidate is then scored over *all* the
query's words (``scoring.Scorer``: FTS5's BM25 plus a proximity term) and they form one
list. Documents holding every word go first only when that is unlikely by chance
(``AND_TRUST``): in a large store of common words many documents hold them all by accident.
Several indexes (the project's, the personal store's) are searched as one: their matches are
ranked and normalised together.

Ranking (documented in docs/search.md)::

    relevance = bm25(all query words; title 3, body 1, tags 2, path 2, terms 1) + proximity
    recency   = RECENCY_WEIGHT * 0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS)
    access    = ACCESS_WEIGHT * min(1, ln(1 + count) / ln(1 + ACCESS_SATURATION))
    score     = relevance * (1 + recency + access)   (* AWAY_WEIGHT: another project's record)
    normalised score = score / best score of the query (the best hit has 1.0)

The boosts are bounded: together they multiply relevance by at most 1.25, so they reorder
near-ties but never lift a poor match over a good one. Pinned long-term records that match the
filters are always returned (after the ranked hits, not counted in ``limit``, reason
``pinned``) when they match the query; soft-deleted records are never in the index at all.
With an embedder (``hybrid``: the default when the index holds vectors), that BM25 list and
the documents closest to the query's vector are fused by reciprocal rank, each vote counting
by the strength of its evidence (code and docs with strong BM25 evidence standing in the
vector list: ``hybrid.strong_rows``; a near memory that matches about as well as a chunk
ranks above it: ``hybrid.memory_first``), and the normalised score is the fused one.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from planning_memory.core import parse_timestamp
from planning_memory.errors import InputError
from planning_memory.search import hybrid, semantic
from planning_memory.search.database import Filters, Index, Totals
from planning_memory.search.documents import SOURCES
from planning_memory.search.rows import Row
from planning_memory.search.scoring import Scorer

if TYPE_CHECKING:
    from planning_memory.search.semantic import Embedder

MAX_TERMS = 16
RECENCY_WEIGHT = 0.15
RECENCY_HALF_LIFE_DAYS = 30.0
ACCESS_WEIGHT = 0.10
ACCESS_SATURATION = 50
POOL_FACTOR = 3
MIN_POOL = 30
DECAY_HALF_LIFE_DAYS = 180.0  # decayEnabled: an unused record's weight halves every 180 days
DECAY_FLOOR = 0.5  # ... but never below half: decay reorders, it does not hide
PINNED_LIMIT = 20  # pinned records appended to a search (the context packer takes more)
COMMON_DF = 500  # documents: a word in fewer is counted exactly, a more common one estimated
AND_TRUST = 1.0  # all-word matches rank first when chance would give fewer than this
OR_BUDGET = 2000  # documents the any-word step may score
TITLE_BUDGET = 1000  # estimated matches of the title-and-tags step
WIDER_SHARE = 2  # steps other than trusted all-word matches keep pool / 2 (at least limit)
MATCH_MODES = ("auto", "all", "any")  # AND widened with OR when too few; AND; OR

_STOPWORDS_TEXT = """
    a an and are as at be but by can do does did for from has have how i if in into is it its
    me my no not of on or our should so than that the their them then there these they this to
    us was we were what when where which who why will with would you your about after again all
    also any because been before being both each few more most other over same some such only
    own too very just use using used get set make need want way work works
    el la los las un una unos unas de del al y o que en es por para con sin como se su sus lo
    le mi tu qué cómo cuándo dónde porque pero más este esta estos estas ese esa hay"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())
_WORD_RE = re.compile(r"\w+", re.UNICODE)
_SPACE_RE = re.compile(r"\s+")


@dataclass(frozen=True)
class Hit:
    """One search result with its score and why it is here."""

    key: str
    source: str
    type: str
    title: str
    snippet: str
    score: float
    match: str
    reason: str
    path: str = ""
    ref_id: str = ""
    session_id: str = ""
    scope: str = "project"
    tags: tuple[str, ...] = ()
    pinned: bool = False
    severity: int = -1
    created_at: str = ""
    updated_at: str = ""
    bm25: float = 0.0
    raw: float = 0.0
    access_count: int = 0
    body: str = field(default="", repr=False)
    meta: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-friendly form (the body left out; ``snippet`` stands for it)."""
        return {
            "key": self.key,
            "id": self.ref_id or self.key,
            "source": self.source,
            "type": self.type,
            "title": self.title,
            "snippet": self.snippet,
            "score": round(self.score, 4),
            "match": self.match,
            "reason": self.reason,
            "path": self.path,
            "session_id": self.session_id,
            "scope": self.scope,
            "tags": list(self.tags),
            "pinned": self.pinned,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "access_count": self.access_count,
        }


def query_terms(text: str) -> list[str]:
    """The searchable words of ``text``: lower-case, no stop words, unique, in order."""
    seen: dict[str, None] = {}
    for word in _WORD_RE.findall(text.lower()):
        word = word.strip("_")
        if len(word) > 1 and word not in STOPWORDS and not word.isdigit():
            seen.setdefault(word, None)
    return list(seen)[:MAX_TERMS]


def match_expression(terms: Sequence[str], mode: str = "any") -> str:
    """An FTS5 query: each term quoted (so it is never an operator), joined by AND or OR."""
    joiner = " AND " if mode == "all" else " OR "
    return joiner.join('"' + t.replace('"', "") + '"' for t in terms)


def recency_boost(updated_at: str, now: datetime) -> float:
    if not updated_at:
        return 0.0
    try:
        age = (now - _parse_time(updated_at)).total_seconds() / 86400.0
    except (ValueError, TypeError):
        return 0.0
    return float(RECENCY_WEIGHT * 0.5 ** (max(age, 0.0) / RECENCY_HALF_LIFE_DAYS))


@functools.lru_cache(maxsize=65536)
def _parse_time(value: str) -> datetime:
    """An RFC 3339 ``...Z`` timestamp (fast path of ``model.parse_timestamp``)."""
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parse_timestamp(value)


def access_boost(count: int) -> float:
    return ACCESS_WEIGHT * min(1.0, math.log1p(max(count, 0)) / math.log1p(ACCESS_SATURATION))


def decay_factor(row: Row, now: datetime) -> float:
    """The config's ``longTerm.decayEnabled``: a long-term record that was never used (no
    access) ranks lower the longer since its last update, halving every
    ``DECAY_HALF_LIFE_DAYS`` down to ``DECAY_FLOOR``. Pinned records never decay."""
    if row.doc.source != "record" or row.doc.pinned or row.access_count > 0:
        return 1.0
    try:
        age = (now - _parse_time(row.doc.updated_at)).total_seconds() / 86400.0
    except (ValueError, TypeError):
        return 1.0
    return float(max(DECAY_FLOOR, 0.5 ** (max(age, 0.0) / DECAY_HALF_LIFE_DAYS)))


def final_score(
    row: Row, now: datetime, decay: bool = False, relevance: float | None = None
) -> float:
    """The ranking formula above, before normalisation (times ``decay_factor`` when
    ``decay``); ``relevance`` defaults to the row's own BM25."""
    relevance = max(-row.bm25 if relevance is None else relevance, 1e-9)
    boost = recency_boost(row.doc.updated_at, now) + access_boost(row.access_count)
    score = relevance * (1.0 + boost)
    return score * decay_factor(row, now) if decay else score


def snippet(body: str, terms: Sequence[str], width: int = 160) -> str:
    """About ``width`` characters of ``body`` around the first query term found."""
    lower = body.lower()
    hits = [p for t in terms if (p := lower.find(t[: max(4, len(t) - 2)])) >= 0]
    first = min(hits) if hits else 0
    start = max(0, first - width)
    window = _SPACE_RE.sub(" ", body[start : first + 3 * width]).strip()
    offset = max(0, window.lower().find(lower[first : first + 4]) - width // 4) if hits else 0
    piece = window[offset : offset + width].strip()
    before = start > 0 or offset > 0
    after = start + len(body[start : first + 3 * width]) < len(body) or offset + width < len(window)
    return ("…" if before else "") + piece + ("…" if after else "")


def _hit(row: Row, score: float, match: str, reason: str, terms: Sequence[str]) -> Hit:
    d = row.doc
    return Hit(
        key=d.key,
        source=d.source,
        type=d.type,
        title=d.title,
        snippet=snippet(d.body, terms),
        score=score,
        match=match,
        reason=reason,
        path=d.path,
        ref_id=d.ref_id,
        session_id=d.session_id,
        scope=d.scope,
        tags=d.tags,
        pinned=d.pinned,
        severity=d.severity,
        created_at=d.created_at,
        updated_at=d.updated_at,
        bm25=row.bm25,
        access_count=row.access_count,
        body=d.body,
        meta=d.meta,
    )


def matched_terms(row: Row, terms: Sequence[str]) -> list[str]:
    """The query terms found in the document (by their first letters, as a stemmer would)."""
    text = f"{row.doc.title}\n{row.doc.path}\n{' '.join(row.doc.tags)}\n{row.doc.body}".lower()
    return [t for t in terms if t[: max(4, len(t) - 2)] in text]


def _reason(row: Row, terms: Sequence[str], rank: int, how: str = "all") -> str:
    found = matched_terms(row, terms)
    if how == "vector" and not found:
        return f"similar meaning (rank {rank})"
    if how == "related" and not found:
        return f"related words (rank {rank})"
    if how == "translated" and not found:
        return f"in the other language (rank {rank})"
    return f"matches {', '.join((found or list(terms))[:6])} (rank {rank})"


def check_sources(sources: Sequence[str] | str) -> tuple[str, ...]:
    """``sources`` as a tuple, each one a source the index stores (``SOURCES``: record, entity,
    code, doc, message, decision, session); an ``InputError`` naming the first unknown one and
    the valid ones otherwise (an unknown name would silently match nothing). A lone string is
    one name."""
    names = (sources,) if isinstance(sources, str) else tuple(sources)
    for name in names:
        if name not in SOURCES:
            raise InputError(
                f"unknown search source {name!r}; valid sources: {', '.join(SOURCES)}",
                hint="for saved memories use 'record'" if name == "memory" else None,
            )
    return names


def search(
    index: Index | Sequence[Index],
    text: str,
    *,
    now: datetime,
    sources: Sequence[str] = (),
    types: Sequence[str] = (),
    scope: str | None = None,
    tags: Sequence[str] = (),
    session_id: str | None = None,
    limit: int = 10,
    threshold: float = 0.0,
    match: str = "auto",
    include_pinned: bool = True,
    embedder: Embedder | str | None = hybrid.AUTO,
    decay: bool = False,
) -> list[Hit]:
    """Ranked hits for ``text`` (see the module docstring for the formula and the modes); an
    ``InputError`` for a source the index does not have (``check_sources``) or an unknown
    ``match``. Several indexes (the project's and the personal store's) are searched as one:
    their matches are ranked and normalised together. ``embedder``: ``"auto"`` (the model
    when an index holds vectors), one given, or ``None`` for BM25 alone."""
    indexes = [index] if isinstance(index, Index) else list(index)
    filters = Filters(check_sources(sources), tuple(types), scope, tuple(tags), session_id)
    check_match(match)
    terms = query_terms(text)
    limit = max(1, limit)
    model = hybrid.resolve(indexes, embedder) if hybrid.worth_embedding(text, terms) else None
    vector = hybrid.query_soon(model, text) if model else None  # embedded while BM25 ranks
    scored = _scored(indexes, terms, filters, limit, match, now, decay) if terms else []
    near = hybrid.nearest_rows(indexes, vector(), filters) if vector else []
    related = hybrid.related_rows(indexes, terms, filters)
    translated = hybrid.translated_rows(indexes, terms, filters) if match != "all" else []
    if near or related or translated:
        strong = hybrid.strong_rows(scored, terms, matched_terms) if near else []
        scored = hybrid.combine(scored, near, strong, related, translated)
    best = max((s for s, _r, _m, _rel in scored), default=1.0)
    hits = []
    for rank, (score, found, how, relevance) in enumerate(scored[:limit], start=1):
        row = replace(found, bm25=-relevance)
        norm = score / best
        if norm + 1e-12 < threshold:
            continue
        hits.append(_hit(row, norm, how, _reason(row, terms, rank, how), terms))
    if include_pinned:
        for ix in indexes:
            hits += pinned_hits(ix, filters, exclude={h.key for h in hits}, terms=terms)
    return hits


def embed_soon(text: str) -> None:
    """Start embedding ``text`` for the search that follows, when this process has the model
    loaded already (a resident hook server): the prompt is embedded while the index is
    opened and synced. Nothing is loaded here."""
    model = semantic.loaded()
    worth = hybrid.worth_embedding(text, query_terms(text))
    if model is not None and semantic.enabled(None) and worth:
        model.query_soon(text)


def check_match(match: str) -> str:
    """``match`` if it is a mode (``MATCH_MODES``: all, any, auto), else an ``InputError``."""
    if match not in MATCH_MODES:
        raise InputError(f"unknown match mode {match!r}; expected one of {', '.join(MATCH_MODES)}")
    return match


def _scored(
    indexes: Sequence[Index],
    terms: Sequence[str],
    filters: Filters,
    limit: int,
    match: str,
    now: datetime,
    decay: bool,
) -> list[tuple[float, Row, str, float]]:
    """The candidates of every index (``_candidates``), each scored over all the query's words
    (``scoring.Scorer``) times its boosts, best first; documents holding every word come
    first when chance would put every word in fewer than ``AND_TRUST`` documents. Each is
    (score, row, step, relevance)."""
    pool = max(limit * POOL_FACTOR, MIN_POOL)
    scored = []
    for ix in indexes:
        totals = ix.totals()
        counts = {t: ix.estimate_count(match_expression([t]), COMMON_DF, totals) for t in terms}
        trusted = match != "any" and _by_chance(counts, totals.documents) < AND_TRUST
        scorer = Scorer.build(counts, totals)
        steps = _candidates(ix, terms, counts, totals, filters, pool, match, limit, trusted)
        for row, how in steps:
            relevance = scorer.relevance(row)
            tier = 0 if how == "all" and trusted else 1
            score = final_score(row, now, decay, relevance) * ix.weight(row)
            scored.append((tier, -score, row.doc.key, row, how, relevance))
    scored.sort(key=lambda entry: entry[:3])
    return [(-negative, row, how, rel) for _t, negative, _k, row, how, rel in scored]


def _by_chance(counts: Mapping[str, int], documents: int) -> float:
    """How many documents would hold every word found if words fell at random: the number of
    documents times the share of documents holding each word."""
    found = [n for n in counts.values() if n > 0]
    return documents * math.prod(n / documents for n in found) if found and documents else 0.0


def _candidates(
    index: Index,
    terms: Sequence[str],
    counts: Mapping[str, int],
    totals: Totals,
    filters: Filters,
    pool: int,
    match: str,
    limit: int,
    trusted: bool,
) -> list[tuple[Row, str]]:
    """The documents worth scoring, with the step that found them (``all`` or ``any``).
    Each step is one FTS5 query keeping its best ``pool`` by BM25 (``pool / WIDER_SHARE``
    for all but trusted all-word matches):

    1. every word found in the index (a word found nowhere does not empty it). For ``all``
       that is all; so it is when these matches are trusted and fill ``limit``.
    2. any of the rarest words: words from the rarest on while their documents add up to at
       most ``OR_BUDGET``, every match scored;
    3. (two words or more) any word in a title or the tags, from the rarest word on while
       the estimated matches stay within ``TITLE_BUDGET``, every match scored.
    """
    found = list(terms) if match == "all" else [t for t in terms if counts[t] > 0]
    if not found:
        return []
    wide = max(limit, pool // WIDER_SHARE)
    first = index.ranked(
        match_expression(found, "all"), filters, pool if trusted or match == "all" else wide
    )
    steps = dict.fromkeys((rowid for rowid, _bm25 in first), "all")
    if match != "all" and not (trusted and len(first) >= limit):
        for expression, scan in _wider_steps(found, counts, totals):
            for rowid, _bm25 in index.ranked(expression, filters, wide, scan=scan):
                steps.setdefault(rowid, "any")
    rows = index.rows_by_id([(rowid, 0.0) for rowid in steps])
    return [(rows[rowid], how) for rowid, how in steps.items() if rowid in rows]


def _wider_steps(
    found: Sequence[str], counts: Mapping[str, int], totals: Totals
) -> list[tuple[str, int]]:
    """Steps 2 and 3 of ``_candidates``: (FTS5 expression, how many matches it may score)."""
    steps: list[tuple[str, int]] = []
    rarest = sorted(found, key=lambda t: counts[t])
    picked = _within(rarest, [counts[t] for t in rarest], OR_BUDGET)
    if picked:
        steps.append((match_expression(picked, "any"), OR_BUDGET))
    common = [t for t in rarest if t not in picked]
    title_share = sum(totals.shares[0:3:2]) if totals.shares else 1.0
    titled = _within(common, [counts[t] * title_share for t in common], TITLE_BUDGET)
    if len(found) >= 2 and titled:
        steps.append(("{title tags} : (" + match_expression(titled, "any") + ")", TITLE_BUDGET))
    return steps


def _within(words: Sequence[str], costs: Sequence[float], budget: float) -> list[str]:
    """The first ``words`` whose ``costs`` add up to at most ``budget``."""
    picked, spent = [], 0.0
    for word, cost in zip(words, costs, strict=True):
        if spent + cost > budget:
            break
        picked.append(word)
        spent += cost
    return picked


def pinned_hits(
    index: Index, filters: Filters, *, exclude: set[str], terms: Sequence[str] = ()
) -> list[Hit]:
    """Pinned long-term records that pass ``filters`` and hold a word of the query (the
    ``PINNED_LIMIT`` most recently updated when there are more); a search for words no
    pinned record holds returns none of them."""
    only_records = Filters(("record",), filters.types, filters.scope, filters.tags)
    if filters.sources and "record" not in filters.sources:
        return []
    rows = index.listed("pinned", only_records, PINNED_LIMIT)
    return [
        _hit(r, 0.0, "pinned", "pinned: matches the query", terms)
        for r in rows
        if r.doc.key not in exclude and terms and matched_terms(r, terms)
    ]

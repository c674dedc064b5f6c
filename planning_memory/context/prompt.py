"""The few memories relevant to one prompt (the UserPromptSubmit hook), in a handful of lines.

At most ``limit`` items (the config's ``agents.recallLimit``, 8 by default) within
``RECALL_BUDGET`` tokens, of two kinds:

- taught rules (``taught``) that share a word with the prompt once its words are widened with
  related ones (``search.related``: "add lodash as a dependency" is also about npm, pnpm, yarn,
  installing), so a rule comes back when the prompt does not name its subject;
- the saved memories the prompt matches best: at least two of its words (its only one for a
  one-word prompt), never only generic words ("add", "fix"), or, with the index's vectors,
  one close in meaning (a search hit only the vectors found, in other words or another
  language). A word counts in either language (``search.translations``: "salida" is
  "output"), so a Spanish prompt shares words with an English memory, index or not.

Without an index (none built yet: a fresh clone's first prompt) the records the caller
passes are matched word by word instead: a hook never builds an index. Pure apart from the
index reads.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import datetime

from planning_memory.context.formats import render_line
from planning_memory.context.items import ContextPack, Item, hit_doc, record_item
from planning_memory.context.taught import MAX_TAUGHT, is_taught
from planning_memory.search import (
    Filters,
    Index,
    Row,
    estimate_tokens,
    query_terms,
    record_doc,
    related_words,
    translations,
)
from planning_memory.search import search as search_index

RECALL_BUDGET = 300  # tokens
RECALL_ITEMS = 8  # the default of ``agents.recallLimit``
HEADING = "planning-memory: memories relevant to this prompt"
# task words that say what to do, not what about: alone they make nothing relevant
_GENERIC_TEXT = """
    add adds added adding fix fixes fixed change changes update updates create creates remove
    delete write run implement refactor new please let try show look code file files project
    repo thing things help now today again always never avoid prefer dont don"""
GENERIC = frozenset(_GENERIC_TEXT.split())
_WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)


def recall(
    prompt: str,
    *,
    now: datetime,
    indexes: Sequence[Index] = (),
    records: Iterable[Mapping[str, object]] = (),
    exclude: Collection[str] = (),
    budget: int = RECALL_BUDGET,
    limit: int = RECALL_ITEMS,
) -> ContextPack:
    """The memories relevant to ``prompt``: taught rules from ``indexes`` and among
    ``records`` (a store without an index), then search hits from ``indexes``. ``exclude``
    holds ids to leave out (what the prompt itself just taught). Empty text when nothing is
    relevant."""
    terms = [t for t in query_terms(prompt) if t not in GENERIC]
    records_only = Filters(("record",))
    taught = [r for ix in indexes for r in ix.listed("taught", records_only, MAX_TAUGHT)]
    docs = [d for d in map(record_doc, records) if d is not None]
    rows = [Row(d, 0.0, 0, "") for d in docs]
    items = _taught_items([*taught, *(r for r in rows if is_taught(r.doc))], terms)
    if indexes and terms and limit:
        items += _matching_items(indexes, prompt, terms, now, limit)
    elif terms and limit:  # no index yet: the records by the words they share
        items += _word_matches([r for r in rows if not is_taught(r.doc)], terms)
    seen = set(exclude)
    unique = []
    for item in items:
        if item.id not in seen:
            seen.add(item.id)
            unique.append(item)
    return _pack(unique[:limit], budget)


def _hits(term: str, words: set[str]) -> bool:
    """``term`` is one of ``words``, or (a word of five letters or more) starts one of them
    with its stem (``dependency`` finds ``dependencies``)."""
    if term in words:
        return True
    stem = term[: max(4, len(term) - 2)]
    return len(term) > 4 and any(w.startswith(stem) for w in words)


def _other_language(terms: Sequence[str]) -> dict[str, list[str]]:
    """Each of the prompt's ``terms`` with its words in the other language (``search.
    translations``), generic ones left out."""
    return {t: [w for w in translations([t]) if w not in GENERIC] for t in terms}


def _shared(words_of: Mapping[str, Sequence[str]], words: set[str]) -> list[str]:
    """The prompt's terms (the keys of ``words_of``, ``_other_language``) a memory's
    ``words`` hold, as they are or in the other language."""
    return [
        t for t, other in words_of.items() if _hits(t, words) or any(_hits(w, words) for w in other)
    ]


def _words(row: Row) -> set[str]:
    d = row.doc
    return set(_WORD_RE.findall(f"{d.title}\n{d.body}\n{' '.join(d.tags)}".lower()))


def _taught_items(rows: Sequence[Row], terms: Sequence[str]) -> list[Item]:
    """Taught rules sharing a word with the prompt (directly first, then through a related
    word), each saying which."""
    related = related_words(terms)
    scored = []
    for row in rows:
        words = _words(row)
        direct = [t for t in terms if _hits(t, words)]
        via = [w for w in related if w not in terms and _hits(w, words)]
        if direct:
            why = f"taught; matches {', '.join(direct[:4])}"
        elif via:
            why = f"taught; {related[via[0]]} → {', '.join(via[:3])}"
        else:
            continue
        scored.append((-len(direct), -len(via), row.doc.key, row, why))
    scored.sort(key=lambda s: s[:3])
    return [record_item(row, 1, n, why) for n, (*_k, row, why) in enumerate(scored)]


def _matching_items(
    indexes: Sequence[Index], prompt: str, terms: Sequence[str], now: datetime, limit: int
) -> list[Item]:
    """The saved memories the prompt matches best, when they share enough of its words."""
    hits = search_index(
        indexes, prompt, now=now, sources=("record",), limit=limit, include_pinned=False
    )
    items: list[Item] = []
    words_of = _other_language(terms)
    for hit in hits:
        row = Row(hit_doc(hit), hit.bm25, hit.access_count, "")
        shared = _shared(words_of, _words(row))
        if len(shared) >= min(2, len(terms)):
            items.append(record_item(row, 2, len(items), f"matches {', '.join(shared[:4])}"))
        elif hit.match == "vector":
            items.append(record_item(row, 2, len(items), "close in meaning"))
    return items


def _word_matches(rows: Sequence[Row], terms: Sequence[str]) -> list[Item]:
    """Records sharing at least two of the prompt's words (its only one), most first."""
    scored = []
    words_of = _other_language(terms)
    for row in rows:
        shared = _shared(words_of, _words(row))
        if len(shared) >= min(2, len(terms)):
            scored.append((-len(shared), row.doc.updated_at, row.doc.key, row, shared))
    scored.sort(key=lambda s: s[:3])
    return [
        record_item(row, 2, n, f"matches {', '.join(shared[:4])}")
        for n, (*_k, row, shared) in enumerate(scored)
    ]


def _pack(items: Sequence[Item], budget: int) -> ContextPack:
    lines: list[str] = []
    kept: list[Item] = []
    for item in items:
        line = render_line(item)
        if estimate_tokens("\n".join([HEADING, *lines, line])) <= budget:
            lines.append(line)
            kept.append(item)
    text = "\n".join([HEADING, *lines]) if lines else ""
    return ContextPack(
        text, "md", budget, estimate_tokens(text), tuple(kept), len(items) - len(kept)
    )

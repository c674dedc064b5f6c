"""The few memories relevant to one prompt (the UserPromptSubmit hook), in a handful of lines.

At most ``limit`` items (the config's ``agents.recallLimit``, 8 by default) within
``RECALL_BUDGET`` tokens, of two kinds:

- taught rules (``taught``) that share a word with the prompt once its words are widened with
  related ones (``RELATED``: "add lodash as a dependency" is also about npm, pnpm, yarn,
  installing), so a rule comes back when the prompt does not name its subject;
- with a search index, the saved memories the prompt matches best: at least two of its
  words (its only one for a one-word prompt), never only generic words ("add", "fix").

Without an index (none built yet) only the taught rules are looked at, from the records the
caller passes: a hook never builds an index. Pure apart from the index reads.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import datetime

from planning_memory.context.formats import render_line
from planning_memory.context.items import ContextPack, Item, hit_doc, record_item
from planning_memory.context.taught import MAX_TAUGHT, is_taught
from planning_memory.search import Filters, Index, Row, estimate_tokens, query_terms, record_doc
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
# words that stand for each other in a prompt: any of a group widens the prompt to the group
RELATED: tuple[frozenset[str], ...] = tuple(
    frozenset(group.split())
    for group in (
        "dependency dependencies package packages install library libraries deps npm pnpm yarn"
        " bun pip poetry uv cargo lockfile",
        "secret secrets credential credentials password passwords token tokens env dotenv apikey",
        "commit commits push branch merge rebase git",
        "test tests testing spec specs coverage vitest jest pytest mock mocks",
        "typescript types typing interface interfaces",
        "style formatting lint linter prettier eslint ruff indentation quotes semicolons",
        "database db sql migration migrations schema orm prisma",
        "error errors exception exceptions catch logging logger",
        "api endpoint endpoints route routes fetch request requests http timeout",
        "auth authentication login logout signin signup oauth jwt nextauth",
        "deploy deployment release production pipeline docker",
        "css styles styling tailwind",
    )
)
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
    docs = [d for d in map(record_doc, records) if d is not None and is_taught(d)]
    items = _taught_items([*taught, *(Row(d, 0.0, 0, "") for d in docs)], terms)
    if indexes and terms and limit:
        items += _matching_items(indexes, prompt, terms, now, limit)
    seen = set(exclude)
    unique = []
    for item in items:
        if item.id not in seen:
            seen.add(item.id)
            unique.append(item)
    return _pack(unique[:limit], budget)


def related_words(terms: Sequence[str]) -> dict[str, str]:
    """``{related word: the prompt's word it came from}`` for the groups ``terms`` touch."""
    found: dict[str, str] = {}
    for term in terms:
        for group in RELATED:
            if term in group or _singular(term) in group:
                found.update((w, term) for w in sorted(group) if w not in found)
    return found


def _singular(word: str) -> str:
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def _hits(term: str, words: set[str]) -> bool:
    """``term`` is one of ``words``, or (a word of five letters or more) starts one of them
    with its stem (``dependency`` finds ``dependencies``)."""
    if term in words:
        return True
    stem = term[: max(4, len(term) - 2)]
    return len(term) > 4 and any(w.startswith(stem) for w in words)


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
    for hit in hits:
        row = Row(hit_doc(hit), hit.bm25, hit.access_count, "")
        shared = [t for t in terms if _hits(t, _words(row))]
        if len(shared) >= min(2, len(terms)):
            items.append(record_item(row, 2, len(items), f"matches {', '.join(shared[:4])}"))
    return items


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

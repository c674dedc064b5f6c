"""One relevance for every candidate: Python BM25 equals FTS5's, proximity, phrases."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from real_words import real_words

from planning_memory.core.layout import Layout
from planning_memory.core.model import new_long_term
from planning_memory.search import ranking, scoring
from planning_memory.search import upkeep as indexer
from planning_memory.search.database import Filters, Index
from planning_memory.search.stemming import stem
from planning_memory.store import Store

NOW = datetime(2026, 1, 10, tzinfo=UTC)
TEXTS = [
    ("Echo instead of print", "Use click.echo for all terminal output; it handles broken pipes."),
    ("Commands write output", "Every command writes to the terminal through one output helper."),
    ("Colours", "The terminal shows many colours when the final output is a tty; commands check."),
    ("Colour names", "Respect NO_COLOR and the terminal's capabilities when writing output."),
    *((f"Unrelated {n}", f"A note about databases and migration number {n}.") for n in range(20)),
]


@pytest.fixture
def index(tmp_path: Path) -> Index:
    layout = Layout.for_repo(tmp_path)
    ix = Index.open(layout)
    indexer.rebuild(ix, layout, Store(layout))
    for n, (title, text) in enumerate(TEXTS):
        record = new_long_term("pattern", f"pat_{n}", NOW, title=title, description=text)
        indexer.index_record(ix, layout, record)
    yield ix  # type: ignore[misc]
    ix.close()


def scorer_for(index: Index, query: str) -> scoring.Scorer:
    totals = index.totals()
    counts = {
        t: index.estimate_count(ranking.match_expression([t], "any"), 10**6, totals)
        for t in ranking.query_terms(query)
    }
    return scoring.Scorer.build(counts, totals)


@pytest.mark.parametrize("query", ["terminal output", "commands write output terminal", "no_color"])
def test_bm25_equals_fts5_for_documents_with_every_word(
    index: Index, query: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scoring, "PROXIMITY_WEIGHT", 0.0)
    scorer = scorer_for(index, query)
    expression = ranking.match_expression(ranking.query_terms(query), "all")
    rows = index.match(expression, Filters(), 10)
    assert rows
    for row in rows:
        assert scorer.relevance(row) == pytest.approx(-row.bm25, rel=1e-9)


def test_words_close_together_score_more(index: Index) -> None:
    scorer = scorer_for(index, "terminal output")
    rows = {r.doc.ref_id: r for r in index.match('"terminal" AND "output"', Filters(), 10)}
    adjacent = rows["pat_0"]  # "terminal output"
    apart = rows["pat_2"]  # "terminal ... output" seven tokens apart: past the window
    assert min(scorer.idfs) > 0.5
    bonus = scorer.relevance(adjacent) - (-adjacent.bm25)
    assert bonus == pytest.approx(scoring.PROXIMITY_WEIGHT * min(scorer.idfs))
    assert scorer.relevance(apart) == pytest.approx(-apart.bm25)


def test_a_split_word_is_a_phrase(index: Index) -> None:
    scorer = scorer_for(index, "no_color")
    assert list(scorer.words) == [("no", "color")]
    found = scorer.find("respect no_color, not no colour or color alone")
    assert [m[:2] for m in found] == [(8, 16)]


def test_a_word_found_nowhere_adds_nothing(index: Index) -> None:
    scorer = scorer_for(index, "terminal zyzzyva")
    assert list(scorer.words) == [(stem("termin"),)]


def test_every_token_starts_with_its_stems_head() -> None:
    """``Scorer.build`` finds a word by the start of its stem (all but the last two letters,
    at least two): true of every token of two real packages."""
    heads = {w: stem(w)[: max(2, len(stem(w)) - 2)] for w in real_words()}
    assert [w for w, head in heads.items() if not w.startswith(head)] == []

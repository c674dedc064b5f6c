"""The Python tokenizer and Porter stemmer agree with FTS5's ``porter unicode61``."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from real_words import real_words

from planning_memory.search.database import Index
from planning_memory.search.stemming import fold, stem, tokens

TOKENIZER = "porter unicode61 remove_diacritics 2"


def fts5_stems(words: list[str]) -> list[str]:
    """What FTS5 makes of each word: one row per word, read back through ``fts5vocab``."""
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(w, tokenize={TOKENIZER!r})")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
    conn.executemany("INSERT INTO t(rowid, w) VALUES (?, ?)", list(enumerate(words, 1)))
    by_row = {row: term for term, row in conn.execute("SELECT term, doc FROM v")}
    return [by_row[n] for n in range(1, len(words) + 1)]


def test_the_index_uses_this_tokenizer(tmp_path: Path) -> None:
    with Index(tmp_path / "index.sqlite3") as index:
        sql = index.conn.execute("SELECT sql FROM sqlite_master WHERE name = 'fts'").fetchone()
    assert TOKENIZER in sql[0]


def test_stems_equal_fts5_on_real_words() -> None:
    words = real_words()
    assert len(words) > 3000
    expected = fts5_stems(words)
    wrong = [(w, e, stem(w)) for w, e in zip(words, expected, strict=True) if stem(w) != e]
    assert wrong == []


def test_porter_examples() -> None:
    cases = {
        "caresses": "caress",
        "ponies": "poni",
        "agreed": "agre",
        "hopping": "hop",
        "filing": "file",
        "happy": "happi",
        "relational": "relat",
        "generalization": "gener",
        "key": "kei",
        "go": "go",
        "b64encode": "b64encod",
    }
    assert {w: stem(w) for w in cases} == cases
    assert fts5_stems(list(cases)) == list(cases.values())


def test_tokens_split_like_unicode61() -> None:
    assert tokens("NO_COLOR=1 ctx.obj Ünïcode naïve") == [
        "no",
        "color",
        "1",
        "ctx",
        "obj",
        "unicode",
        "naive",
    ]
    assert fold("Crème Brûlée") == "creme brulee"
    text = "NO_COLOR=1 ctx.obj Ünïcode naïve getFullContext"
    assert [stem(t) for t in tokens(text)] == fts5_stems(tokens(text))

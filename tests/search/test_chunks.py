"""Chunking of code and Markdown for the search index."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from planning_memory.search.chunks import (
    chunk_code,
    chunk_file,
    chunk_markdown,
    estimate_tokens,
)


def test_estimate_tokens_is_ceil_chars_over_four() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2


def test_code_is_cut_before_top_level_definitions() -> None:
    funcs = [
        f"def f{i}(x):\n" + "".join(f"    y{j} = x + {j}\n" for j in range(20)) for i in range(6)
    ]
    chunks = chunk_code("\n".join(funcs), size=150, overlap=0)
    assert len(chunks) > 2
    for chunk in chunks:
        assert chunk.text.startswith("def f"), chunk.text[:40]


def test_consecutive_chunks_overlap_by_whole_lines() -> None:
    text = "\n".join(f"line number {i} with some words" for i in range(200))
    chunks = chunk_code(text, size=100, overlap=20)
    assert len(chunks) > 3
    for a, b in itertools.pairwise(chunks):
        assert b.start_line <= a.end_line, "expected overlap"
        assert b.start_line > a.start_line


def test_markdown_chunks_carry_their_heading_path() -> None:
    text = "# Guide\nintro\n\n## Install\npip install x\n\n## Use\n### CLI\nrun it\n"
    chunks = chunk_markdown(text, size=500, overlap=0)
    headings = [c.heading for c in chunks]
    assert headings == ["Guide", "Guide > Install", "Guide > Use", "Guide > Use > CLI"]


def test_headings_inside_fences_do_not_split() -> None:
    text = "# Title\n```\n# not a heading\n```\nafter\n"
    chunks = chunk_markdown(text)
    assert len(chunks) == 1 and "# not a heading" in chunks[0].text


def test_chunk_file_picks_by_suffix() -> None:
    assert chunk_file("a.md", "# H\ntext\n")[0].heading == "H"
    assert chunk_file("a.py", "x = 1\n")[0].heading == ""
    assert chunk_file("a.py", "\n\n  \n") == []


lines_strategy = st.lists(st.text(alphabet="abc def():#\t", max_size=60), max_size=120)


@settings(max_examples=150, deadline=None)
@given(lines=lines_strategy, size=st.integers(1, 300), overlap=st.integers(0, 100))
def test_every_nonblank_line_is_in_some_chunk_and_order_is_kept(
    lines: list[str], size: int, overlap: int
) -> None:
    text = "\n".join(lines)
    for chunker in (chunk_code, chunk_markdown):
        chunks = chunker(text, size, overlap)
        covered: set[int] = set()
        for chunk in chunks:
            assert 1 <= chunk.start_line <= chunk.end_line <= len(lines)
            assert chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
            covered.update(range(chunk.start_line, chunk.end_line + 1))
        for n, line in enumerate(lines, start=1):
            if line.strip():
                assert n in covered
        starts = [c.start_line for c in chunks]
        assert starts == sorted(starts)


@settings(max_examples=100, deadline=None)
@given(lines=lines_strategy, size=st.integers(20, 300))
def test_chunk_size_is_bounded(lines: list[str], size: int) -> None:
    text = "\n".join(lines)
    longest = max((len(line) + 1 for line in lines), default=0)
    for chunk in chunk_code(text, size, 0):
        # a chunk only passes the size by less than one line (a line is never split)
        assert len(chunk.text) <= size * 4 + longest

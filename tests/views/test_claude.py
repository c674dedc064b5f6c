"""CLAUDE.md from entries: the same text whatever the order of the records, and the search
for the most entries that fit agrees with trying every count."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planning_memory.views import claude
from planning_memory.views.fileformat import source_hash
from planning_memory.views.templates import load_template

CLAUDE_T = load_template("CLAUDE.md")
SRC = source_hash([])
WORDS = ["use", "pnpm", "never", "npm", "`x`", "## h", "@x", "é"]


def _record(i: int, kind: str, words: list[str], flags: tuple[bool, bool, bool]) -> dict[str, Any]:
    pinned, taught, established = flags
    text = " ".join(words)
    return {
        "id": f"{kind[:3]}_{i:04d}",
        "type": kind,
        "title": text[:80] or "t",
        "name": text[:60] or "n",
        "description": text,
        "correction": text[::-1],
        "severity": ["low", "medium", "high", "critical"][i % 4],
        "established": established,
        "usage_count": 5 + i % 7 if established else 1,
        "occurrences": 1 + i % 3,
        "pinned": pinned,
        "tags": ["learned-from-conversation"] if taught else [],
        "body": {"what": text, "why": text[:20], "where": "", "learned": ""},
        "updated_at": f"2024-01-{1 + i % 28:02d}T00:00:00Z",
        "deleted_at": None,
    }


RECORDS = st.lists(
    st.tuples(
        st.sampled_from(["pattern", "mistake", "decision", "architecture", "learning"]),
        st.lists(
            st.sampled_from(["use", "pnpm", "never", "npm", "`x`", "## h", "@x", "é"]), max_size=30
        ),
        st.tuples(st.booleans(), st.booleans(), st.booleans()),
    ),
    max_size=60,
).map(lambda found: [_record(i, *spec) for i, spec in enumerate(found)])


def _reference(records: list[dict[str, Any]], limit: int) -> str | None:
    """The most entries that fit, by trying every count from the top (None: none fits)."""
    found = [e for e in map(claude.claude_entry, records) if e is not None]
    lines = claude._ordered(found, {})
    for kept in range(len(lines), -1, -1):
        text = claude._claude_text(lines[:kept], len(lines) - kept, CLAUDE_T, limit, SRC, True)
        if len(text) <= limit:
            return text
    return None


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(RECORDS, st.integers(600, 6000), st.randoms(use_true_random=False))
def test_the_cut_keeps_the_most_entries_that_fit(
    records: list[dict[str, Any]], limit: int, rng: random.Random
) -> None:
    expected = _reference(records, limit)
    if expected is None:
        return
    text = claude.render_claude_md(records, {}, CLAUDE_T, max_chars=limit, source_hash=SRC)
    assert text == expected
    shuffled = list(records)
    rng.shuffle(shuffled)
    again = claude.render_claude_md(shuffled, {}, CLAUDE_T, max_chars=limit, source_hash=SRC)
    assert again == text


def test_claude_source_hash_covers_only_what_it_shows() -> None:
    shown = _record(1, "decision", ["we", "chose"], (False, False, False))
    hidden = _record(2, "learning", ["a", "fact"], (False, False, False))
    before = claude.claude_source_hash([shown, hidden], {}, CLAUDE_T)
    changed = dict(hidden, description="another fact")
    assert claude.claude_source_hash([shown, changed], {}, CLAUDE_T) == before
    assert claude.claude_source_hash([dict(shown, title="x"), hidden], {}, CLAUDE_T) != before
    assert claude.claude_source_hash([shown, hidden], {"a": {"b": 1}}, CLAUDE_T) != before

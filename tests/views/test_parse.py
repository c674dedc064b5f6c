"""Parsing hand-edited views: the fixture corpus of real edits (tests/fixtures/markdown) and
focused cases. Every edit is imported as meant or refused with a message; none is lost."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planning_memory.errors import InputError
from planning_memory.views.claude import render_claude_md
from planning_memory.views.diff import Changes, diff_view
from planning_memory.views.fileformat import EDITABLE, Issue, body_hash, header_hashes, source_hash
from planning_memory.views.inert import END_MARKER, START_MARKER, extract_managed_block
from planning_memory.views.inert import replace_managed_block as replace_block
from planning_memory.views.parse import parse_mistakes, parse_patterns, parse_view
from planning_memory.views.render import render_view
from planning_memory.views.templates import load_template

NOW = "2024-02-01T10:00:00Z"
CORPUS = Path(__file__).parents[1] / "fixtures" / "markdown"
TEMPLATES = {"patterns": load_template("patterns.md"), "mistakes": load_template("mistakes.md")}
BLOCK_PREFS = {"testing": {"framework": "pytest"}}


def _load(case: str) -> tuple[list[dict[str, Any]], str, dict[str, Any]]:
    folder = CORPUS / case
    records = json.loads((folder / "before-records.json").read_text(encoding="utf-8"))
    edited = (folder / "edited.md").read_bytes().decode("utf-8")
    expected = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
    return records, edited, expected


def _cases(kind: str) -> list[str]:
    names = sorted(p.name for p in CORPUS.iterdir() if p.is_dir())
    return [
        n
        for n in names
        if (json.loads((CORPUS / n / "expected.json").read_text())["kind"] == "block")
        == (kind == "block")
    ]


VIEW_CASES, BLOCK_CASES = _cases("view"), _cases("block")


def test_corpus_is_large_enough() -> None:
    assert len(VIEW_CASES) >= 50 and len(BLOCK_CASES) >= 5
    about = " ".join(_load(c)[2]["about"] for c in VIEW_CASES + BLOCK_CASES).lower()
    for topic in (
        "typo",
        "reorder",
        "add",
        "delete",
        "severity",
        "crlf",
        "byte order mark",
        "trailing spaces",
        "display-only",
        "unclosed",
        "inside the managed block",
        "around the block",
    ):
        assert topic in about or any(topic in c for c in VIEW_CASES), topic


def _match_issues(actual: Sequence[Issue], expected: list[dict[str, Any]]) -> None:
    assert len(actual) == len(expected), [str(i) for i in actual]
    unused = list(actual)
    for want in expected:
        hit = next(
            (i for i in unused if i.line == want["line"] and re.search(want["match"], i.message)),
            None,
        )
        assert hit is not None, (want, [str(i) for i in actual])
        unused.remove(hit)


def _new_record(kind: str, number: int, fields: dict[str, Any]) -> dict[str, Any]:
    defaults: dict[str, Any] = (
        {"usage_count": 1, "established": False, "example": ""}
        if kind == "patterns"
        else {"severity": "medium", "occurrences": 1, "correction": ""}
    )
    prefix = "pat" if kind == "patterns" else "mis"
    return {
        **defaults,
        **fields,
        "id": f"{prefix}_NEW{number:03d}",
        "deleted_at": None,
        "source": "human",
    }


def _apply(kind: str, records: list[dict[str, Any]], changes: Changes) -> list[dict[str, Any]]:
    by_id = {r["id"]: r for r in records}
    for change in (*changes.updates, *changes.deletions):
        by_id[change.record_id] = change.after
    for number, creation in enumerate(changes.creations):
        record = _new_record(kind, number, creation.fields)
        by_id[record["id"]] = record
    return list(by_id.values())


def _assert_nothing_lost(
    kind: str, records: list[dict[str, Any]], edited: str, changes: Changes
) -> None:
    """What the person wrote is what the records hold after import: re-render the imported
    records and read them back; each edited item's fields come back as written."""
    parsed = parse_view(edited, kind)  # type: ignore[arg-type]
    after = _apply(kind, records, changes)
    again = parse_view(
        render_view(
            after,
            kind,
            TEMPLATES[kind],  # type: ignore[arg-type]
            source_hash=source_hash(after),
        ),
        kind,
    )  # type: ignore[arg-type]
    assert again.errors == ()
    found = {item.record_id: item.fields for item in again.items}
    new_ids = iter(sorted(i for i in found if i and "_NEW" in i))
    for item in parsed.items:
        rid = item.record_id or next(new_ids)
        for name, value in item.fields.items():
            assert found[rid][name] == value, (rid, name)
    assert set(found) == {i.record_id for i in parsed.items if i.record_id} | set(
        i for i in found if "_NEW" in str(i)
    )


def _check_update(update: Any, records: list[dict[str, Any]], kind: str) -> None:
    before = next(r for r in records if r["id"] == update.record_id)
    assert update.after["updated_at"] == NOW
    assert update.after["revision_count"] == before["revision_count"] + 1
    assert update.after["source"] == before["source"]
    allowed = {*EDITABLE[kind], "title", "updated_at", "revision_count"}  # type: ignore[index]
    assert {k for k in update.after if update.after[k] != before.get(k)} <= allowed


@pytest.mark.parametrize("case", VIEW_CASES)
def test_hand_edit_corpus(case: str) -> None:
    records, edited, expected = _load(case)
    kind = expected["kind"]
    changes = diff_view(parse_view(edited, kind, template=TEMPLATES[kind]), records, NOW)
    _match_issues(changes.errors, expected["errors"])
    _match_issues(changes.warnings, expected["warnings"])
    if expected["outcome"] == "refuse":
        assert changes.empty
        with pytest.raises(InputError, match="nothing was imported"):
            changes.raise_for_errors("patterns.md")
        return
    changes.raise_for_errors()
    assert {u.record_id: u.changed for u in changes.updates} == expected["updates"]
    for update in changes.updates:
        _check_update(update, records, kind)
        for name, value in expected.get("after", {}).get(update.record_id, {}).items():
            assert update.after[name] == value
    assert [d.record_id for d in changes.deletions] == sorted(expected["deletions"])
    assert all(d.after["deleted_at"] == NOW for d in changes.deletions)
    assert len(changes.creations) == len(expected["creations"])
    for creation, want in zip(changes.creations, expected["creations"], strict=True):
        assert {k: creation.fields.get(k) for k in want} == want
        assert not set(expected.get("absent_in_creation", [])) & set(creation.fields)
    _assert_nothing_lost(kind, records, edited, changes)


def _outside(text: str) -> tuple[str, str]:
    start = text.index(START_MARKER)
    end = text.index(END_MARKER) + len(END_MARKER)
    return text[:start], text[end:]


@pytest.mark.parametrize("case", BLOCK_CASES)
def test_managed_block_corpus(case: str) -> None:
    records, edited, expected = _load(case)
    block = render_claude_md(
        records,
        BLOCK_PREFS,
        load_template("CLAUDE.md"),
        max_chars=8000,
        source_hash=source_hash(records),
    )
    if expected["outcome"] == "refuse":
        with pytest.raises(InputError, match=expected["error"]):
            extract_managed_block(edited)
        with pytest.raises(InputError, match=expected["error"]):
            replace_block(edited, block)
        return
    current = extract_managed_block(edited)
    recorded = header_hashes(current) if current is not None else None
    hand_edited = None if current is None else recorded is None or recorded[1] != body_hash(current)
    assert hand_edited == expected["block_hand_edited"]
    new = replace_block(edited, block)
    if current is None:
        assert new.startswith(edited)
    else:
        assert _outside(new) == _outside(edited)
    assert extract_managed_block(new) == block
    if "\r\n" in edited:
        assert "\n" not in new.replace("\r\n", "")


# --- focused cases ----------------------------------------------------------------------

ITEM = """## Retry with backoff <!-- id: pat_01 -->

Retry idempotent calls three times.

**Example:**

```python
retry(call, attempts=3)
```

- **Tags:** http, resilience
- **Usage:** 2 uses _(read-only)_
"""


def test_parse_item_fields_and_lines() -> None:
    parsed = parse_patterns("# Patterns\n\n" + ITEM)
    assert parsed.errors == () and parsed.header is None
    (item,) = parsed.items
    assert item.record_id == "pat_01" and item.line == 3
    assert item.fields == {
        "name": "Retry with backoff",
        "description": "Retry idempotent calls three times.",
        "example": "retry(call, attempts=3)",
        "tags": ["http", "resilience"],
    }
    assert item.display == {"usage": (14, "2 uses _(read-only)_")}


def test_heading_inside_a_code_block_is_not_an_item() -> None:
    text = ITEM.replace("retry(call, attempts=3)", "## not a heading\n- **Tags:** nope")
    parsed = parse_patterns(text)
    assert parsed.errors == ()
    assert parsed.items[0].fields["example"] == "## not a heading\n- **Tags:** nope"


def test_new_item_has_no_id_and_new_heading_text_is_a_creation() -> None:
    parsed = parse_mistakes("## Shipped without tests\n\n- **Severity:** medium\n")
    (item,) = parsed.items
    assert item.record_id is None
    assert item.fields == {
        "title": "Shipped without tests",
        "description": "",
        "correction": "",
        "severity": "medium",
    }
    assert item.missing == ("tags",)
    changes = diff_view(parsed, [], NOW)
    assert changes.creations[0].fields["type"] == "mistake"


def test_errors_refuse_the_whole_file_and_keep_ids_seen() -> None:
    record = {
        "id": "mis_01",
        "type": "mistake",
        "title": "A",
        "description": "",
        "correction": "",
        "severity": "low",
        "tags": [],
        "deleted_at": None,
    }
    text = "## A <!-- id: mis_01 -->\n\n- **Severity:** nope\n\n## B\n"
    parsed = parse_mistakes(text)
    assert "mis_01" in parsed.seen_ids and [i.line for i in parsed.errors] == [3]
    changes = diff_view(parsed, [record], NOW)
    assert changes.empty and not changes.ok  # no creation of B, no deletion of mis_01
    with pytest.raises(InputError) as info:
        changes.raise_for_errors("mistakes.md")
    assert info.value.line == 3 and info.value.path == "mistakes.md"


def test_records_of_other_types_are_ignored() -> None:
    mistake = {"id": "mis_01", "type": "mistake", "title": "x", "deleted_at": None}
    changes = diff_view(parse_patterns("# Patterns\n"), [mistake], NOW)
    assert changes.ok and changes.empty


def test_header_hashes_and_body_hash() -> None:
    body = "# Patterns\n\ntext\n"
    source = "sha256:" + "a" * 64
    hashes = f"source-hash={source} body-hash={body_hash(body)}"
    line = f"<!-- planning-memory view=patterns.md {hashes} -->"
    assert header_hashes(line + "\n" + body) == (source, body_hash(body))
    assert header_hashes(body) is None
    assert header_hashes("<!-- planning-memory view=x source-hash=sha256:1 -->\n") is None
    noisy = "\ufeff" + (line + "\n" + body).replace("\n", "  \r\n") + "\r\n\r\n"
    assert body_hash(noisy) == body_hash(body)
    assert body_hash(body.replace("text", "texts")) != body_hash(body)


def test_quoted_heading_is_json_and_invalid_json_stays_text() -> None:
    parsed = parse_patterns('## "Fail\\tfast"\n\n## "not" json "here"\n')
    assert [i.fields["name"] for i in parsed.items] == ["Fail\tfast", '"not" json "here"']


LINES = st.lists(
    st.one_of(
        st.sampled_from(
            [
                "## A <!-- id: pat_01 -->",
                "## B",
                "```",
                "~~~",
                "<!--",
                "-->",
                "<div>",
                "**Example:**",
                "- **Tags:** a, b",
                "**Description:** x",
                "---",
                "",
                "- **Usage:** 3 uses",
                "  ## nested",
                "> q",
                '"json \\" line"',
                "<!-- id: pat_02 -->",
                "- **Severity:** high",
                "**Correction:**",
            ]
        ),
        st.text(st.characters(blacklist_categories=("Cs",)), max_size=12),
    ),
    max_size=25,
).map("\n".join)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(LINES, st.sampled_from(["patterns", "mistakes"]))
def test_any_text_parses_to_items_or_located_errors(text: str, kind: str) -> None:
    record = {
        "id": "pat_01",
        "type": "pattern",
        "name": "A",
        "title": "A",
        "description": "",
        "example": "",
        "tags": [],
        "deleted_at": None,
        "revision_count": 1,
    }
    parsed = parse_view(text, kind)  # type: ignore[arg-type]
    changes = diff_view(parsed, [record], NOW)
    assert all(issue.line is None or issue.line >= 1 for issue in changes.errors)
    assert changes.ok or changes.empty

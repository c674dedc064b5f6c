"""Render and parse as a pair: patterns.md / mistakes.md read back exactly, byte-stable, and
CLAUDE.md bounded. Hypothesis properties over generated records plus focused examples."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from planning_memory.errors import ConfigError
from planning_memory.views.claude import CLAUDE_SECTIONS, render_claude_md
from planning_memory.views.diff import diff_view
from planning_memory.views.fileformat import body_hash, editable_fields, header_hashes, source_hash
from planning_memory.views.inert import active_injections
from planning_memory.views.parse import parse_patterns, parse_view
from planning_memory.views.render import (
    assemble_texts,
    item_sections,
    render_mistakes,
    render_patterns,
)
from planning_memory.views.templates import TEMPLATE_NAMES, load_template

NOW = "2024-02-01T10:00:00Z"
PATTERNS_T = load_template("patterns.md")
MISTAKES_T = load_template("mistakes.md")
CLAUDE_T = load_template("CLAUDE.md")
SETTINGS = {"deadline": None, "suppress_health_check": list(HealthCheck)}

# Pieces of text that Markdown (or our grammar) treats specially.
FRAGMENTS = [
    "#",
    "## ",
    "### x",
    "# ",
    "- ",
    "* ",
    "+ ",
    "1. ",
    "2) ",
    "**Tags:**",
    "- **Tags:** a",
    "**Example:**",
    "**Correction:**",
    "**Description:**",
    "- **Severity:** high",
    "```",
    "````",
    "~~~",
    "`",
    "``",
    "<!--",
    "-->",
    "<!-- id: pat_1 -->",
    "## x <!-- id: pat_A -->",
    "<pre>",
    "</pre>",
    "<div>",
    "<?",
    "<![CDATA[",
    "> ",
    "---",
    "===",
    "***",
    "___",
    "\\",
    '"',
    '""',
    "[x]: /u",
    "    ",
    "\t",
    "  ",
    " ",
    "\n",
    "\n\n",
    "\r\n",
    "\r",
    "\u200b",
    "\u202e",
    "\x00",
    "\x0b",
    "\x7f",
    "\u2028",
    "\ufeff",
    "\U000e0041",
    "a",
    "b c",
    "é",
    "😀",
    "[",
    "]",
    ",",
    "@~/.ssh/id_rsa",
    "|",
    "&amp;",
    "*",
    "_",
]
CHARS = st.characters(blacklist_categories=("Cs",))
PIECE = st.one_of(st.sampled_from(FRAGMENTS), st.text(CHARS, min_size=1, max_size=6))
TEXT = st.lists(PIECE, max_size=8).map("".join)
NONEMPTY = st.lists(PIECE, min_size=1, max_size=8).map("".join)
TAGS = st.lists(NONEMPTY, max_size=3).map(lambda t: sorted(set(t)))
STAMP = st.sampled_from(["2024-01-20T15:00:00Z", "2023-05-01T00:00:00Z"])


@st.composite
def patterns(draw: st.DrawFn) -> list[dict[str, Any]]:
    records = []
    for number in range(draw(st.integers(0, 4))):
        name = draw(NONEMPTY)
        records.append(
            {
                "id": f"pat_{number:02d}{draw(st.sampled_from('ABC'))}",
                "type": "pattern",
                "title": name[:200],
                "name": name,
                "description": draw(TEXT),
                "example": draw(TEXT),
                "tags": draw(TAGS),
                "usage_count": draw(st.integers(1, 9)),
                "established": draw(st.booleans()),
                "pinned": False,
                "source": "cli",
                "revision_count": 1,
                "updated_at": "2024-01-01T00:00:00Z",
                "deleted_at": draw(st.sampled_from([None, None, None, "2024-01-02T00:00:00Z"])),
            }
        )
    return records


@st.composite
def mistakes(draw: st.DrawFn) -> list[dict[str, Any]]:
    records = []
    for number in range(draw(st.integers(0, 4))):
        records.append(
            {
                "id": f"mis_{number:02d}",
                "type": "mistake",
                "title": draw(NONEMPTY),
                "description": draw(TEXT),
                "correction": draw(TEXT),
                "tags": draw(TAGS),
                "severity": draw(st.sampled_from(["low", "medium", "high", "critical"])),
                "occurrences": draw(st.integers(1, 5)),
                "last_occurrence": draw(STAMP),
                "pinned": False,
                "source": "cli",
                "revision_count": 2,
                "updated_at": "2024-01-01T00:00:00Z",
                "deleted_at": draw(st.sampled_from([None, None, None, "2024-01-02T00:00:00Z"])),
            }
        )
    return records


def _render(kind: str, records: list[dict[str, Any]]) -> str:
    if kind == "patterns":
        return render_patterns(records, PATTERNS_T, source_hash=source_hash(records))
    return render_mistakes(records, MISTAKES_T, source_hash=source_hash(records))


def _template(kind: str) -> str:
    return PATTERNS_T if kind == "patterns" else MISTAKES_T


def _assert_reads_back(kind: str, records: list[dict[str, Any]], text: str) -> None:
    parsed = parse_view(text, kind, template=_template(kind))  # type: ignore[arg-type]
    assert parsed.errors == () and parsed.warnings == (), (parsed.errors, parsed.warnings, text)
    live = {r["id"]: editable_fields(r, kind) for r in records if r["deleted_at"] is None}  # type: ignore[arg-type]
    assert {item.record_id: item.fields for item in parsed.items} == live, text
    changes = diff_view(parsed, records, NOW)
    assert changes.ok and changes.empty and changes.warnings == (), changes


@settings(max_examples=600, **SETTINGS)
@given(patterns())
def test_patterns_parse_render_roundtrip(records: list[dict[str, Any]]) -> None:
    text = _render("patterns", records)
    _assert_reads_back("patterns", records, text)
    assert header_hashes(text) == (source_hash(records), body_hash(text))


@settings(max_examples=600, **SETTINGS)
@given(mistakes())
def test_mistakes_parse_render_roundtrip(records: list[dict[str, Any]]) -> None:
    text = _render("mistakes", records)
    _assert_reads_back("mistakes", records, text)
    assert header_hashes(text) == (source_hash(records), body_hash(text))


@settings(max_examples=300, **SETTINGS)
@given(st.one_of(patterns(), mistakes()), st.randoms(use_true_random=False))
def test_render_is_byte_stable_and_order_free(
    records: list[dict[str, Any]], rnd: random.Random
) -> None:
    kind = "mistakes" if records and records[0]["type"] == "mistake" else "patterns"
    first = _render(kind, records)
    shuffled = list(records)
    rnd.shuffle(shuffled)
    assert _render(kind, shuffled) == first
    assert _render(kind, records) == first
    assert not re.search(r"[ \t]$", first, re.MULTILINE), "no trailing whitespace is rendered"
    assert "\r" not in first and "\ufeff" not in first  # items are quiet (``assemble_view``)
    assert first.endswith("\n") and not first.endswith("\n\n")


def _code_lines(text: str) -> set[int]:
    lines: set[int] = set()
    for token in MarkdownIt("commonmark").parse(text):
        if token.type in ("fence", "code_block") and token.map:
            lines.update(range(*token.map))
    return lines


def _editor_noise(text: str, rnd: random.Random, blank_lines: bool) -> str:
    """What editors and people do without meaning to change anything."""
    code = _code_lines(text)
    out = []
    for number, line in enumerate(text.split("\n")):
        if blank_lines and number not in code and line.startswith(("## ", "- **")):
            out.extend([""] * rnd.randint(0, 2))
        out.append(line + " " * rnd.randint(0, 2) + "\t" * rnd.randint(0, 1))
    noisy = "\n".join(out) + "\n" * rnd.randint(0, 3)
    if rnd.random() < 0.5:
        noisy = noisy.replace("\n", "\r\n")
    return ("\ufeff" if rnd.random() < 0.5 else "") + noisy


@settings(max_examples=300, **SETTINGS)
@given(st.one_of(patterns(), mistakes()), st.randoms(use_true_random=False))
def test_editor_noise_is_not_a_change(records: list[dict[str, Any]], rnd: random.Random) -> None:
    kind = "mistakes" if records and records[0]["type"] == "mistake" else "patterns"
    text = _render(kind, records)
    blank_lines = rnd.random() < 0.5
    noisy = _editor_noise(text, rnd, blank_lines)
    _assert_reads_back(kind, records, noisy)
    if not blank_lines:  # the body hash ignores BOM, CRLF, trailing blanks; not blank lines
        assert body_hash(noisy) == body_hash(text)


# --- focused examples -------------------------------------------------------------------


def _pattern(pid: str, **fields: Any) -> dict[str, Any]:
    base = {
        "id": pid,
        "type": "pattern",
        "title": "T",
        "name": "T",
        "description": "",
        "example": "",
        "tags": [],
        "usage_count": 1,
        "established": False,
        "deleted_at": None,
        "pinned": False,
        "revision_count": 1,
        "source": "cli",
        "updated_at": "2024-01-01T00:00:00Z",
    }
    return base | fields


def test_patterns_order_established_then_usage_then_id() -> None:
    records = [
        _pattern("pat_C", name="c", usage_count=9),
        _pattern("pat_B", name="b", usage_count=5, established=True),
        _pattern("pat_A", name="a", usage_count=6, established=True),
        _pattern("pat_D", name="d", usage_count=9),
        _pattern("pat_E", name="gone", deleted_at="2024-01-01T00:00:00Z"),
    ]
    text = render_patterns(records, PATTERNS_T, source_hash=source_hash(records))
    assert re.findall(r"<!-- id: (\w+) -->", text) == ["pat_A", "pat_B", "pat_C", "pat_D"]


def test_mistakes_order_by_severity_then_occurrences() -> None:
    def mis(mid: str, severity: str, occurrences: int) -> dict[str, Any]:
        return {
            "id": mid,
            "type": "mistake",
            "title": mid,
            "description": "",
            "correction": "",
            "tags": [],
            "severity": severity,
            "occurrences": occurrences,
            "deleted_at": None,
        }

    records = [
        mis("mis_1", "low", 9),
        mis("mis_2", "critical", 1),
        mis("mis_3", "high", 2),
        mis("mis_4", "high", 5),
        mis("mis_5", "medium", 1),
    ]
    text = render_mistakes(records, MISTAKES_T, source_hash=source_hash(records))
    order = re.findall(r"<!-- id: (\w+) -->", text)
    assert order == ["mis_2", "mis_4", "mis_3", "mis_5", "mis_1"]


def test_plain_item_layout() -> None:
    record = _pattern(
        "pat_01",
        name="Error handling",
        description="Wrap awaits.",
        example="try:\n    x()\nexcept E:\n    log()",
        tags=["api", "async"],
        usage_count=7,
        established=True,
    )
    text = render_patterns([record], PATTERNS_T, source_hash=source_hash([record]))
    item = text[text.index("## Error") :]
    assert item == (
        "## Error handling <!-- id: pat_01 -->\n\nWrap awaits.\n\n**Example:**\n\n```\n"
        "try:\n    x()\nexcept E:\n    log()\n```\n\n- **Tags:** api, async\n"
        "- **Usage:** 7 uses, established _(read-only)_\n"
    )


def test_fence_is_longer_than_any_backtick_run() -> None:
    record = _pattern("pat_01", example="a ``` b\n`````\nc")
    text = render_patterns([record], PATTERNS_T, source_hash=source_hash([record]))
    assert "\n``````\na ``` b\n`````\nc\n``````\n" in text
    assert parse_patterns(text).items[0].fields["example"] == "a ``` b\n`````\nc"


def test_values_markdown_cannot_hold_become_visible_json() -> None:
    record = _pattern(
        "pat_01",
        name="  spaced",
        description="line  \n\u202eevil",
        example="x = 1   ",
        tags=["a,b"],
    )
    text = render_patterns([record], PATTERNS_T, source_hash=source_hash([record]))
    assert '## "  spaced" <!-- id: pat_01 -->' in text
    assert '"line  \\n\\u202eevil"' in text
    assert '"x = 1   "' in text
    assert '- **Tags:** ["a,b"]' in text
    assert "\u202e" not in text
    assert parse_patterns(text).items[0].fields == editable_fields(record, "patterns")


def test_structure_in_a_description_is_escaped_only_when_needed() -> None:
    safe = "Intro.\n\n- a list\n- **bold** item\n\n### Sub heading\n\n```py\n## not an item\n```"
    unsafe = "Intro\n---"  # a setext heading would start a new item
    records = [_pattern("pat_01", description=safe), _pattern("pat_02", description=unsafe)]
    text = render_patterns(records, PATTERNS_T, source_hash=source_hash(records))
    assert safe in text
    assert '"Intro\\n---"' in text
    _assert_reads_back("patterns", records, text)


def test_empty_view_is_the_template() -> None:
    text = render_patterns([], PATTERNS_T, source_hash=source_hash([]))
    assert text.split("\n", 1)[1] == PATTERNS_T.replace("$items", "").rstrip("\n") + "\n"
    parsed = parse_patterns(text, template=PATTERNS_T)
    assert parsed.items == () and parsed.errors == () and parsed.warnings == ()


def test_template_must_end_with_items() -> None:
    with pytest.raises(ValueError, match="items"):
        render_patterns([], "$items\nfooter\n", source_hash=source_hash([]))
    with pytest.raises(ValueError, match="placeholder"):
        render_patterns([], "$nope\n$items\n", source_hash=source_hash([]))


def test_source_hash_depends_on_content_not_order() -> None:
    a, b = _pattern("pat_A"), _pattern("pat_B")
    assert source_hash([a, b]) == source_hash([b, a])
    assert source_hash([a, b]) != source_hash([a, b | {"name": "x"}])
    assert source_hash([a], "template 1") != source_hash([a], "template 2")
    with pytest.raises(ValueError):
        render_patterns([], PATTERNS_T, source_hash="md5:abc")


def test_templates_load_by_either_name() -> None:
    for name in TEMPLATE_NAMES:
        assert load_template(name) == load_template(name.removesuffix(".tmpl"))
        assert "$" in load_template(name)
    with pytest.raises(ConfigError):
        load_template("../secrets")
    with pytest.raises(ConfigError):
        load_template("nope.md")


# --- CLAUDE.md --------------------------------------------------------------------------


def _claude_records() -> list[dict[str, Any]]:
    def mis(mid: str, severity: str, **fields: Any) -> dict[str, Any]:
        return {
            "id": mid,
            "type": "mistake",
            "title": f"Mistake {mid}",
            "severity": severity,
            "description": "What went wrong.",
            "correction": "Do this instead.",
            "occurrences": 1,
            "tags": [],
            "deleted_at": None,
            "pinned": False,
        } | fields

    def lrn(lid: str, kind: str, **fields: Any) -> dict[str, Any]:
        return {
            "id": lid,
            "type": kind,
            "title": f"Decision {lid}",
            "learned": "We chose X.",
            "body": {"what": "", "why": "It is faster.", "where": "", "learned": ""},
            "updated_at": f"2024-01-0{lid[-1]}T00:00:00Z",
            "deleted_at": None,
            "pinned": False,
        } | fields

    return [
        mis("mis_1", "critical"),
        mis("mis_2", "high"),
        mis("mis_3", "medium"),
        mis("mis_4", "low", pinned=True),
        _pattern(
            "pat_1", name="Established", description="Always.", usage_count=6, established=True
        ),
        _pattern("pat_2", name="Fresh", description="Sometimes."),
        lrn("lrn_1", "architecture"),
        lrn("lrn_2", "decision"),
        lrn("lrn_3", "discovery"),
        _pattern("pat_3", name="Gone", established=True, deleted_at="2024-01-01T00:00:00Z"),
    ]


PREFS = {
    "code_style": {"indent": 2, "quotes": "single", "semicolons": False},
    "testing": {"framework": "pytest", "tools": ["hypothesis", "ruff"]},
    "updated_at": "2024-01-01T00:00:00Z",
}


def test_claude_md_content_and_order() -> None:
    records = _claude_records()
    text = render_claude_md(
        records, PREFS, CLAUDE_T, max_chars=8000, source_hash=source_hash(records)
    )
    assert header_hashes(text) == (source_hash(records), body_hash(text))
    headings = re.findall(r"^## (.+)$", text, re.MULTILINE)
    assert headings == [
        CLAUDE_SECTIONS[k] for k in ("pinned", "preferences", "mistakes", "patterns", "decisions")
    ]
    assert "- **Mistake mis_4** (low): What went wrong. **Instead:** Do this instead." in text
    assert text.index("Mistake mis_1") < text.index("Mistake mis_2")
    for absent in ("mis_3", "Fresh", "Gone", "lrn_3"):
        assert absent not in text
    assert "- **code style**: indent: 2; quotes: single; semicolons: no" in text
    assert "- **Decision lrn_2** (decision): We chose X. **Why:** It is faster." in text
    assert text.index("lrn_2") < text.index("lrn_1")  # newest decision first
    assert "<!--" not in text
    allowed = {*CLAUDE_SECTIONS.values(), "Project memory"}
    assert active_injections(text, allowed_headings=allowed) == []


def test_claude_md_drops_lowest_priority_entries_whole() -> None:
    records = _claude_records()
    full = render_claude_md(
        records, PREFS, CLAUDE_T, max_chars=100_000, source_hash=source_hash(records)
    )
    limit = len(full) - 60
    cut = render_claude_md(
        records, PREFS, CLAUDE_T, max_chars=limit, source_hash=source_hash(records)
    )
    assert len(cut) <= limit
    assert "Decision lrn_1" not in cut and "Mistake mis_4" in cut
    assert re.search(r"_\d+ more entr(y was|ies were) left out to stay within", cut)
    for line in cut.splitlines():
        if line.startswith("- "):
            assert line in full.splitlines()  # never a cut-off entry


def test_claude_md_limit_smaller_than_frame_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="smaller than its empty frame"):
        render_claude_md([], {}, CLAUDE_T, max_chars=50, source_hash=source_hash([]))


def test_claude_md_without_header_for_managed_blocks() -> None:
    records = _claude_records()
    text = render_claude_md(
        records, PREFS, CLAUDE_T, max_chars=8000, source_hash=source_hash(records), header=False
    )
    assert text.startswith("# Project memory") and header_hashes(text) is None


def test_claude_md_has_what_a_person_taught_from_the_first_time() -> None:
    """Trigger-phrase records (tagged ``learned-from-conversation``) and preferences are in
    CLAUDE.md at once, not only once a pattern is established, and go last when cutting."""
    taught = [
        _pattern(
            "pat_9",
            name="Use pnpm, never npm",
            description="Always use pnpm, never npm",
            tags=["learned-from-conversation"],
        ),
        {
            "id": "mis_9",
            "type": "mistake",
            "title": "Never commit .env files",
            "severity": "medium",
            "description": "never commit .env files",
            "correction": "",
            "occurrences": 1,
            "tags": ["learned-from-conversation"],
            "deleted_at": None,
            "pinned": False,
        },
        {
            "id": "lrn_9",
            "type": "preference",
            "title": "Prefer named exports",
            "learned": "Use named exports instead of default exports",
            "body": {"what": "", "why": "", "where": "", "learned": ""},
            "tags": [],
            "deleted_at": None,
            "pinned": False,
        },
    ]
    records = [*_claude_records(), *taught]
    text = render_claude_md(
        records, PREFS, CLAUDE_T, max_chars=8000, source_hash=source_hash(records)
    )
    headings = re.findall(r"^## (.+)$", text, re.MULTILINE)
    assert headings[:3] == ["Pinned", "Taught rules", "Preferences"]
    section = text.split("## Taught rules")[1].split("## ")[0]
    assert "- **Never commit .env files** (medium): never commit .env files" in section
    assert "- **Use pnpm, never npm**: Always use pnpm, never npm" in section
    assert "- **Prefer named exports** (preference): Use named exports" in section
    assert section.index("Never commit") < section.index("pnpm")  # mistakes first
    assert text.count("pnpm, never npm**") == 1  # not repeated under "Patterns to follow"
    # dropping whole entries to fit starts from the bottom: taught rules stay
    limit = len(text) - 300
    cut = render_claude_md(
        records, PREFS, CLAUDE_T, max_chars=limit, source_hash=source_hash(records)
    )
    assert len(cut) <= limit and "left out" in cut
    for needle in ("pnpm", ".env", "named exports", "code style"):
        assert needle in cut
    allowed = {*CLAUDE_SECTIONS.values(), "Project memory"}
    assert active_injections(text, allowed_headings=allowed) == []


# -- the body hash from kept section digests ------------------------------------------------

# lines of an item; none ends in a space, as a render writes none (a value that would is JSON)
ITEM_LINES = st.sampled_from(
    ["## a <!-- id: x -->", "## b", "text", "", "```", "## c d", "##x", "é"]
)
ITEM_TEXTS = st.lists(ITEM_LINES, min_size=1, max_size=6).map(lambda lines: "\n".join(lines) + "\n")


@settings(max_examples=300, deadline=None)
@given(st.lists(ITEM_TEXTS, max_size=8), st.sampled_from(["patterns.md", "mistakes.md"]))
def test_a_view_hashed_from_its_sections_is_the_view_hashed_whole(
    texts: list[str], name: str
) -> None:
    """``assemble_texts`` given each item's section digests gives the bytes it gives without
    them, and its header's body hash is ``body_hash`` of the text (items that do not start a
    section, or a blank last one, included)."""
    kind = name.removesuffix(".md")
    template, source = load_template(name), "sha256:" + "0" * 64
    whole = assemble_texts(texts, kind, template, source_hash=source)  # type: ignore[arg-type]
    sections = [item_sections(text) for text in texts]
    if all(s is not None for s in sections):
        kept = assemble_texts(texts, kind, template, source_hash=source, sections=sections)  # type: ignore[arg-type]
        assert kept == whole
    recorded = header_hashes(whole.text)
    assert recorded is not None and recorded[1] == body_hash(whole.text)
    assert whole.data == whole.text.encode("utf-8")


def test_any_edit_of_a_rendered_body_changes_its_hash() -> None:
    """A byte changed, two sections swapped, a line moved from one item to another: each is a
    different body hash (the sections are hashed in order)."""
    texts = ["## a <!-- id: x -->\n\n```\n## one\n## two\n```\n", "## b <!-- id: y -->\n\nb\n"]
    sections = [item_sections(text) for text in texts]
    template = load_template("patterns.md")
    text = assemble_texts(texts, "patterns", template, source_hash="sha256:" + "0" * 64).text
    assert (
        assemble_texts(
            texts,
            "patterns",
            template,
            source_hash="sha256:" + "0" * 64,
            sections=sections,  # type: ignore[arg-type]
        ).text
        == text
    )
    recorded = header_hashes(text)
    assert recorded is not None and recorded[1] == body_hash(text)
    for edited in (
        text.replace("## two", "## twO"),
        text.replace("## one\n## two", "## two\n## one"),
        text.replace("\n\nb\n", "\n\n## two\nb\n").replace("## one\n## two\n", "## one\n"),
        text.replace("## a <!-- id: x -->", "## b <!-- id: y -->", 1).replace(
            "## b <!-- id: y -->\n\nb", "## a <!-- id: x -->\n\nb"
        ),
    ):
        assert edited != text and body_hash(edited) != recorded[1]

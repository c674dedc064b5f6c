"""Render records into patterns.md and mistakes.md, readable lists a person can edit.

Also CLAUDE.md, the bounded summary an agent reads. Pure and deterministic to the byte: the
same records (in any order) and template give the same text. Every view value is written so
that ``parse`` reads it back exactly: plain Markdown where it can be, a JSON string literal
where it cannot (docs/markdown.md). No file I/O.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from planning_memory.core import is_taught as taught
from planning_memory.errors import ConfigError
from planning_memory.views.diff import display_text, editable_fields
from planning_memory.views.fileformat import (
    HEADING_LIKE_RE,
    MARKER_HINT_RE,
    VIEW_FILES,
    Kind,
    fill_template,
    has_unsafe,
    header_line,
    json_literal,
    json_string,
    json_string_list,
    normalize_newlines,
)
from planning_memory.views.inert import inline
from planning_memory.views.parse import parse_view

SEVERITY_RANK = {"critical": 0, "high": 1, "medium": 2, "low": 3}
_BACKTICKS_RE = re.compile(r"`+")
_ITEMS_MARK = "\x00items\x00"


def source_hash(records: Iterable[Mapping[str, Any]], *extra: str) -> str:
    """``sha256:<hex>`` of the canonical JSON of ``records`` (sorted by id) and ``extra``
    strings (e.g. the template), for a rendered file's header."""
    ordered = sorted(records, key=lambda r: str(r.get("id", "")))
    # compact separators keep json on its C encoder: ~10x faster than the indented canonical form
    text = json.dumps(
        {"records": ordered, "extra": list(extra)},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )
    data = text.encode("utf-8", "surrogatepass")
    return "sha256:" + hashlib.sha256(data).hexdigest()


# --- one value --------------------------------------------------------------------------


def _line_ok(text: str) -> bool:
    """A one-line value (heading) that reads back as itself."""
    return (
        bool(text)
        and "\n" not in text
        and not has_unsafe(text)
        and text == text.strip(" \t")
        and json_string(text) is None
        and not MARKER_HINT_RE.search(text)
    )


def _heading(text: str, record_id: str) -> str:
    shown = text if _line_ok(text) else json_literal(text)
    return f"## {shown} <!-- id: {record_id} -->"


def _block_static_ok(text: str) -> bool:
    """Text that may go raw as far as characters and whitespace go; ``_plain`` or a trial
    parse decides the Markdown structure."""
    lines = text.split("\n")
    return (
        not has_unsafe(text)
        and bool(lines[0])
        and bool(lines[-1])
        and all(line == line.rstrip(" \t") for line in lines)
        and not (len(lines) == 1 and json_string(text) is not None)
    )


def _plain(text: str) -> bool:
    """Every line starts with a letter: no Markdown block structure can begin."""
    return all(not line or line[0].isalpha() for line in text.split("\n"))


def _fence(code: str) -> str:
    runs = [len(run) for run in _BACKTICKS_RE.findall(code)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return f"{fence}\n{code}\n{fence}" if code else f"{fence}\n{fence}"


def _example(code: str) -> str:
    lines = code.split("\n")
    raw = not has_unsafe(code) and all(
        line == line.rstrip(" \t")
        and not (HEADING_LIKE_RE.match(line) and MARKER_HINT_RE.search(line))
        for line in lines
    )
    return _fence(code) if raw else json_literal(code)


def _tags(tags: list[str]) -> str:
    text = ", ".join(tags)
    raw = (
        all(
            tag and tag == tag.strip() and not has_unsafe(tag) and not {",", "\n"} & set(tag)
            for tag in tags
        )
        and json_string_list(text) is None
    )
    return text if raw else json_literal(tags)


def _field(label: str, value: str) -> str:
    return f"- **{label}:** {value}".rstrip()


# --- one item ---------------------------------------------------------------------------


def _text(values: Mapping[str, Any], name: str, raw: Collection[str]) -> str:
    return str(values[name]) if name in raw else json_literal(values[name])


def _pattern_item(record: Mapping[str, Any], raw: Collection[str]) -> str:
    values = editable_fields(record, "patterns")
    parts = [_heading(values["name"], str(record["id"]))]
    if values["description"]:
        parts += ["", _text(values, "description", raw)]
    if values["example"]:
        parts += ["", "**Example:**", "", _example(values["example"])]
    parts += [
        "",
        _field("Tags", _tags(values["tags"])),
        _field("Usage", display_text(record, "usage") + " _(read-only)_"),
    ]
    return "\n".join(parts) + "\n"


def _mistake_item(record: Mapping[str, Any], raw: Collection[str]) -> str:
    values = editable_fields(record, "mistakes")
    parts = [_heading(values["title"], str(record["id"]))]
    if values["description"]:
        parts += ["", _text(values, "description", raw)]
    if values["correction"]:
        parts += ["", "**Correction:**", "", _text(values, "correction", raw)]
    parts += [
        "",
        _field("Severity", str(values["severity"])),
        _field("Tags", _tags(values["tags"])),
        _field("Occurrences", display_text(record, "occurrences") + " _(read-only)_"),
    ]
    return "\n".join(parts) + "\n"


_ITEM_RENDERERS = {"patterns": _pattern_item, "mistakes": _mistake_item}
_BLOCK_FIELDS = ("description", "correction")


def _reads_back(text: str, record: Mapping[str, Any], kind: Kind) -> bool:
    parsed = parse_view(text, kind)
    return (
        not parsed.errors
        and len(parsed.items) == 1
        and parsed.items[0].fields == editable_fields(record, kind)
    )


def render_item(record: Mapping[str, Any], kind: Kind) -> str:
    """One item. Texts go raw when they read back exactly (every line starting with a letter
    always does; others are checked by parsing the item), else as JSON strings."""
    texts = {name: str(record.get(name) or "") for name in _BLOCK_FIELDS}
    raw = {name for name, text in texts.items() if text and _block_static_ok(text)}
    plain = {name for name in raw if _plain(texts[name])}
    text = _ITEM_RENDERERS[kind](record, raw)
    if raw == plain or _reads_back(text, record, kind):
        return text
    return _ITEM_RENDERERS[kind](record, plain)


# --- whole view -------------------------------------------------------------------------


def _sort_key(record: Mapping[str, Any], kind: Kind) -> tuple[Any, ...]:
    if kind == "patterns":
        established = bool(record.get("established"))
        return (not established, -int(record.get("usage_count", 1)), str(record["id"]))
    rank = SEVERITY_RANK.get(str(record.get("severity")), len(SEVERITY_RANK))
    return (rank, -int(record.get("occurrences", 1)), str(record["id"]))


def frame(template: str, **values: str) -> str:
    """The template filled in, blank-line runs collapsed, ending in exactly one newline."""
    body = fill_template(normalize_newlines(template), **values)
    return re.sub(r"\n{3,}", "\n\n", body).strip("\n") + "\n"


def render_view(
    records: Iterable[Mapping[str, Any]], kind: Kind, template: str, *, source_hash: str
) -> str:
    live = [r for r in records if r.get("deleted_at") is None]
    live.sort(key=lambda r: _sort_key(r, kind))
    _check_items_last(template)
    items = "\n".join(render_item(r, kind) for r in live)
    body = fill_template(normalize_newlines(template), items=_ITEMS_MARK)
    head, _, _ = body.partition(_ITEMS_MARK)
    head = re.sub(r"\n{3,}", "\n\n", head).strip("\n")
    body = (head + "\n\n" + items).rstrip("\n") + "\n" if items else head + "\n"
    return header_line(VIEW_FILES[kind], source_hash, body) + "\n" + body


def _check_items_last(template: str) -> None:
    body = fill_template(normalize_newlines(template), items=_ITEMS_MARK)
    if body.count(_ITEMS_MARK) != 1 or body.partition(_ITEMS_MARK)[2].strip():
        raise ValueError("a view template must contain $items exactly once, at its end")


def render_patterns(records: list[dict[str, Any]], template: str, *, source_hash: str) -> str:
    """patterns.md: established patterns first, then by usage count, then id."""
    return render_view(records, "patterns", template, source_hash=source_hash)


def render_mistakes(records: list[dict[str, Any]], template: str, *, source_hash: str) -> str:
    """mistakes.md: by severity (critical first), then occurrences, then id."""
    return render_view(records, "mistakes", template, source_hash=source_hash)


# --- CLAUDE.md --------------------------------------------------------------------------

CLAUDE_SECTIONS = {
    "pinned": "Pinned",
    "taught": "Taught rules",
    "preferences": "Preferences",
    "mistakes": "Mistakes to avoid",
    "patterns": "Patterns to follow",
    "decisions": "Architecture and decisions",
}
DECISION_TYPES = ("architecture", "decision")
TITLE_LIMIT = 120
TEXT_LIMIT = 400
_TYPE_ORDER = {"mistake": 0, "pattern": 1}


def _label(record: Mapping[str, Any]) -> str:
    text = record.get("name") if record.get("type") == "pattern" else record.get("title")
    return inline(str(text or record.get("title") or record.get("id")), TITLE_LIMIT)


def _pieces(*pairs: tuple[str, Any]) -> str:
    """``**Label:** text`` pieces joined; the first label is left out."""
    out = []
    for number, (label, value) in enumerate(pairs):
        text = inline(str(value or ""), TEXT_LIMIT)
        if text:
            out.append(text if number == 0 else f"**{label}:** {text}")
    return " ".join(out)


def _entry(record: Mapping[str, Any]) -> str:
    kind = record.get("type")
    if kind == "pattern":
        head, text = f"- **{_label(record)}**", _pieces(("", record.get("description")))
    elif kind == "mistake":
        head = f"- **{_label(record)}** ({inline(str(record.get('severity')), 20)})"
        text = _pieces(("", record.get("description")), ("Instead", record.get("correction")))
    else:
        body = record.get("body") or {}
        what = record.get("learned") or body.get("learned") or body.get("what")
        head = f"- **{_label(record)}** ({inline(str(kind), 20)})"
        text = _pieces(("", what), ("Why", body.get("why")))
    return f"{head}: {text}" if text else head


def is_taught(record: Mapping[str, Any]) -> bool:
    """A person taught it (``core.is_taught``, the context packer's rule too)."""
    return taught(record.get("tags") or [], str(record.get("type")))


def _preference_entries(preferences: Mapping[str, Any]) -> list[str]:
    entries = []
    for name, section in sorted(preferences.items()):
        if not isinstance(section, Mapping) or not section:
            continue
        values = "; ".join(
            f"{key}: {_preference_value(value)}" for key, value in sorted(section.items())
        )
        title = inline(name.replace("_", " "), TITLE_LIMIT)
        entries.append(f"- **{title}**: {inline(values, TEXT_LIMIT)}")
    return entries


def _preference_value(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if isinstance(value, str | int | float):
        return str(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _claude_entries(
    records: Iterable[Mapping[str, Any]], preferences: Mapping[str, Any]
) -> list[tuple[str, str]]:
    """``(section, line)`` for everything CLAUDE.md may show, highest priority first."""
    live = [r for r in records if r.get("deleted_at") is None]
    pinned = sorted(
        (r for r in live if r.get("pinned")),
        key=lambda r: (_TYPE_ORDER.get(str(r.get("type")), 2), str(r["id"])),
    )
    taught = sorted(
        (r for r in live if not r.get("pinned") and is_taught(r)),
        key=lambda r: (_TYPE_ORDER.get(str(r.get("type")), 2), str(r["id"])),
    )
    rest = [r for r in live if not r.get("pinned") and not is_taught(r)]
    mistakes = sorted(
        (
            r
            for r in rest
            if r.get("type") == "mistake" and r.get("severity") in ("critical", "high")
        ),
        key=lambda r: _sort_key(r, "mistakes"),
    )
    patterns = sorted(
        (r for r in rest if r.get("type") == "pattern" and r.get("established")),
        key=lambda r: _sort_key(r, "patterns"),
    )
    decisions = sorted(
        (r for r in rest if r.get("type") in DECISION_TYPES),
        key=lambda r: (str(r.get("updated_at", "")), str(r["id"])),
        reverse=True,
    )
    return (
        [("pinned", _entry(r)) for r in pinned]
        + [("taught", _entry(r)) for r in taught]
        + [("preferences", e) for e in _preference_entries(preferences)]
        + [("mistakes", _entry(r)) for r in mistakes]
        + [("patterns", _entry(r)) for r in patterns]
        + [("decisions", _entry(r)) for r in decisions]
    )


def _claude_text(
    entries: list[tuple[str, str]],
    left_out: int,
    template: str,
    max_chars: int,
    source: str,
    header: bool,
) -> str:
    sections = {}
    for key, title in CLAUDE_SECTIONS.items():
        lines = [line for section, line in entries if section == key]
        sections[key] = f"## {title}\n\n" + "\n".join(lines) + "\n" if lines else ""
    noun = "entry was" if left_out == 1 else "entries were"
    sections["omitted"] = (
        f"_{left_out} more {noun} left out to stay within {max_chars:,} characters; see "
        "`.planning/patterns.md` and `.planning/mistakes.md`, or run `pmem context`._\n"
        if left_out
        else ""
    )
    body = frame(template, **sections)
    if not header:
        return body
    return header_line("CLAUDE.md", source, body, comment=False) + "\n" + body


def render_claude_md(
    records: list[dict[str, Any]],
    preferences: dict[str, Any],
    template: str,
    *,
    max_chars: int,
    source_hash: str,
    header: bool = True,
) -> str:
    """What an agent must know, at most ``max_chars`` characters: pinned items, what a person
    taught (``is_taught``: from the first time, not only once established), preferences, high
    and critical mistakes with their corrections, established patterns, architecture and
    decisions, in that priority. Lower-priority entries are dropped whole (and counted);
    every memory text goes through ``make_inert`` on one line. ``header=False`` leaves out the
    hash line (e.g. for a managed block)."""
    entries = _claude_entries(records, preferences)

    def build(kept: int) -> str:
        return _claude_text(
            entries[:kept], len(entries) - kept, template, max_chars, source_hash, header
        )

    low, high = 0, len(entries)
    if len(build(high)) <= max_chars:
        return build(high)
    if len(build(0)) > max_chars:
        raise ConfigError(
            f"CLAUDE.md limit of {max_chars:,} characters is smaller than its "
            f"empty frame ({len(build(0)):,})",
            json_path="render.claudeMdMaxChars",
        )
    while high - low > 1:  # build(low) fits, build(high) does not
        middle = (low + high) // 2
        low, high = (middle, high) if len(build(middle)) <= max_chars else (low, middle)
    return build(low)

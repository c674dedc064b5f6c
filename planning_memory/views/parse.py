"""Read patterns.md and mistakes.md back into record fields: the inverse of ``render``.

The grammar (docs/markdown.md): item headings ``## Title <!-- id: ... -->``, an optional text
below the heading (the description), labelled sections (``**Example:**``, ``**Correction:**``)
and one-line fields (``- **Tags:** a, b``). ``mdblocks.scan`` supplies the block structure, so
a heading inside a code block is not an item and blocks that would swallow the items below
them are errors. ``viewdiff.diff_view`` turns the result into record changes. Pure: text in,
values out; no file I/O.
"""

from __future__ import annotations

import itertools
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from planning_memory.core import ID_RE, SEVERITIES
from planning_memory.views.blocks import Blocks, scan
from planning_memory.views.fileformat import (
    DISPLAY_ONLY,
    FIELD_RE,
    HEADER_RE,
    HEADING_FIELD,
    HEADING_PREFIX_RE,
    LABELS,
    MARKER_HINT_RE,
    MARKER_RE,
    ONE_LINE,
    VIEW_FILES,
    Issue,
    Kind,
    conflict_marker_line,
    fill_template,
    json_string,
    json_string_list,
    normalize_newlines,
)

CONFLICT_MESSAGE = (
    "git conflict markers (<<<<<<< ... >>>>>>>) from a merge: a view is never imported with "
    "them; `pmem sync --prefer json` renders it again from the merged records"
)

# --- parsed values ----------------------------------------------------------------------


@dataclass(frozen=True)
class ParsedItem:
    """One item of a view: its id (None for a new item) and the editable fields found.

    ``fields`` holds every editable field the item states; a missing one-line field (Tags,
    Severity) is absent and listed in ``missing``. ``display`` maps a display-only label to
    ``(line, text)`` as written.
    """

    record_id: str | None
    line: int
    fields: dict[str, Any]
    display: dict[str, tuple[int, str]] = field(default_factory=dict)
    missing: tuple[str, ...] = ()


@dataclass(frozen=True)
class ParsedView:
    kind: Kind
    items: tuple[ParsedItem, ...]
    errors: tuple[Issue, ...]
    warnings: tuple[Issue, ...]
    header: tuple[str, str] | None
    seen_ids: frozenset[str]

    @property
    def ok(self) -> bool:
        return not self.errors


# --- items ------------------------------------------------------------------------------


@dataclass
class _Section:
    label: str | None
    value: str
    line: int  # 0-based line of the label (or of the heading for the leading text)
    body: list[int] = field(default_factory=list)


@dataclass
class _Item:
    kind: Kind
    line: int
    record_id: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    display: dict[str, tuple[int, str]] = field(default_factory=dict)
    errors: list[Issue] = field(default_factory=list)

    def error(self, message: str, line: int | None = None) -> None:
        self.errors.append(Issue(message, line or self.line, self.record_id))


def _heading(item: _Item, line: str) -> None:
    rest = HEADING_PREFIX_RE.sub("", line, count=1)
    marker = MARKER_RE.match(rest)
    text = rest
    if marker:
        text = marker["text"]
        if ID_RE.match(marker["id"]):
            item.record_id = marker["id"]
        else:
            item.error(f"malformed id marker {marker['id']!r}; keep the marker as rendered")
    text = text.strip(" \t")
    if not text:
        item.error("item without a title: write the title after '## '")
    elif json_string(text) is None and MARKER_HINT_RE.search(text):
        item.error(
            "malformed id marker; it must read <!-- id: pat_... --> at the end of the heading"
        )
    item.fields[HEADING_FIELD[item.kind]] = _decoded(item, text, item.line)


def _decoded(item: _Item, text: str, line: int) -> str:
    value = json_string(text)
    if value is None:
        return text
    if any(unicodedata.category(c) == "Cs" for c in value):
        item.error("JSON string holds half of a surrogate pair", line)
    return value


def _label(raw: str, kind: Kind) -> str | None:
    name = " ".join(raw.lower().split())
    return name if name in LABELS[kind] else None


def _sections(doc: Blocks, start: int, end: int, kind: Kind) -> list[_Section]:
    current = _Section(None, "", start - 1)
    sections = [current]
    for number in range(start, end):
        match = None if number in doc.code else FIELD_RE.match(doc.lines[number])
        label = _label(match["label"], kind) if match else None
        if match and label:
            current = _Section(label, match["value"], number)
            sections.append(current)
        else:
            current.body.append(number)
    return sections


def _trimmed(doc: Blocks, section: _Section) -> list[int]:
    numbers = [n for n in section.body if doc.lines[n]]
    return list(range(numbers[0], numbers[-1] + 1)) if numbers else []


def _text(doc: Blocks, item: _Item, section: _Section) -> str:
    numbers = _trimmed(doc, section)
    lines = [doc.lines[n] for n in numbers]
    if section.value:
        gap = [""] * (numbers[0] - section.line - 1) if numbers else []
        lines = [section.value, *gap, *lines]
    if not lines:
        return ""
    if len(lines) == 1:
        return _decoded(item, lines[0], section.line + 1)
    return "\n".join(lines)


def _example(doc: Blocks, item: _Item, section: _Section) -> str:
    numbers = _trimmed(doc, section)
    hint = "write the example as one fenced code block (```) below **Example:**"
    if section.value:
        if json_string(section.value) is None or numbers:
            item.error(hint, section.line + 1)
            return ""
        return _decoded(item, section.value, section.line + 1)
    if not numbers:
        return ""
    first, last = numbers[0], numbers[-1]
    if first == last and json_string(doc.lines[first]) is not None:
        return _decoded(item, doc.lines[first], first + 1)
    end, closed = doc.fences.get(first, (-1, False))
    if end - 1 != last or not closed:
        item.error(hint, first + 1)
        return ""
    indent = len(doc.lines[first]) - len(doc.lines[first].lstrip(" "))
    body = [doc.lines[n] for n in range(first + 1, last)]
    return "\n".join(_dedent(line, indent) for line in body)


def _dedent(line: str, indent: int) -> str:
    spaces = len(line) - len(line.lstrip(" "))
    return line[min(spaces, indent) :]


def _tags(value: str) -> list[str]:
    listed = json_string_list(value)
    if listed is not None:
        return sorted(set(listed))
    return sorted({t.strip() for t in value.split(",")} - {""})


def _one_line(doc: Blocks, item: _Item, section: _Section) -> None:
    label = section.label or ""
    if _trimmed(doc, section):
        item.error(
            f"unexpected text after the **{label.title()}:** line; a new item starts "
            "with '## Title'",
            _trimmed(doc, section)[0] + 1,
        )
    value = section.value.strip()
    if label in DISPLAY_ONLY[item.kind]:
        item.display[label] = (section.line + 1, value)
    elif label == "tags":
        item.fields["tags"] = _tags(value)
    elif value.lower() in SEVERITIES:
        item.fields["severity"] = value.lower()
    else:
        item.error(
            f"unknown severity {value!r}; use one of " + ", ".join(SEVERITIES), section.line + 1
        )


def _orphan_markers(doc: Blocks, item: _Item, start: int, end: int) -> None:
    for number in range(start, end):
        marker = MARKER_RE.match(doc.lines[number].strip(" "))
        if marker and not marker["text"] and number not in doc.code:
            item.error(
                "id marker on a line of its own; put it at the end of the '## ' "
                "heading it belongs to",
                number + 1,
            )


def _fill(doc: Blocks, item: _Item, sections: list[_Section]) -> None:
    seen: set[str] = set()
    lead = _text(doc, item, sections[0])
    for section in sections[1:]:
        label = section.label or ""
        if label in seen:
            item.error(f"**{label.title()}:** appears twice in one item", section.line + 1)
        seen.add(label)
        if label in ONE_LINE:
            _one_line(doc, item, section)
        elif label == "example":
            item.fields["example"] = _example(doc, item, section)
        else:
            item.fields[label] = _text(doc, item, section)
    if lead and item.fields.get("description"):
        item.error("two descriptions: text below the heading and a **Description:** section")
    item.fields.setdefault("description", lead)
    for name in ("example",) if item.kind == "patterns" else ("correction",):
        item.fields.setdefault(name, "")


def _parse_item(doc: Blocks, start: int, end: int, kind: Kind) -> _Item:
    item = _Item(kind, start + 1)
    _heading(item, doc.lines[start])
    _orphan_markers(doc, item, start + 1, end)
    _fill(doc, item, _sections(doc, start + 1, end, kind))
    return item


# --- whole view -------------------------------------------------------------------------


def _squeeze(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Lines without blank lines at either end and with runs of blank lines cut to one."""
    out: list[tuple[int, str]] = []
    for number, line in lines:
        if line or (out and out[-1][1]):
            out.append((number, line))
    while out and not out[-1][1]:
        out.pop()
    return out


def _preamble_warning(doc: Blocks, first: int, end: int, template: str) -> Issue | None:
    filled = fill_template(normalize_newlines(template), items="").split("\n")
    expected = [t for _, t in _squeeze([(0, t.rstrip(" \t")) for t in filled])]
    found = _squeeze([(n, doc.lines[n]) for n in range(first, end)])
    if [t for _, t in found] == expected:
        return None
    pairs = zip(found, expected, strict=False)
    where = next((n for (n, a), b in pairs if a != b), None)
    if where is None:
        where = found[len(expected)][0] if len(found) > len(expected) else end - 1
    return Issue(
        "the text above the first item was edited; it is not imported and the next "
        "render replaces it with the template",
        where + 1,
    )


def parse_view(text: str, kind: Kind, *, template: str | None = None) -> ParsedView:
    """Items, errors and warnings of a patterns.md (``kind="patterns"``) or mistakes.md.

    Structural errors (an unclosed fence, a swallowed heading, the wrong file) are reported
    alone: item boundaries cannot be trusted then. Give the view's ``template`` to be warned
    when the text above the first item was edited.
    """
    doc = scan(text)
    conflict = conflict_marker_line(text)
    if conflict is not None:
        doc.errors.insert(0, Issue(CONFLICT_MESSAGE, conflict))
    header = HEADER_RE.match(doc.lines[0])
    if header and header["view"] != VIEW_FILES[kind]:
        doc.errors.insert(
            0, Issue(f"this file's header says it is {header['view']}, not {VIEW_FILES[kind]}", 1)
        )
    bounds = [*doc.items, len(doc.lines)]
    errors: list[Issue] = []
    items, seen = _collect(doc, kind, bounds, errors)
    warnings = []
    if template is not None and any(doc.lines) and not doc.errors:
        issue = _preamble_warning(doc, 1 if header else 0, bounds[0], template)
        warnings.extend([issue] if issue else [])
    if doc.errors:
        items, errors = [], doc.errors
    return ParsedView(
        kind,
        tuple(items),
        tuple(errors),
        tuple(warnings),
        (header["source"], header["body"]) if header else None,
        frozenset(seen),
    )


def _collect(
    doc: Blocks, kind: Kind, bounds: list[int], errors: list[Issue]
) -> tuple[list[ParsedItem], set[str]]:
    items: list[ParsedItem] = []
    seen: set[str] = set()
    for start, end in itertools.pairwise(bounds):
        item = _parse_item(doc, start, end, kind)
        if item.record_id in seen:
            item.error(
                f"id {item.record_id} is used by two items; remove the marker from "
                "the copy to make it a new item"
            )
        if item.record_id:
            seen.add(item.record_id)
        errors.extend(item.errors)
        if not item.errors:
            missing = tuple(f for f in _one_line_fields(kind) if f not in item.fields)
            items.append(ParsedItem(item.record_id, item.line, item.fields, item.display, missing))
    return items, seen


def _one_line_fields(kind: Kind) -> tuple[str, ...]:
    return ("tags",) if kind == "patterns" else ("severity", "tags")


def parse_patterns(text: str, *, template: str | None = None) -> ParsedView:
    return parse_view(text, "patterns", template=template)


def parse_mistakes(text: str, *, template: str | None = None) -> ParsedView:
    return parse_view(text, "mistakes", template=template)

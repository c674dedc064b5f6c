"""Render records into patterns.md and mistakes.md, readable lists a person can edit.

Pure and deterministic to the byte: the same records (in any order) and template give the same
text. A view is its items, one per live record, each rendered on its own (``view_item``) and
put in the view's order (``assemble_view``), so a caller that kept the items of unchanged
records renders only the changed ones and gets the same bytes. Every view value is written so
that ``parse`` reads it back exactly: plain Markdown where it can be, a JSON string literal
where it cannot (docs/markdown.md). The source hash of a view is built from one digest per
record (``fileformat.source_hash``). No file I/O. CLAUDE.md is rendered by ``claude``.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Collection, Iterable, Mapping
from typing import Any, NamedTuple

from planning_memory.views.fileformat import (
    HEADER_RE,
    HEADING_LIKE_RE,
    MARKER_HINT_RE,
    VIEW_FILES,
    Kind,
    body_hash,
    display_text,
    editable_fields,
    fill_template,
    has_unsafe,
    hashed_header_line,
    json_literal,
    json_string,
    json_string_list,
    normalize_newlines,
    quiet_body_hash,
    section_digests,
    sections_hash,
)

SEVERITY_RANK = {"critical": 0, "high": 1, "medium": 2, "low": 3}
_BACKTICKS_RE = re.compile(r"`+")
_ITEMS_MARK = "\x00items\x00"
# (sort key, item text): one record's item in a view; keys are lists so a cached copy (JSON)
# sorts the same as a fresh one
Item = tuple[list[Any], str]
Sections = list[bytes] | None  # ``item_sections`` of a view's item texts, in their order


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
    from planning_memory.views.parse import parse_view  # markdown-it: only when needed

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


def sort_key(record: Mapping[str, Any], kind: Kind) -> list[Any]:
    """Where a record goes in a view: patterns established first, then by usage count (high
    first), then id; mistakes by severity (critical first), then occurrences, then id."""
    return list(_sort_key(record, kind))


def view_item(record: Mapping[str, Any], kind: Kind) -> Item:
    """A live record's item in a view, with its sort key."""
    return sort_key(record, kind), render_item(record, kind)


def frame(template: str, **values: str) -> str:
    """The template filled in, blank-line runs collapsed, ending in exactly one newline."""
    body = fill_template(normalize_newlines(template), **values)
    return re.sub(r"\n{3,}", "\n\n", body).strip("\n") + "\n"


def assemble_view(
    items: Iterable[Item], kind: Kind, template: str, *, source_hash: str, ordered: bool = False
) -> str:
    """The view of these items (in the order the records were read; a stable sort by key puts
    them in the view's order; ``ordered``: they are in it already): the same bytes whether
    each item is fresh or was kept."""
    ordered_items = list(items) if ordered else sorted(items, key=_first)
    texts = [item[1] for item in ordered_items]
    return assemble_texts(texts, kind, template, source_hash=source_hash).text


class Rendered(NamedTuple):
    """A view's text and its UTF-8 bytes, encoded once (a view may be megabytes)."""

    text: str
    data: bytes


def assemble_texts(
    texts: list[str], kind: Kind, template: str, *, source_hash: str, sections: Sections = None
) -> Rendered:
    """``assemble_view`` of the item texts ``texts``, in the view's order, with its bytes.
    ``sections``: ``item_sections`` of each text, when the caller keeps them: the body hash
    is then worked out from them and the last text's, not from the megabytes of the body."""
    _check_items_last(template)
    head = view_head(template)
    if not (texts and texts[-1].strip("\n")):  # no items, or only blank ones
        text = "\n".join(texts)
        body = (head + "\n\n" + text).rstrip("\n") + "\n" if text else head + "\n"
        return _with_header(body, kind, head, source_hash)
    last = texts[-1].rstrip("\n")  # an item ends with a line of text: strip only the last
    first = _head_sections(head)
    if sections is None or first is None:
        return _with_header(
            "\n".join([head + "\n", *texts[:-1], last + "\n"]), kind, head, source_hash
        )
    ends = (first, *sections[:-1], section_digests(last.encode("utf-8")))
    header = hashed_header_line(VIEW_FILES[kind], source_hash, sections_hash(b"".join(ends)))
    text = "\n".join([header, head + "\n", *texts[:-1], last + "\n"])  # one copy of the megabytes
    return Rendered(text, text.encode("utf-8"))


def _with_header(body: str, kind: Kind, head: str, source_hash: str) -> Rendered:
    """The view of ``body``, its header line hashing it whole."""
    data = body.encode("utf-8")
    # an item never holds editor noise (a value that would is written as a JSON literal)
    hashed = quiet_body_hash(data) if _quiet(head) else body_hash(body)
    header = hashed_header_line(VIEW_FILES[kind], source_hash, hashed)
    return Rendered(header + "\n" + body, header.encode("utf-8") + b"\n" + data)


def item_sections(text: str) -> bytes | None:
    """The section digests (``fileformat.section_digests``) ``text`` gives a view's body as an
    item other than the last, the same wherever it stands: an item starts a section (with its
    heading) and is followed by a newline. None for a text that does not start one."""
    if not text.startswith("## "):
        return None
    data = (text + "\n").encode("utf-8")
    return section_digests(data) if b"\n## " in data else hashlib.sha256(data).digest()


@functools.cache
def _head_sections(head: str) -> bytes | None:
    """The section digests of a view's ``head`` and the blank line after it, as its body
    starts; None when ``head`` holds editor noise or starts like a header line."""
    if not _quiet(head) or HEADER_RE.match(head.partition("\n")[0]):
        return None
    return section_digests((head + "\n\n").encode("utf-8"))


def _first(item: Item) -> list[Any]:
    return item[0]


@functools.cache
def _quiet(head: str) -> bool:
    """True when ``head`` (a template's text) holds no editor noise for ``body_hash``."""
    return body_hash(head) == body_hash(head, quiet=True)


def view_head(template: str) -> str:
    """The text of a view between its header line and its items: the template's."""
    body = fill_template(normalize_newlines(template), items=_ITEMS_MARK)
    head, _, _ = body.partition(_ITEMS_MARK)
    return re.sub(r"\n{3,}", "\n\n", head).strip("\n")


def render_view(
    records: Iterable[Mapping[str, Any]], kind: Kind, template: str, *, source_hash: str
) -> str:
    live = [view_item(r, kind) for r in records if r.get("deleted_at") is None]
    return assemble_view(live, kind, template, source_hash=source_hash)


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

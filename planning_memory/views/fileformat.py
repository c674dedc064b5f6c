"""The file format shared by the Markdown views: header line, hashes, JSON-string escape.

Also the item grammar's labels and line patterns, used by both render and parse. A rendered
view starts with one header line naming the view, the hash of the records it was
rendered from (``source-hash``) and the hash of its own body (``body-hash``); comparing them
tells "the JSON changed" from "the Markdown was edited by hand". A value Markdown cannot hold
exactly is written as a one-line JSON string literal with every invisible character escaped.
Pure: no file I/O.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from string import Template
from typing import Any, Literal

from planning_memory.core import compact_json, record_digest

Kind = Literal["patterns", "mistakes"]

VIEW_FILES: dict[Kind, str] = {"patterns": "patterns.md", "mistakes": "mistakes.md"}
HEADING_FIELD: dict[Kind, str] = {"patterns": "name", "mistakes": "title"}
HEADER_RE = re.compile(
    r"^(?:<!-- |> )?planning-memory view=(?P<view>\S+) source-hash=(?P<source>sha256:[0-9a-f]{64})"
    r" body-hash=(?P<body>sha256(?:-sections)?:[0-9a-f]{64})(?:\s.*)?$"
)
HASH_RE = re.compile(r"^sha256:[0-9a-f]{64}$")
SOURCE_HASH_VERSION = "planning-memory source-hash 3"
BODY_HASH = "sha256-sections"  # what ``body_hash`` writes; ``sha256`` in older headers
_SECTION = b"\n## "  # a section starts at the top of the body and at each line starting "## "

# Item grammar: labels per view, the field-line and heading patterns, the id marker.
LABELS: dict[Kind, tuple[str, ...]] = {
    "patterns": ("description", "example", "tags", "usage"),
    "mistakes": ("description", "correction", "severity", "tags", "occurrences"),
}
DISPLAY_ONLY: dict[Kind, tuple[str, ...]] = {"patterns": ("usage",), "mistakes": ("occurrences",)}
ONE_LINE = frozenset({"tags", "severity", "usage", "occurrences"})

FIELD_RE = re.compile(
    r"^ {0,3}(?:[-*+][ \t]+)?\*\*(?P<label>[A-Za-z][A-Za-z ]*?)(?::\*\*|\*\*:)[ \t]*(?P<value>.*)$"
)
HEADING_LIKE_RE = re.compile(r"^ {0,3}##(?:[ \t]|$)")
HEADING_PREFIX_RE = re.compile(r"^ {0,3}##[ \t]*")
MARKER_RE = re.compile(r"^(?P<text>.*?)[ \t]*<!--[ \t]*id:[ \t]*(?P<id>[^ \t>]*)[ \t]*-->$")
# What a heading may hold only inside its one id marker: a comment fragment or a record id.
# A hand-mangled marker (``<!- id: pat_… -->``, ``(id: pat_…)``) is an error, never a new item.
MARKER_HINT_RE = re.compile(r"(?i:<!-|-->|<--)|\b[a-z]{2,8}_[0-9A-HJKMNP-TV-Z]{26}\b")
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


@dataclass(frozen=True)
class Issue:
    """An error or warning about a view, with its 1-based line where known."""

    message: str
    line: int | None = None
    record_id: str | None = None

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line else self.message


# --- text rules ------------------------------------------------------------------


def normalize_newlines(text: str) -> str:
    """Drop one leading BOM; CRLF and lone CR become LF."""
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


_CONFLICT_LINE_RE = re.compile(r"^(<{7}|>{7})(?: |$)", re.MULTILINE)


def conflict_marker_line(text: str) -> int | None:
    """The 1-based line of the first git conflict marker when ``text`` holds a conflict hunk
    (a ``<<<<<<<`` line and a ``>>>>>>>`` line), else None."""
    marks = list(_CONFLICT_LINE_RE.finditer(text))
    if {m.group(1)[0] for m in marks} != {"<", ">"}:
        return None
    return text.count("\n", 0, marks[0].start()) + 1


def is_unsafe_char(char: str) -> bool:
    """Characters a view never holds raw: controls (but tab and newline), format/bidi
    characters, surrogates and line/paragraph separators."""
    return char not in "\t\n" and unicodedata.category(char) in _UNSAFE_CATEGORIES


def has_unsafe(text: str) -> bool:
    plain = text.replace("\n", "").replace("\t", "")
    return not plain.isprintable() and any(is_unsafe_char(c) for c in plain)


def json_string(text: str) -> str | None:
    """The string a JSON string literal spells, or None if ``text`` is not one."""
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def json_string_list(text: str) -> list[str] | None:
    """The strings of a JSON array of strings, or None if ``text`` is not one."""
    if not (text.startswith("[") and text.endswith("]")):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    return None


def fill_template(template: str, **values: str) -> str:
    """Substitute ``$name`` placeholders; an unknown placeholder is a ValueError."""
    try:
        return Template(template).substitute(values)
    except (KeyError, ValueError) as exc:
        raise ValueError(f"template placeholder error: {exc}") from None


# --- header and hashes ------------------------------------------------------------------


def digests_hash(digests: Iterable[tuple[str, str]], *extra: str) -> str:
    """``sha256:<hex>`` of ``(record id, record_digest)`` pairs (in any order) and ``extra``
    strings (the template): a rendered file's ``source-hash``. The pairs go in buckets by the
    first two characters of their digest (``bucket_of``: 256 buckets of hex digests, about
    even); a bucket's hash is the sha256 of its pairs' texts in order of id, then digest
    (``bucket_hash``), and the source hash the sha256 of the buckets' hashes in order of
    bucket (``buckets_hash``). So a cache that keeps the buckets hashes again only the few a
    change touched, not every pair of 10k records. Built from one digest per record, so a
    cache of the digests gives the same value as the records themselves."""
    buckets: dict[str, list[tuple[str, str]]] = {}
    for record_id, digest in digests:
        buckets.setdefault(bucket_of(digest), []).append((record_id, digest))
    hashes = {
        key: bucket_hash("".join([pair_text(i, d) for i, d in sorted(pairs)]))
        for key, pairs in buckets.items()
    }
    return buckets_hash(hashes, *extra)


def pair_text(record_id: str, digest: str) -> str:
    """What one record gives a source hash: its id, length-prefixed, and its digest."""
    return f"{len(record_id)}:{record_id}{digest}"


def bucket_of(digest: str) -> str:
    """The bucket of a pair with this record digest in a source hash."""
    return digest[:2]


def bucket_hash(pairs: str) -> str:
    """The hash of a source hash's bucket whose pairs' texts, in order, are ``pairs``."""
    return hashlib.sha256(pairs.encode("utf-8", "surrogatepass")).hexdigest()


def buckets_hash(hashes: Mapping[str, str], *extra: str) -> str:
    """``digests_hash`` from the hashes of its buckets (``bucket_of`` -> ``bucket_hash``)."""
    buckets = "".join([f"{len(key)}:{key}{hashes[key]}" for key in sorted(hashes)])
    texts = "".join(f"\n{len(text)}:{text}" for text in extra)
    data = f"{SOURCE_HASH_VERSION}\n{buckets}{texts}".encode("utf-8", "surrogatepass")
    return "sha256:" + hashlib.sha256(data).hexdigest()


def previous_source_hash(records: Iterable[Mapping[str, Any]], *extra: str) -> str:
    """The ``source-hash`` as version 2 recorded it: the sha256 of every pair's text, sorted,
    in one piece (a view edited by hand before is still "edited", not a conflict)."""
    pairs = sorted((str(r.get("id", "")), record_digest(r)) for r in records)
    texts = "".join(f"\n{len(text)}:{text}" for text in extra)
    joined = "".join([pair_text(i, d) for i, d in pairs])
    data = f"planning-memory source-hash 2\n{joined}{texts}".encode("utf-8", "surrogatepass")
    return "sha256:" + hashlib.sha256(data).hexdigest()


def source_hash(records: Iterable[Mapping[str, Any]], *extra: str) -> str:
    """The ``source-hash`` of a file rendered from ``records`` (in any order) and ``extra``."""
    return digests_hash(((str(r.get("id", "")), record_digest(r)) for r in records), *extra)


def legacy_source_hash(records: Iterable[Mapping[str, Any]], *extra: str) -> str:
    """The ``source-hash`` as version 1 recorded it (the canonical JSON of every record): a
    view edited by hand before is still "edited", not a conflict."""
    ordered = sorted(records, key=lambda r: str(r.get("id", "")))
    data = compact_json({"records": ordered, "extra": list(extra)})
    return "sha256:" + hashlib.sha256(data).hexdigest()


def header_hashes(text: str) -> tuple[str, str] | None:
    """``(source_hash, body_hash)`` recorded in a rendered file's first line, or None."""
    match = HEADER_RE.match(normalize_newlines(text).split("\n", 1)[0])
    return (match["source"], match["body"]) if match else None


def header_view(text: str) -> str | None:
    """The file name recorded in the header (``patterns.md``, ``CLAUDE.md``...), or None."""
    match = HEADER_RE.match(normalize_newlines(text).split("\n", 1)[0])
    return match["view"] if match else None


def body_hash(text: str, *, quiet: bool = False) -> str:
    """The ``body-hash`` of the text below the header line, ignoring editor noise: a BOM,
    CRLF, trailing spaces and tabs on a line, and blank lines at the end. By the definition
    the header line names when ``text`` has one (``sha256:`` in a file rendered before
    ``sha256-sections:``), so a file is checked against its own header; else the current
    one (``hash_body``). ``quiet``: the caller vouches that ``text`` holds no such noise but
    the blank lines at its end (a render)."""
    if quiet or not _noisy(text):  # what a render writes: only blank lines at the end to ignore
        return quiet_body_hash(text.encode("utf-8", "surrogatepass"))
    lines = normalize_newlines(text).split("\n")
    match = HEADER_RE.match(lines[0]) if lines else None
    if match:
        lines = lines[1:]
    lines = [line.rstrip(" \t") for line in lines]
    while lines and not lines[-1]:
        lines.pop()
    data = "\n".join(lines).encode("utf-8", "surrogatepass")
    return hash_body(data, _scheme(match))


def quiet_body_hash(data: bytes) -> str:
    """``body_hash(text, quiet=True)`` of the UTF-8 bytes ``data`` of ``text``: the bytes are
    sliced, not copied (views are megabytes)."""
    cut = data.find(b"\n")
    first = data if cut < 0 else data[:cut]
    match = HEADER_RE.match(first.decode("utf-8", "surrogatepass"))
    start = (len(data) if cut < 0 else cut + 1) if match else 0
    end = len(data)
    while end > start and data[end - 1] == 0x0A:
        end -= 1
    return hash_body(data, _scheme(match), start, end)


def _scheme(header: re.Match[str] | None) -> str:
    """The body hash a header line names (the current one without a header)."""
    return header["body"].partition(":")[0] if header else BODY_HASH


def hash_body(data: bytes, scheme: str = BODY_HASH, start: int = 0, end: int = -1) -> str:
    """``<scheme>:<hex>`` of the body ``data[start:end]`` (noise already removed). The
    current scheme, ``sha256-sections``: the body cut into sections, each starting at its top
    or at a line starting with ``## `` (an item's heading), is the sha256 of the sha256
    digests of its sections in order (``sections_hash``); so a render whose items are kept
    with their digests is hashed without hashing its megabytes again. ``sha256``: the sha256
    of the body, as older headers recorded it."""
    end = len(data) if end < 0 else end
    if scheme == "sha256":
        return "sha256:" + hashlib.sha256(memoryview(data)[start:end]).hexdigest()
    return sections_hash(section_digests(data, start, end))


def section_digests(data: bytes, start: int = 0, end: int = -1) -> bytes:
    """The sha256 digests of the sections of ``data[start:end]`` (see ``hash_body``), joined:
    those of a text that starts a section and ends with a newline are the same within any
    body it is part of."""
    end = len(data) if end < 0 else end
    view, digests, at = memoryview(data), [], start
    while at < end:
        cut = data.find(_SECTION, at, end)
        cut = end if cut < 0 else cut + 1
        digests.append(hashlib.sha256(view[at:cut]).digest())
        at = cut
    return b"".join(digests)


def sections_hash(digests: bytes) -> str:
    """The ``sha256-sections`` body hash of a body whose sections' digests are ``digests``."""
    return f"{BODY_HASH}:" + hashlib.sha256(digests).hexdigest()


def _noisy(text: str) -> bool:
    """A BOM, a CR or trailing spaces or tabs anywhere (``body_hash`` must look at lines)."""
    return (
        "\r" in text
        or text.startswith("\ufeff")
        or " \n" in text
        or "\t\n" in text
        or text.endswith((" ", "\t"))
    )


def header_line(
    view: str, source_hash: str, body: str, *, comment: bool = True, quiet: bool = False
) -> str:
    """The first line of a rendered file: an HTML comment for patterns.md / mistakes.md, a
    visible quote line (``comment=False``) for CLAUDE.md, where comments are not allowed.
    ``quiet``: as for ``body_hash``."""
    return hashed_header_line(view, source_hash, body_hash(body, quiet=quiet), comment=comment)


def hashed_header_line(view: str, source_hash: str, hashed: str, *, comment: bool = True) -> str:
    """``header_line`` of a body whose ``body_hash`` is ``hashed``."""
    if not HASH_RE.match(source_hash):
        raise ValueError(f"source_hash must look like sha256:<64 hex>, got {source_hash!r}")
    text = f"planning-memory view={view} source-hash={source_hash} body-hash={hashed}"
    if comment:
        return f"<!-- {text} -->"
    return f"> {text} (generated: edit the memory, not this file)"


def json_literal(value: Any) -> str:
    """JSON text of ``value`` on one line, with every control, format, bidi or separator
    character written as a visible ``\\uXXXX`` escape."""
    text = json.dumps(value, ensure_ascii=False)
    if not has_unsafe(text):
        return text
    return "".join(_escape(c) if is_unsafe_char(c) else c for c in text)


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


EDITABLE: dict[Kind, tuple[str, ...]] = {
    "patterns": ("name", "description", "example", "tags"),
    "mistakes": ("title", "description", "correction", "severity", "tags"),
}


def editable_fields(record: Mapping[str, Any], kind: Kind) -> dict[str, Any]:
    """The fields a person edits in the view, in the form the parser returns them."""
    values = {name: record.get(name, "") for name in EDITABLE[kind]}
    values["tags"] = sorted(set(record.get("tags") or []))
    return values


def display_text(record: Mapping[str, Any], label: str) -> str:
    """The text rendered after a display-only label (``usage`` or ``occurrences``)."""
    if label == "usage":
        count = int(record.get("usage_count", 1))
        text = f"{count} use" + ("" if count == 1 else "s")
        return text + (", established" if record.get("established") else "")
    count = int(record.get("occurrences", 1))
    last = record.get("last_occurrence")
    return f"{count}, last {last}" if last else str(count)

"""Documents as rows of the index's ``docs`` table, and back: the row codec, no SQL run here.

``values`` turns a ``Doc`` into the columns ``Index`` inserts (with the split identifiers of
its ``terms`` column); ``row`` turns a selected row back into a ``Row``; ``varints`` decodes
FTS5's packed counts. A document's ``meta`` is stored without repeating its body: a field that
is a line of the body (or that line cut, ending in "…") is kept as the line's number
(``_stored_meta``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from planning_memory.core import codec
from planning_memory.search.documents import Doc

COLUMNS = (
    "key, source, type, scope, tags, title, body, path, ref_id, session_id, created_at, "
    "updated_at, pinned, severity, meta"
)

_CAMEL_RE = re.compile(r"\b[A-Za-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+\b")
_CAMEL_HINT_RE = re.compile(r"[a-z0-9][A-Z]")
_CAMEL_SPLIT_RE = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def split_identifiers(text: str) -> str:
    """The words of every camelCase / PascalCase identifier in ``text``, space-separated."""
    seen: dict[str, None] = {}
    if not _CAMEL_HINT_RE.search(text):
        return ""
    for ident in _CAMEL_RE.findall(text):
        for word in _CAMEL_SPLIT_RE.findall(ident):
            seen.setdefault(word.lower(), None)
    return " ".join(seen)


@dataclass(frozen=True)
class Row:
    """A document read back from the index, with its BM25 value, access count and length in
    tokens (all columns; 0 when not read)."""

    doc: Doc
    bm25: float
    access_count: int
    group: str
    length: int = 0
    terms: str = ""  # the split identifiers of the ``terms`` column (read by ``match`` only)


def doc_values(doc: Doc) -> tuple[Any, ...]:
    tags = f" {' '.join(doc.tags)} " if doc.tags else ""
    terms = split_identifiers(f"{doc.title}\n{doc.path}\n{doc.body}")
    return (
        terms,
        doc.key,
        doc.source,
        doc.type,
        doc.scope,
        tags,
        doc.title,
        doc.body,
        doc.path,
        doc.ref_id,
        doc.session_id,
        doc.created_at,
        doc.updated_at,
        int(doc.pinned),
        doc.severity,
        _stored_meta(doc.meta, doc.body),
    )


_LINES = "~"  # the stored meta's key for the fields kept as lines of the body
_CUT = "…"


def _stored_meta(meta: Mapping[str, Any], body: str) -> str:
    """``meta`` as JSON, each string field equal to a line of ``body`` (or to that line cut,
    ending in "…") kept under ``_LINES`` as the line's number (with the cut's length)."""
    kept = dict(meta)
    if body and _LINES not in kept and any(isinstance(v, str) and v for v in kept.values()):
        lines = body.split("\n")
        first: dict[str, int] = {}
        for number, line in enumerate(lines):
            first.setdefault(line, number)
        refs: dict[str, int | list[int]] = {}
        for key, value in meta.items():
            if not isinstance(value, str) or not value:
                continue
            if value in first:
                refs[key] = first[value]
            elif value.endswith(_CUT):
                head = value[: -len(_CUT)]
                found = next((n for n, line in enumerate(lines) if line.startswith(head)), -1)
                if found >= 0:
                    refs[key] = [found, len(head)]
        for key in refs:
            del kept[key]
        if refs:
            kept[_LINES] = refs
    return json.dumps(kept, sort_keys=True, ensure_ascii=False)


def _read_meta(stored: str, body: str) -> dict[str, Any]:
    """The meta ``_stored_meta`` stored, its fields taken from ``body`` again."""
    meta: dict[str, Any] = codec.loads_lenient(stored)
    refs = meta.pop(_LINES, None)
    if refs:
        lines = body.split("\n")
        for key, ref in refs.items():
            meta[key] = lines[ref] if isinstance(ref, int) else lines[ref[0]][: ref[1]] + _CUT
    return meta


def varints(blob: bytes) -> list[int]:
    """The SQLite varints packed in ``blob`` (FTS5's totals record and document sizes): 7 bits
    a byte while the high bit is set, a ninth byte counting all 8."""
    out: list[int] = []
    value = length = 0
    for byte in blob:
        if length == 8:
            out.append(value << 8 | byte)
            value = length = 0
            continue
        value = value << 7 | byte & 0x7F
        length += 1
        if not byte & 0x80:
            out.append(value)
            value = length = 0
    return out


def select_columns() -> str:
    cols = ", ".join(f"d.{c.strip()}" for c in COLUMNS.split(","))
    return f"{cols}, d.grp, coalesce(a.count, 0)"


def read_row(r: Sequence[Any], length: int = 0, terms: str = "") -> Row:
    doc = Doc(
        key=r[0],
        source=r[1],
        type=r[2],
        scope=r[3],
        tags=tuple(r[4].split()),
        title=r[5],
        body=r[6],
        path=r[7],
        ref_id=r[8],
        session_id=r[9],
        created_at=r[10],
        updated_at=r[11],
        pinned=bool(r[12]),
        severity=int(r[13]),
        meta=_read_meta(r[14], r[6]),
    )
    return Row(
        doc=doc,
        bm25=float(r[17]),
        access_count=int(r[16]),
        group=str(r[15]),
        length=length,
        terms=terms,
    )

"""What the search index indexes: each memory source turned into ``Doc`` values.

One small adapter per source reads that source's files (long-term records, session files,
entity shards; the repository's code and Markdown are in ``codebase``) and yields documents;
the index stores and searches them. Reading goes through ``Store`` (never writing).
The entity adapter is deliberately tolerant: it accepts a shard that maps names to entities, a
list of entities, or an object grouping them under ``files`` / ``functions`` / ``components``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from planning_memory.core import Layout, codec
from planning_memory.errors import PlanningMemoryError
from planning_memory.longterm import load_checked
from planning_memory.store import Store

SOURCES = ("record", "entity", "code", "doc", "message", "decision", "session")
SEVERITY_RANK = {"low": 0, "medium": 1, "high": 2, "critical": 3}
MAX_INDEXED_CHARS = 20_000  # per document; the rest of a long text is not searchable
META_CHARS = 300  # display fields kept with a document (the packer shows at most this)


@dataclass(frozen=True)
class Doc:
    """One searchable document; ``key`` is unique across the index."""

    key: str
    source: str
    type: str
    title: str
    body: str
    path: str = ""
    ref_id: str = ""
    session_id: str = ""
    scope: str = "project"
    tags: tuple[str, ...] = ()
    created_at: str = ""
    updated_at: str = ""
    pinned: bool = False
    severity: int = -1
    meta: Mapping[str, Any] = field(default_factory=dict)


def content_hash(docs: Iterable[Doc]) -> str:
    """A digest of the documents, to skip re-indexing what did not change."""
    h = hashlib.sha1(usedforsecurity=False)
    for doc in docs:
        h.update(repr(_doc_tuple(doc)).encode())
    return h.hexdigest()


def _doc_tuple(doc: Doc) -> list[Any]:
    return [
        doc.key,
        doc.source,
        doc.type,
        doc.title,
        doc.body,
        doc.path,
        doc.ref_id,
        doc.session_id,
        doc.scope,
        list(doc.tags),
        doc.created_at,
        doc.updated_at,
        doc.pinned,
        doc.severity,
        dict(doc.meta),
    ]


def _text(*parts: Any) -> str:
    out = [p.strip() for p in parts if isinstance(p, str) and p.strip()]
    return "\n".join(out)[:MAX_INDEXED_CHARS]


def mtime_stamp(mtime: float) -> str:
    return datetime.fromtimestamp(mtime, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- long-term records --------------------------------------------------------------------------
RECORD_META = (
    "name",
    "description",
    "correction",
    "severity",
    "occurrences",
    "usage_count",
    "established",
    "learned",
    "topic_key",
    "needs_review",
    "confidence",
    "project",
)


def _short(value: Any, limit: int = META_CHARS) -> Any:
    """``value`` with a long string cut (display fields only; the body keeps the full text)."""
    if isinstance(value, str) and len(value) > limit:
        return value[: limit - 1] + "…"
    return value


def record_doc(record: Mapping[str, Any]) -> Doc | None:
    """The document of a long-term record; None for a soft-deleted or shapeless one."""
    rid, rtype = record.get("id"), record.get("type")
    if not isinstance(rid, str) or not isinstance(rtype, str) or record.get("deleted_at"):
        return None
    raw_body = record.get("body")
    body: Mapping[str, Any] = raw_body if isinstance(raw_body, Mapping) else {}
    anchors = [
        f"{a.get('path', '')} {a.get('symbol') or ''}"
        for a in record.get("anchors") or []
        if isinstance(a, Mapping)
    ]
    text = _text(
        record.get("name"),
        record.get("description"),
        record.get("correction"),
        record.get("example"),
        record.get("trigger"),
        record.get("original"),
        record.get("learned"),
        *(body.get(k) for k in ("what", "why", "where", "learned")),
        record.get("topic_key"),
        *anchors,
    )
    tags = tuple(t for t in record.get("tags") or [] if isinstance(t, str))
    first_anchor = anchors[0].split(" ")[0] if anchors else ""
    return Doc(
        key=f"record:{rid}",
        source="record",
        type=rtype,
        title=str(record.get("title") or record.get("name") or rid),
        body=text,
        path=first_anchor,
        ref_id=rid,
        scope=str(record.get("scope") or "project"),
        tags=tags,
        created_at=str(record.get("created_at") or ""),
        updated_at=str(record.get("updated_at") or record.get("created_at") or ""),
        pinned=bool(record.get("pinned")),
        severity=SEVERITY_RANK.get(str(record.get("severity")), -1),
        meta={k: _short(record[k]) for k in RECORD_META if record.get(k) not in (None, "")},
    )


def read_record_file(store: Store, path: Path) -> list[Doc]:
    """Adapter: the documents of one record file (none if deleted, or broken: then
    ``store.skip_broken`` is told)."""
    loaded = load_checked(store, path)
    value = loaded.value if loaded is not None else None
    doc = record_doc(value) if isinstance(value, Mapping) else None
    return [doc] if doc else []


# -- sessions -----------------------------------------------------------------------------------
def session_files(layout: Layout, store: Store) -> list[Path]:
    return [p for p in store.list_json(layout.short_term) if p.name.startswith("session-")]


def read_archive(store: Store, path: Path) -> list[Doc]:
    """Adapter: the message documents of one archive chunk (``{"messages": [...]}``)."""
    try:
        value = codec.loads(store.read_bytes(path), path=str(path))
    except PlanningMemoryError:
        return []
    if not isinstance(value, Mapping):
        return []
    sid = path.name.split(".", 1)[0]
    messages = value.get("messages") if isinstance(value.get("messages"), list) else []
    return [d for d in session_docs({"id": sid, "messages": messages}) if d.source == "message"]


def read_session(store: Store, path: Path) -> dict[str, Any] | None:
    """Adapter: a session file's JSON object, or None when unreadable."""
    try:
        value = store.read_json(path)  # bytes read before decode without the checks again
    except PlanningMemoryError:
        return None
    return value if isinstance(value, dict) and isinstance(value.get("id"), str) else None


def session_docs(session: Mapping[str, Any]) -> list[Doc]:
    """Documents of a session: its messages, decisions and summaries."""
    sid = str(session.get("id"))
    docs: list[Doc] = []
    for msg in session.get("messages") or []:
        if not isinstance(msg, Mapping) or not isinstance(msg.get("id"), str):
            continue
        content = str(msg.get("content") or "")
        at = str(msg.get("at") or "")
        role = str(msg.get("role") or "user")
        docs.append(
            Doc(
                key=f"message:{msg['id']}",
                source="message",
                type=role,
                title=content.splitlines()[0][:120] if content.strip() else role,
                body=_text(content),
                ref_id=msg["id"],
                session_id=sid,
                created_at=at,
                updated_at=at,
                meta={"role": role},
            )
        )
    for dec in session.get("decisions") or []:
        if not isinstance(dec, Mapping) or not isinstance(dec.get("id"), str):
            continue
        at = str(dec.get("decided_at") or "")
        alternatives = [a for a in dec.get("alternatives") or [] if isinstance(a, str)]
        docs.append(
            Doc(
                key=f"decision:{dec['id']}",
                source="decision",
                type="decision",
                title=str(dec.get("question") or dec.get("decision") or dec["id"])[:200],
                body=_text(dec.get("decision"), dec.get("reasoning"), " ".join(alternatives)),
                ref_id=dec["id"],
                session_id=sid,
                created_at=at,
                updated_at=at,
                meta={
                    "decision": dec.get("decision") or "",
                    "reasoning": dec.get("reasoning") or "",
                },
            )
        )
    summary = _session_summary_text(session)
    if summary:
        at = str(session.get("updated_at") or session.get("started_at") or "")
        docs.append(
            Doc(
                key=f"session:{sid}",
                source="session",
                type="summary",
                title=str(session.get("goal") or f"session {sid}")[:200],
                body=summary,
                ref_id=sid,
                session_id=sid,
                created_at=str(session.get("started_at") or at),
                updated_at=at,
            )
        )
    return docs


def _session_summary_text(session: Mapping[str, Any]) -> str:
    rolling = session.get("rolling_summary")
    rolling = rolling if isinstance(rolling, Mapping) else {}
    end = session.get("end_summary")
    end = end if isinstance(end, Mapping) else {}
    lists = [
        " ".join(x for x in value if isinstance(x, str))
        for value in (
            rolling.get("key_facts"),
            *(end.get(k) for k in ("instructions", "discoveries", "accomplished", "next_steps")),
        )
        if isinstance(value, list)
    ]
    return _text(rolling.get("summary"), end.get("goal"), *lists)


# -- entities -----------------------------------------------------------------------------------
ENTITY_KINDS = {"files": "file", "functions": "function", "components": "component"}
_ENTITY_TEXT_FIELDS = (
    "purpose",
    "summary",
    "docstring",
    "description",
    "signature",
    "language",
    "exports",
    "imports",
    "dependencies",
    "calls",
    "called_by",
    "calledBy",
    "props",
    "state",
    "hooks",
    "children",
    "notes",
    "components",
    "services",
    "files",
    "entry",
    "database",
    "functions",
    "classes",
    "models",
    "packages",
    "side_effects",
    "depends_on",
    "paths",
    "type",
)


def read_entity_file(layout: Layout, store: Store, path: Path) -> list[Doc]:
    """Adapter: the entity documents of one shard (tolerant of the shard's exact shape)."""
    try:
        value = codec.loads(store.read_bytes(path), path=str(path))
    except PlanningMemoryError:
        return []
    rel = path.relative_to(layout.entity).as_posix()
    top = rel.split("/", 1)[0]
    kind = "area" if path.name == "relationships.json" else ENTITY_KINDS.get(top, "")
    return [
        doc
        for name, item, item_kind in _entity_items(value, kind)
        if (doc := entity_doc(name, item, item_kind or "file")) is not None
    ]


def _entity_items(value: Any, kind: str, depth: int = 0) -> Iterator[tuple[str, Any, str]]:
    if depth > 3:
        return
    if isinstance(value, list):
        for item in value:
            if isinstance(item, Mapping):
                yield _entity_name(item, ""), item, kind or str(item.get("type") or "")
        return
    if not isinstance(value, Mapping):
        return
    groups = (*ENTITY_KINDS.items(), ("entities", kind), ("areas", "area"))
    grouped = [(k, sub) for k, sub in groups if isinstance(value.get(k), (Mapping, list))]
    if grouped:  # the scanner's shard: {"files": {...}, "functions": {...}, ...}
        for key, sub_kind in grouped:
            yield from _entity_items(value[key], sub_kind, depth + 1)
        return
    if _entity_name(value, ""):
        yield _entity_name(value, ""), value, kind
        return
    for key, item in value.items():
        if isinstance(item, Mapping) and not str(key).startswith("_"):
            yield _entity_name(item, str(key)), item, kind


def _entity_name(item: Mapping[str, Any], default: str) -> str:
    for key in ("qualified_name", "qualname", "path", "name"):
        if isinstance(item.get(key), str) and item[key]:
            return str(item[key])
    return default


def entity_doc(name: str, item: Mapping[str, Any], kind: str) -> Doc | None:
    """The document of one entity (file, function, component or area)."""
    if not name:
        return None
    parts: list[str] = [name.split("::", 1)[1]] if "::" in name else []
    for key in _ENTITY_TEXT_FIELDS:
        value = item.get(key)
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            parts.append(" ".join(_flat(v) for v in value))
        elif isinstance(value, Mapping):
            parts.append(" ".join(f"{k} {_flat(v)}" for k, v in value.items()))
    path = str(item.get("path") or item.get("file") or (name if kind == "file" else ""))
    if not path and "::" in name:  # the scanner keys functions as "<path>::<qualified name>"
        path = name.split("::", 1)[0]
    purpose = next((str(item[k]) for k in ("purpose", "summary", "docstring") if item.get(k)), "")
    meta = {"purpose": purpose[:500], "signature": str(item.get("signature") or "")[:300]}
    modified = item.get("last_modified") or item.get("lastModified") or ""
    return Doc(
        key=f"entity:{kind}:{name}",
        source="entity",
        type=kind,
        title=name,
        body=_text(*parts),
        path=path,
        created_at=str(modified),
        updated_at=str(modified),
        meta={k: v for k, v in meta.items() if v},
    )


def _flat(value: Any) -> str:
    if isinstance(value, Mapping):
        return " ".join(f"{k} {_flat(v)}" for k, v in value.items())
    if isinstance(value, list):
        return " ".join(_flat(v) for v in value)
    return "" if value is None else str(value)

"""The context packer: what an agent should know before a task, within a token budget.

``build_context`` gathers candidate items from the index and the current session, orders them
by importance, and keeps whole items while the rendered text stays within the budget:

0. temporal context (date, time, zone, inactivity notice);
1. pinned records;
2. critical mistakes, high-severity mistakes that match the task, files named by the task,
   the session summary and current task;
3. the 5 best matching records (patterns, mistakes, learnings), the 5 newest messages of the
   session window and its 3 newest decisions;
4. further matching records, the 5 best relevant files (entities, code), the rest of the
   window and decisions;
5. related content (docs, other sessions), further files, and up to 10 high-severity mistakes
   that do not match the task.

Tokens are estimated as ``ceil(characters / 4)`` of the rendered text (``chunks.
estimate_tokens``). An item is either in the output whole or not at all: when one does not fit,
it is skipped and smaller, less important items may still fit. Each item carries the reason it
was included. Formats: ``md``, ``xml`` (the seeds' tags: ``<memory_context>``,
``<conversation_context>``, ``<temporal_context>``), ``json``, and ``agent`` (seed 000's
"Integración con Agentes" layout, used by ``prepare_agent_context``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import Any

from planning_memory import context_render, indexer, search, sources, temporal
from planning_memory.chunks import CHARS_PER_TOKEN, estimate_tokens
from planning_memory.errors import InputError
from planning_memory.index import Filters, Index, Row
from planning_memory.layout import Layout
from planning_memory.model import effective_config, parse_timestamp, timestamp
from planning_memory.store import Store

DEFAULT_BUDGET = 1500
MIN_BUDGET = 100
MAX_BUDGET = 20_000
FORMATS = ("md", "xml", "json", "agent")
SEARCH_LIMIT = 25
RELATED_THRESHOLD = 0.1
TEXT_CAP = 300  # characters of one item's text (a message, a description)
SESSION_SCAN = 20  # newest session files looked at to find the current one
TOP_MATCHES = 5  # matching records (and files) that rank with the newest messages
TOP_MESSAGES = 5  # newest session messages in the same tier as the best matches
MAX_SEVERE = 100  # high/critical mistakes considered (the most recently updated)
MAX_UNMATCHED_SEVERE = 10  # high-severity mistakes shown without matching the task


@dataclass(frozen=True)
class Task:
    """What the agent is about to do: a description, tags (the seed's ``context``), files."""

    description: str
    context: tuple[str, ...] = ()
    files: tuple[str, ...] = ()

    @classmethod
    def of(cls, task: str | Mapping[str, Any] | Task) -> Task:
        if isinstance(task, Task):
            return task
        if isinstance(task, str):
            return cls(task)
        return cls(
            str(task.get("description") or task.get("task") or ""),
            tuple(str(t) for t in task.get("context") or task.get("tags") or ()),
            tuple(str(f) for f in task.get("files") or ()),
        )


@dataclass(frozen=True)
class Item:
    """One entry of the context: its section, id, display text and why it is included."""

    section: str  # patterns | mistakes | files | related | session | temporal
    id: str
    text: str
    reason: str
    tier: int = 3
    order: float = 0.0  # within a tier, lower first
    key: str = ""  # index key, for access counts
    data: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, "reason": self.reason, **self.data}


@dataclass(frozen=True)
class ContextPack:
    """The packed context: the text and what it holds."""

    text: str
    format: str
    budget: int
    tokens: int
    items: tuple[Item, ...]
    dropped: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "budget": self.budget,
            "tokens": self.tokens,
            "dropped": self.dropped,
            "items": [dict(i.as_dict(), section=i.section) for i in self.items],
            "text": self.text,
        }


def check_budget(budget: int) -> int:
    if not isinstance(budget, int) or not MIN_BUDGET <= budget <= MAX_BUDGET:
        raise InputError(
            f"budget must be an integer from {MIN_BUDGET} to {MAX_BUDGET} tokens, got {budget!r}",
            hint=f"the default is {DEFAULT_BUDGET}",
        )
    return budget


def _cap(text: str, limit: int = TEXT_CAP) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


# -- items from index rows ----------------------------------------------------------------------
def _record_item(row: Row, tier: int, order: float, reason: str) -> Item:
    d, meta = row.doc, row.doc.meta
    if d.type == "pattern":
        name = str(meta.get("name") or d.title)
        desc = str(meta.get("description") or d.body)
        data = {"name": name, "description": _cap(desc), "established": meta.get("established")}
        return Item("patterns", d.ref_id, f"{name}: {_cap(desc)}", reason, tier, order, d.key, data)
    if d.type == "mistake":
        desc = str(meta.get("description") or d.title)
        corr = str(meta.get("correction") or "")
        sev = str(meta.get("severity") or "medium")
        text = f"[{sev}] {_cap(desc)}" + (f" → {_cap(corr)}" if corr else "")
        data = {"description": _cap(desc), "correction": _cap(corr), "severity": sev}
        return Item("mistakes", d.ref_id, text, reason, tier, order, d.key, data)
    body = str(meta.get("learned") or d.body)
    text = f"{d.type}: {d.title}" + (f" — {_cap(body, 200)}" if body and body != d.title else "")
    return Item("related", d.ref_id, text, reason, tier, order, d.key, {"source": d.type})


def _hit_item(hit: search.Hit, tier: int, order: float) -> Item | None:
    if hit.source == "record":
        row = Row(_hit_doc(hit), hit.bm25, hit.access_count, "")
        return _record_item(row, tier, order, hit.reason)
    if hit.source in ("entity", "code"):
        purpose = str(hit.meta.get("purpose") or "")
        where = hit.path or hit.title
        if hit.source == "entity" and hit.type != "file":
            label = f"{hit.type} {hit.title}" + (f" ({hit.path})" if hit.path else "")
        else:
            label = where
        lines = ""
        if hit.source == "code":
            lines = f" lines {hit.meta.get('start_line')}-{hit.meta.get('end_line')}"
        text = f"{label}{lines}: {_cap(purpose or hit.snippet, 200)}"
        data = {"path": where, "kind": hit.type, "purpose": _cap(purpose or hit.snippet, 200)}
        return Item("files", where, text, hit.reason, tier, order, hit.key, data)
    kind = {"doc": hit.path or "doc", "message": f"message ({hit.type})"}.get(hit.source, "")
    text = f"{kind or hit.source}: {_cap(hit.title, 120)} — {_cap(hit.snippet, 200)}"
    data = {"source": hit.source, "path": hit.path, "session_id": hit.session_id}
    return Item("related", hit.ref_id or hit.key, text, hit.reason, tier, order, hit.key, data)


def _hit_doc(hit: search.Hit) -> sources.Doc:
    return sources.Doc(
        key=hit.key,
        source=hit.source,
        type=hit.type,
        title=hit.title,
        body=hit.body,
        path=hit.path,
        ref_id=hit.ref_id,
        severity=hit.severity,
        pinned=hit.pinned,
        meta=hit.meta,
    )


# -- gathering ----------------------------------------------------------------------------------
def _memory_items(index: Index, task: Task, now: datetime, session_id: str) -> list[Item]:
    items: list[Item] = []
    records = Filters(("record",))
    for n, row in enumerate(index.where("d.pinned = 1", [], records, 200)):
        items.append(_record_item(row, 1, n, "pinned: always included"))
    query = " ".join([task.description, *task.context])
    hits = search.search(
        index,
        query,
        now=now,
        limit=SEARCH_LIMIT,
        threshold=RELATED_THRESHOLD,
        include_pinned=False,
    )
    matched = {h.key for h in hits}
    terms = search.query_terms(query)
    severe = index.where("d.severity >= 2 AND d.type = 'mistake'", [], records, MAX_SEVERE)
    unmatched = 0
    for row in sorted(severe, key=lambda r: (-r.doc.severity, r.doc.key)):
        critical = row.doc.severity >= 3
        relevant = row.doc.key in matched or bool(search.matched_terms(row, terms))
        if critical or relevant:
            sev = "critical" if critical else "high-severity"
            why = f"{sev} mistake" + (" matching the task" if relevant else "")
            items.append(_record_item(row, 2, -row.doc.severity, why))
        elif unmatched < MAX_UNMATCHED_SEVERE:
            unmatched += 1
            items.append(_record_item(row, 5, 0, "high-severity mistake"))
    seen = {"record": 0, "files": 0, "other": 0}
    for hit in hits:
        if hit.session_id and hit.session_id == session_id:
            continue  # the session section already shows the current session
        kind = "record" if hit.source == "record" else "files"
        kind = kind if hit.source in ("record", "entity", "code") else "other"
        n = seen[kind]
        seen[kind] += 1
        tier = {"record": 3 if n < TOP_MATCHES else 4, "files": 4 if n < TOP_MATCHES else 5}
        item = _hit_item(hit, tier.get(kind, 5), n)
        if item is not None:
            items.append(item)
    for n, path in enumerate(task.files):
        entity = index.by_key(f"entity:file:{path}")
        purpose = str(entity.doc.meta.get("purpose") or "") if entity else ""
        text = f"{path}: {_cap(purpose, 200)}" if purpose else path
        key = entity.doc.key if entity else ""
        data = {"path": path, "purpose": _cap(purpose, 200)}
        items.append(Item("files", path, text, "named in the task", 2, n, key, data))
    return items


def _session_items(session: Mapping[str, Any] | None, window: int) -> list[Item]:
    if not session:
        return []
    sid = str(session.get("id"))
    items: list[Item] = []
    rolling = session.get("rolling_summary") or {}
    summary = str(rolling.get("summary") or "")
    facts = [str(f) for f in rolling.get("key_facts") or []]
    if summary or facts:
        text = _cap(summary, 1200) + "".join(f"\n- {_cap(f, 200)}" for f in facts[:20])
        data = {"kind": "summary", "message_count": rolling.get("message_count", 0)}
        items.append(
            Item("session", f"{sid}:summary", text.strip(), "session summary", 2, 0, "", data)
        )
    current = session.get("current_context") or {}
    parts = [f"{k.replace('_', ' ')}: {v}" for k, v in current.items() if v]
    if parts:
        data = {"kind": "current", **{k: v for k, v in current.items() if v}}
        items.append(
            Item("session", f"{sid}:current", "; ".join(parts), "current task", 2, 1, "", data)
        )
    messages = [m for m in session.get("messages") or [] if isinstance(m, Mapping)][-window:]
    for age, msg in enumerate(reversed(messages)):
        role = str(msg.get("role") or "user")
        text = f"[{role} {msg.get('at', '')}] {_cap(str(msg.get('content') or ''))}"
        data = {"kind": "message", "role": role, "at": msg.get("at"), "seq": len(messages) - age}
        tier = 3 if age < TOP_MESSAGES else 4
        items.append(
            Item("session", str(msg.get("id")), text, "session window", tier, age, "", data)
        )
    for age, dec in enumerate(reversed(session.get("decisions") or [])):
        decided = _cap(str(dec.get("decision") or ""), 200)
        text = f"decided: {decided} (for: {_cap(str(dec.get('question') or ''), 120)})"
        data = {"kind": "decision", "at": dec.get("decided_at")}
        items.append(
            Item(
                "session",
                str(dec.get("id")),
                text,
                "session decision",
                3 if age < 3 else 4,
                age,
                "",
                data,
            )
        )
    return items


def current_session(
    layout: Layout, store: Store, session_id: str | None = None, agent: str | None = None
) -> dict[str, Any] | None:
    """Adapter: the session to show (``session_id``, else the newest open one, preferring the
    agent's channel). Reads session files directly."""
    if session_id:
        return sources.read_session(store, layout.session_path(session_id))
    files = sources.session_files(layout, store)
    files.sort(key=lambda p: _mtime(p), reverse=True)
    fallback = None
    for path in files[:SESSION_SCAN]:
        session = sources.read_session(store, path)
        if not session or session.get("status") == "ended":
            continue
        if agent is None or session.get("channel") in (agent, f"agent:{agent}"):
            return session
        fallback = fallback or session
    return fallback


def _mtime(path: os.PathLike[str]) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def _temporal_item(now: datetime, tz: tzinfo, session: Mapping[str, Any] | None) -> Item:
    last = None
    messages = (session or {}).get("messages") or []
    if messages and messages[-1].get("at"):
        try:
            last = parse_timestamp(str(messages[-1]["at"]))
        except ValueError:
            last = None
    ctx = temporal.temporal_context(now, tz, last)
    return Item("temporal", "now", ctx.text(), "temporal context", 0, 0, "", ctx.as_dict())


def _zone(config: Mapping[str, Any], now: datetime) -> tzinfo:
    name = config["memory"]["shortTerm"].get("timezone")
    if name:
        return temporal.zone(str(name))
    local = now.astimezone().tzinfo
    if local is None:  # pragma: no cover - astimezone() always sets one
        raise InputError("no local timezone")
    return local


def gather(
    index: Index,
    layout: Layout,
    store: Store,
    task: Task,
    *,
    now: datetime,
    config: Mapping[str, Any],
    session_id: str | None = None,
    agent: str | None = None,
) -> list[Item]:
    """Every candidate item, most important first, without duplicates."""
    session = current_session(layout, store, session_id, agent)
    window = int(config["memory"]["shortTerm"].get("contextWindow", 15))
    items = [
        _temporal_item(now, _zone(config, now), session),
        *_session_items(session, window),
        *_memory_items(index, task, now, str((session or {}).get("id") or "")),
    ]
    items.sort(key=lambda i: (i.tier, i.order))
    seen: set[tuple[str, str]] = set()
    unique = []
    for item in items:
        ident = (item.section, str(item.data.get("path") or item.key or item.id))
        if ident not in seen:
            seen.add(ident)
            unique.append(item)
    return unique


# -- packing ------------------------------------------------------------------------------------
def pack(items: Sequence[Item], budget: int, fmt: str, task: Task) -> ContextPack:
    """Keep whole items, most important first, while the rendered text fits ``budget``."""
    render = context_render.RENDERERS[fmt]
    kept: list[Item] = []
    dropped = 0
    text = render(kept, task, budget)
    limit = budget * CHARS_PER_TOKEN
    for item in items:
        if len(text) + len(item.text) > limit:  # cannot fit: skip the trial render
            dropped += 1
            continue
        trial = render([*kept, item], task, budget)
        if estimate_tokens(trial) <= budget:
            kept.append(item)
            text = trial
        else:
            dropped += 1
    if estimate_tokens(text) > budget:  # even the empty frame does not fit
        text = ""
    return ContextPack(text, fmt, budget, estimate_tokens(text), tuple(kept), dropped)


def build_context(
    layout: Layout,
    store: Store,
    task: str | Mapping[str, Any] | Task,
    *,
    now: datetime,
    budget: int | None = None,
    fmt: str = "md",
    session_id: str | None = None,
    agent: str | None = None,
    config: Mapping[str, Any] | None = None,
    index: Index | None = None,
    touch: bool = True,
) -> ContextPack:
    """The context block for ``task`` within ``budget`` tokens (config default 1500)."""
    cfg = effective_config(config)
    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    budget = check_budget(budget or int(cfg["memory"]["contextual"]["injectBudgetTokens"]))
    own = index is None
    ix = index or Index.open(layout)
    try:
        indexer.ensure_ready(ix, layout, store, cfg)
        the_task = Task.of(task)
        items = gather(
            ix, layout, store, the_task, now=now, config=cfg, session_id=session_id, agent=agent
        )
        result = pack(items, budget, fmt, the_task)
        if touch:
            ix.touch([i.key for i in result.items if i.key], timestamp(now))
        return result
    finally:
        if own:
            ix.close()


def full_context(
    layout: Layout,
    store: Store,
    task: str | Mapping[str, Any] | Task,
    *,
    now: datetime,
    config: Mapping[str, Any] | None = None,
    session_id: str | None = None,
    index: Index | None = None,
) -> dict[str, Any]:
    """Seed 000's ``getFullContext``: every section's items, unbudgeted, as plain data."""
    cfg = effective_config(config)
    own = index is None
    ix = index or Index.open(layout)
    try:
        indexer.ensure_ready(ix, layout, store, cfg)
        items = gather(ix, layout, store, Task.of(task), now=now, config=cfg, session_id=session_id)
    finally:
        if own:
            ix.close()
    out: dict[str, Any] = {k: [] for k in ("patterns", "mistakes", "entities", "related_content")}
    names = {"files": "entities", "related": "related_content"}
    session: list[dict[str, Any]] = []
    for item in items:
        if item.section == "temporal":
            out["temporal_context"] = dict(item.data)
        elif item.section == "session":
            session.append(dict(item.as_dict()))
        else:
            out[names.get(item.section, item.section)].append(
                dict(item.as_dict(), reason=item.reason)
            )
    out["session_context"] = session
    return out


def prepare_agent_context(
    layout: Layout,
    store: Store,
    agent: str,
    task: str | Mapping[str, Any] | Task,
    *,
    now: datetime,
    budget: int | None = None,
    config: Mapping[str, Any] | None = None,
    index: Index | None = None,
) -> str:
    """Seed 000's ``prepareAgentContext``: the memory context, then the task, for a prompt.
    The whole text, task included, stays within ``budget`` (the memory part gets what the
    task leaves, at least ``MIN_BUDGET``)."""
    cfg = effective_config(config)
    total = check_budget(budget or int(cfg["memory"]["contextual"]["injectBudgetTokens"]))
    tail = f"\n## Task\n{Task.of(task).description}\n"
    pack_ = build_context(
        layout,
        store,
        task,
        now=now,
        budget=max(MIN_BUDGET, total - estimate_tokens(tail) - 1),
        fmt="agent",
        agent=agent,
        config=cfg,
        index=index,
    )
    return pack_.text + tail


__all__ = [
    "ContextPack",
    "Item",
    "Task",
    "build_context",
    "check_budget",
    "full_context",
    "gather",
    "pack",
    "prepare_agent_context",
]

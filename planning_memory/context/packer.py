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

import dataclasses
import os
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from planning_memory.context import formats as context_render
from planning_memory.context.items import (
    ContextPack,
    Item,
    Task,
    cap,
    hit_item,
    record_item,
    session_items,
    temporal_item,
)
from planning_memory.core import Layout, effective_config, temporal, timestamp
from planning_memory.errors import InputError
from planning_memory.search import (
    CHARS_PER_TOKEN,
    Filters,
    Index,
    ensure_ready,
    estimate_tokens,
    matched_terms,
    query_terms,
    read_session,
    session_files,
)
from planning_memory.search import search as search_index
from planning_memory.store import Store

DEFAULT_BUDGET = 1500
MIN_BUDGET = 100
MAX_BUDGET = 20_000
FORMATS = ("md", "xml", "json", "agent")
SEARCH_LIMIT = 25
RELATED_THRESHOLD = 0.1
SESSION_SCAN = 20  # newest session files looked at to find the current one
TOP_MATCHES = 5  # matching records (and files) that rank with the newest messages
MAX_SEVERE = 100  # high/critical mistakes considered (the most recently updated)
MAX_UNMATCHED_SEVERE = 10  # high-severity mistakes shown without matching the task


def check_budget(budget: int) -> int:
    if not isinstance(budget, int) or not MIN_BUDGET <= budget <= MAX_BUDGET:
        raise InputError(
            f"budget must be an integer from {MIN_BUDGET} to {MAX_BUDGET} tokens, got {budget!r}",
            hint=f"the default is {DEFAULT_BUDGET}",
        )
    return budget


# -- gathering ----------------------------------------------------------------------------------
def _memory_items(
    index: Index, task: Task, now: datetime, session_id: str, decay: bool = False
) -> list[Item]:
    items: list[Item] = []
    records = Filters(("record",))
    for n, row in enumerate(index.where("d.pinned = 1", [], records, 200)):
        items.append(record_item(row, 1, n, "pinned: always included"))
    query = " ".join([task.description, *task.context])
    hits = search_index(
        index,
        query,
        now=now,
        limit=SEARCH_LIMIT,
        threshold=RELATED_THRESHOLD,
        include_pinned=False,
        decay=decay,
    )
    matched = {h.key for h in hits}
    terms = query_terms(query)
    severe = index.where("d.severity >= 2 AND d.type = 'mistake'", [], records, MAX_SEVERE)
    unmatched = 0
    for row in sorted(severe, key=lambda r: (-r.doc.severity, r.doc.key)):
        critical = row.doc.severity >= 3
        relevant = row.doc.key in matched or bool(matched_terms(row, terms))
        if critical or relevant:
            sev = "critical" if critical else "high-severity"
            why = f"{sev} mistake" + (" matching the task" if relevant else "")
            items.append(record_item(row, 2, -row.doc.severity, why))
        elif unmatched < MAX_UNMATCHED_SEVERE:
            unmatched += 1
            items.append(record_item(row, 5, 0, "high-severity mistake"))
    seen = {"record": 0, "files": 0, "other": 0}
    for hit in hits:
        if hit.session_id and hit.session_id == session_id:
            continue  # the session section already shows the current session
        kind = "record" if hit.source == "record" else "files"
        kind = kind if hit.source in ("record", "entity", "code") else "other"
        n = seen[kind]
        seen[kind] += 1
        tier = {"record": 3 if n < TOP_MATCHES else 4, "files": 4 if n < TOP_MATCHES else 5}
        item = hit_item(hit, tier.get(kind, 5), n)
        if item is not None:
            items.append(item)
    for n, path in enumerate(task.files):
        entity = index.by_key(f"entity:file:{path}")
        purpose = str(entity.doc.meta.get("purpose") or "") if entity else ""
        text = f"{path}: {cap(purpose, 200)}" if purpose else path
        key = entity.doc.key if entity else ""
        data = {"path": path, "purpose": cap(purpose, 200)}
        items.append(Item("files", path, text, "named in the task", 2, n, key, data))
    return items


def current_session(
    layout: Layout, store: Store, session_id: str | None = None, agent: str | None = None
) -> dict[str, Any] | None:
    """Adapter: the session to show (``session_id``, else the newest open one, preferring the
    agent's channel). Reads session files directly."""
    if session_id:
        return read_session(store, layout.session_path(session_id))
    files = session_files(layout, store)
    files.sort(key=lambda p: _mtime(p), reverse=True)
    fallback = None
    for path in files[:SESSION_SCAN]:
        session = read_session(store, path)
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
        temporal_item(now, temporal.timezone_of(config, now), session),
        *session_items(session, window),
        *_memory_items(
            index,
            task,
            now,
            str((session or {}).get("id") or ""),
            bool(config["memory"]["longTerm"].get("decayEnabled", False)),
        ),
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


def fit_lines(text: str, max_chars: int) -> str:
    """``text`` without its last lines until it fits ``max_chars``; empty if only its first
    line (a heading) would be left."""
    lines = text.splitlines()
    while len(lines) > 1 and len("\n".join(lines)) > max_chars:
        lines.pop()
    return "\n".join(lines) if len(lines) > 1 else ""


def with_lead(result: ContextPack, lead: str) -> ContextPack:
    """``result`` with ``lead`` under its heading (``# ...`` line), else at its top."""
    if not lead:
        return result
    head, _nl, body = result.text.partition("\n")
    if not head.startswith("# "):
        head, body = "", result.text
    text = "\n".join(t for t in (head, lead, body.strip()) if t)
    return dataclasses.replace(result, text=text, tokens=estimate_tokens(text))


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
    preamble: str = "",
) -> ContextPack:
    """The context block for ``task`` within ``budget`` tokens (config default 1500).

    ``preamble`` (Markdown lines, such as the last session's summary) goes right under the
    block's heading, cut at a line boundary to a third of the budget; the items fill the
    rest."""
    cfg = effective_config(config)
    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    budget = check_budget(budget or int(cfg["memory"]["contextual"]["injectBudgetTokens"]))
    own = index is None
    ix = index or Index.open(layout)
    try:
        ensure_ready(ix, layout, store, cfg)
        the_task = Task.of(task)
        items = gather(
            ix, layout, store, the_task, now=now, config=cfg, session_id=session_id, agent=agent
        )
        lead = fit_lines(preamble, budget // 3 * CHARS_PER_TOKEN)
        rest = max(MIN_BUDGET, budget - estimate_tokens(lead) - 1) if lead else budget
        result = with_lead(pack(items, rest, fmt, the_task), lead)
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
        ensure_ready(ix, layout, store, cfg)
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

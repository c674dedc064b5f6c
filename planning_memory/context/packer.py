"""The context packer: what an agent should know before a task, within a token budget.

``build_context`` gathers candidate items from the index and the current session, orders them
by importance, and keeps whole items while the rendered text stays within the budget:

0. temporal context (date, time, zone, inactivity notice);
1. pinned records, what a person taught (``taught``: trigger-phrase records, preferences),
   and, at the start of a session, when the last session ended (a notice after a day);
2. the sections of ``preferences.json``, critical mistakes, high-severity mistakes (those
   matching the task first, then ``SEVERE_UP_FRONT`` others), files named by the task, the
   session summary and current task, the last session's open next steps;
3. the records the task matches (patterns, mistakes, learnings, decisions, preferences:
   searched apart from the code, so code never crowds them out), then, for a small memory
   (at most ``WHOLE_MEMORY`` records), every other record, newest first; the 5 newest
   messages of the session window and its 3 newest decisions;
4. the 5 best relevant files (entities, code), the rest of the window and decisions, what
   the last session accomplished;
5. related content (docs, other sessions), further files, and more high-severity mistakes
   that do not match the task (up to ``MAX_UNMATCHED_SEVERE``).

The standing items (the same whatever the task: taught rules, preferences, the critical and
high-severity mistakes that do not match, the last session) keep their rank within
``STANDING_SHARE`` of the budget; past it they wait until after the task's best matches
(``within_share``). After a long gap the session window's messages rank one tier lower.
Records of the personal store (``--scope personal``) come from its own index, searched with
the project's. A record whose anchored code changed says so (``code changed since: review``).

Tokens are estimated as ``ceil(characters / 4)`` of the rendered text (``chunks.
estimate_tokens``). An item is either in the output whole or not at all: when one does not fit,
it is skipped and smaller, less important items may still fit. Each item carries the reason it
was included. Formats: ``md``, ``xml`` (the seeds' tags: ``<memory_context>``,
``<conversation_context>``, ``<temporal_context>``), ``json``, and ``agent`` (seed 000's
"Integración con Agentes" layout, used by ``prepare_agent_context``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from planning_memory.context import formats as context_render
from planning_memory.context.files import current_session, find_sessions, read_preferences
from planning_memory.context.items import (
    ContextPack,
    Item,
    Task,
    cap,
    hit_item,
    last_session_items,
    record_item,
    session_items,
    temporal_item,
)
from planning_memory.context.taught import MAX_TAUGHT, preference_items
from planning_memory.core import Layout, effective_config, temporal, timestamp
from planning_memory.errors import InputError
from planning_memory.search import (
    CHARS_PER_TOKEN,
    SOURCES,
    Filters,
    Hit,
    Index,
    ensure_ready,
    estimate_tokens,
)
from planning_memory.search import search as search_index
from planning_memory.sessions import repeat_words, said_before
from planning_memory.store import Store

DEFAULT_BUDGET = 1500
MIN_BUDGET = 100
MAX_BUDGET = 20_000
FORMATS = ("md", "xml", "json", "agent")
SEARCH_LIMIT = 25  # records, and as many other hits (code, docs, sessions)
OTHER_SOURCES = tuple(s for s in SOURCES if s != "record")
RELATED_THRESHOLD = 0.1
TOP_MATCHES = 5  # relevant files that rank before the rest of the session window
WHOLE_MEMORY = 10  # records: a memory this small is shown whole (seed 002: the last ten facts)
MAX_SEVERE = 100  # high/critical mistakes considered (the most recently updated)
MAX_UNMATCHED_SEVERE = 10  # high-severity mistakes shown without matching the task
SEVERE_UP_FRONT = 3  # ... of which this many rank above search hits
STANDING_SHARE = 1 / 3  # of the budget: standing items beyond it wait for the best matches
ITEM_CHARS = 40  # an item's id, reason and markup, roughly
AT_START = 5  # newest, and most used, memories shown when a session starts with no last one
# the facts of one session item: "Goal: ...", "Accomplished: a; b", a summary's "- fact" lines
_SAID_PARTS = re.compile(r"; |\. Goal: |\n- |^Summary: ")
TAUGHT_WHY = "taught: always included"


def check_budget(budget: int) -> int:
    if not isinstance(budget, int) or not MIN_BUDGET <= budget <= MAX_BUDGET:
        raise InputError(
            f"budget must be an integer from {MIN_BUDGET} to {MAX_BUDGET} tokens, got {budget!r}",
            hint=f"the default is {DEFAULT_BUDGET}",
        )
    return budget


# -- gathering ----------------------------------------------------------------------------------
def _always_items(indexes: Sequence[Index]) -> list[Item]:
    """Pinned records, then what a person taught: in every block, whatever the task."""
    records = Filters(("record",))
    pinned = [r for ix in indexes for r in ix.listed("pinned", records, 200)]
    taught = [r for ix in indexes for r in ix.listed("taught", records, MAX_TAUGHT)]
    taught_items = [record_item(r, 1, 100 + n, TAUGHT_WHY) for n, r in enumerate(taught)]
    return [record_item(r, 1, n, "pinned: always included") for n, r in enumerate(pinned)] + [
        dataclasses.replace(item, standing=True) for item in taught_items
    ]


def _start_items(indexes: Sequence[Index]) -> list[Item]:
    """A session that starts with no ended session to go on: the newest memories and the
    most used ones (by how often a context carried them)."""
    records = Filters(("record",))
    newest = [r for ix in indexes for r in ix.listed("records", records, AT_START)]
    used = [r for ix in indexes for r in ix.used(records, 20 * AT_START)]
    used.sort(key=lambda r: -r.access_count)
    items = [
        *(record_item(r, 2, 20 + n, "recent memory") for n, r in enumerate(newest)),
        *(
            record_item(r, 2, 30 + n, f"most used memory ({r.access_count} uses)")
            for n, r in enumerate(used[:AT_START])
        ),
    ]
    return [dataclasses.replace(item, standing=True) for item in items]  # whatever the task


def _severe_items(indexes: Sequence[Index], matched: set[str]) -> list[Item]:
    """Critical mistakes and the high-severity ones matching the task (among its best
    ``TOP_MATCHES`` records), then other high-severity mistakes: the first
    ``SEVERE_UP_FRONT`` still above search hits."""
    records = Filters(("record",))
    severe = [r for ix in indexes for r in ix.listed("severe", records, MAX_SEVERE)]
    items, unmatched = [], 0
    for row in sorted(severe, key=lambda r: (-r.doc.severity, r.doc.key)):
        critical = row.doc.severity >= 3
        relevant = row.doc.key in matched
        if critical or relevant:
            sev = "critical" if critical else "high-severity"
            why = f"{sev} mistake" + (" matching the task" if relevant else "")
            item = record_item(row, 2, -row.doc.severity, why)  # unmatched: standing
            items.append(item if relevant else dataclasses.replace(item, standing=True))
        elif unmatched < MAX_UNMATCHED_SEVERE:
            up = unmatched < SEVERE_UP_FRONT
            item = record_item(row, 2 if up else 5, 5 + unmatched, "high-severity mistake")
            items.append(dataclasses.replace(item, standing=up))
            unmatched += 1
    return items


def _hit_items(hits: Sequence[Hit], session_id: str, said: Sequence[str] = ()) -> list[Item]:
    """Search hits: every matching record with the newest messages, then the best files,
    then the rest.
    A message or session that only says again what ``said`` holds (the task itself, the
    sessions' items) or what a better hit said is left out."""
    items = []
    seen = {"record": 0, "files": 0, "other": 0}
    heard = [repeat_words(text) for text in said]
    for hit in hits:
        if hit.session_id and hit.session_id == session_id:
            continue  # the session section already shows the current session
        if hit.source in ("message", "session", "decision"):
            if said_before(hit.snippet or hit.title, heard, within=True):
                continue  # the prompt echoed, or a fact the block already holds
            heard.append(repeat_words(hit.snippet or hit.title))
        kind = "record" if hit.source == "record" else "files"
        kind = kind if hit.source in ("record", "entity", "code") else "other"
        n = seen[kind]
        seen[kind] += 1
        tier = {"record": 3, "files": 4 if n < TOP_MATCHES else 5}
        item = hit_item(hit, tier.get(kind, 5), n)
        if item is not None:
            items.append(item)
    return items


def _whole_memory(indexes: Sequence[Index]) -> list[Item]:
    """Every record, newest first, when there are at most ``WHOLE_MEMORY`` of them (after
    the task's matches): a small memory is shown whole, and relevance decides only when
    there is more than that."""
    records = Filters(("record",))
    rows = [r for ix in indexes for r in ix.listed("records", records, WHOLE_MEMORY + 1)]
    if len(rows) > WHOLE_MEMORY:
        return []
    rows.sort(key=lambda r: (r.doc.updated_at, r.doc.key), reverse=True)
    return [record_item(r, 3, 1000 + n, "memory: shown whole") for n, r in enumerate(rows)]


def _named_files(index: Index, task: Task) -> list[Item]:
    items = []
    for n, path in enumerate(task.files):
        entity = index.by_key(f"entity:file:{path}")
        purpose = str(entity.doc.meta.get("purpose") or "") if entity else ""
        text = f"{path}: {cap(purpose, 200)}" if purpose else path
        key = entity.doc.key if entity else ""
        data = {"path": path, "purpose": cap(purpose, 200)}
        items.append(Item("files", path, text, "named in the task", 2, n, key, data))
    return items


def _memory_items(
    indexes: Sequence[Index],
    task: Task,
    now: datetime,
    session_id: str,
    decay: bool = False,
    said: Sequence[str] = (),
) -> list[Item]:
    query = task.query
    hits = [
        hit
        for sources in (("record",), OTHER_SOURCES)  # records apart: code never crowds them
        for hit in search_index(
            indexes,
            query,
            now=now,
            sources=sources,
            limit=SEARCH_LIMIT,
            threshold=RELATED_THRESHOLD,
            include_pinned=False,
            decay=decay,
        )
    ]
    best = [h.key for h in hits if h.source == "record"][:TOP_MATCHES]  # a shared word is not
    return [  # a match: 25 records share one with most tasks
        *_always_items(indexes),
        *_severe_items(indexes, set(best)),
        *_hit_items(hits, session_id, [task.description, *said]),
        *_whole_memory(indexes),
        *_named_files(indexes[0], task),
    ]


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
    personal: Index | None = None,
) -> list[Item]:
    """Every candidate item, most important first, without duplicates; ``personal`` is the
    personal store's index, searched with the project's."""
    session, last = find_sessions(layout, store, session_id, agent)
    window = int(config["memory"]["shortTerm"].get("contextWindow", 15))
    fresh = not (session or {}).get("messages")
    indexes = [index] if personal is None else [index, personal]
    clock = temporal_item(now, temporal.timezone_of(config, now), session)
    stale = clock.data.get("gap_days") is not None
    lasts = last_session_items(last, now, fresh=fresh)
    current = session_items(session, window, stale=stale, shown=lasts)
    memories = [
        *(_start_items(indexes) if fresh and last is None else []),
        *_memory_items(
            indexes,
            task,
            now,
            str((session or {}).get("id") or ""),
            bool(config["memory"]["longTerm"].get("decayEnabled", False)),
            [part for i in (*lasts, *current) for part in _SAID_PARTS.split(i.text)],
        ),
    ]
    records = [i for i in memories if i.section in ("patterns", "mistakes", "related")]
    # a key fact the last session or a memory of the block says is not said again
    current = session_items(session, window, stale=stale, shown=[*lasts, *records])
    items = [
        clock,
        *lasts,
        *current,
        *preference_items(read_preferences(layout, store), 2, -10),
        *memories,
    ]
    items.sort(key=lambda i: (i.tier, i.order))

    def ident(item: Item) -> tuple[str, str]:
        return item.section, str(item.data.get("path") or item.key or item.id)

    matching = {ident(i) for i in items if not i.standing}  # a hit as well: not deferred
    seen: set[tuple[str, str]] = set()
    unique = []
    for item in items:
        if ident(item) not in seen:
            seen.add(ident(item))
            standing = item.standing and ident(item) not in matching
            unique.append(
                item if standing == item.standing else dataclasses.replace(item, standing=False)
            )
    return unique


# -- packing ------------------------------------------------------------------------------------
def within_share(items: Sequence[Item], budget: int) -> list[Item]:
    """``items`` with the standing ones (the same whatever the task: taught rules,
    preferences, high-severity mistakes, the last session) kept in their rank while they fit
    in ``STANDING_SHARE`` of the budget; the rest wait until after the task's best matches,
    so that a small budget still holds what the task is about."""
    room, used = budget * CHARS_PER_TOKEN * STANDING_SHARE, 0
    shared = []
    for item in items:
        if item.standing:
            used += len(item.text) + ITEM_CHARS
            if used > room:
                item = dataclasses.replace(item, tier=max(item.tier, 3), order=1000 + item.order)
        shared.append(item)
    return sorted(shared, key=lambda i: (i.tier, i.order))


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
    personal: Index | None = None,
) -> ContextPack:
    """The context block for ``task`` within ``budget`` tokens (config default 1500).

    ``index`` (default: the tree's, opened and synced here) and ``personal`` (the personal
    store's) are used as given, synced by the caller (``Memory`` opens them)."""
    cfg = effective_config(config)
    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    budget = check_budget(budget or int(cfg["memory"]["contextual"]["injectBudgetTokens"]))
    own = index is None
    ix = index or Index.open(layout)
    try:
        if own:  # a given index is the caller's, synced as it chose
            ensure_ready(ix, layout, store, cfg)
        the_task = Task.of(task)
        items = gather(
            ix,
            layout,
            store,
            the_task,
            now=now,
            config=cfg,
            session_id=session_id,
            agent=agent,
            personal=personal,
        )
        result = pack(within_share(items, budget), budget, fmt, the_task)
        if touch:
            mine = [i for i in result.items if i.key and i.data.get("scope") != "personal"]
            ix.touch([i.key for i in mine], timestamp(now))
            if personal is not None:
                theirs = [i.key for i in result.items if i.data.get("scope") == "personal"]
                personal.touch(theirs, timestamp(now))
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
        if own:
            ensure_ready(ix, layout, store, cfg)
        items = gather(ix, layout, store, Task.of(task), now=now, config=cfg, session_id=session_id)
    finally:
        if own:
            ix.close()
    sections = (
        "patterns",
        "mistakes",
        "preferences",
        "entities",
        "related_content",
        "last_session",
    )
    out: dict[str, Any] = {k: [] for k in sections}
    names = {"files": "entities", "related": "related_content", "last": "last_session"}
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
    "current_session",
    "find_sessions",
    "full_context",
    "gather",
    "pack",
    "prepare_agent_context",
]

"""The items of a context block, each built from an index row, a search hit or the session.

Pure: values in, values out (``now`` is passed in)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import Any

from planning_memory.core import parse_timestamp, temporal
from planning_memory.search import Doc, Hit, Row
from planning_memory.sessions import collapse_repeats, repeat_words, said_before

TEXT_CAP = 300  # characters of one item's text (a message, a description)
TOP_MESSAGES = 5  # newest session messages in the same tier as the best matches
REVIEW_FLAG = "code changed since: review"  # an anchored memory whose code changed
LAST_ITEMS = 5  # next steps (and accomplishments) shown of the last session
INHERITED = "Earlier session: "  # how a key fact a session inherited begins (sessions)


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

    @property
    def query(self) -> str:
        """What the task's memories are searched with: its description, then its tags."""
        return " ".join([self.description, *self.context])


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
    standing: bool = False  # the same whatever the task: taught rules, preferences, ...

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


def cap(text: str, limit: int = TEXT_CAP) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def record_item(row: Row, tier: int, order: float, reason: str) -> Item:
    """A saved memory: a pattern, a mistake, a preference, or another learning; flagged when
    its anchored code changed since (``needs_review``) and when it is personal."""
    d, meta = row.doc, row.doc.meta
    if d.type == "pattern":
        name = str(meta.get("name") or d.title)
        desc = str(meta.get("description") or d.body)
        said = name.lower().rstrip(".") in desc.lower()  # a taught rule: its name is in it
        section, text = "patterns", cap(desc) if said and desc else f"{name}: {cap(desc)}"
        data = {"name": name, "description": cap(desc), "established": meta.get("established")}
    elif d.type == "mistake":
        desc = str(meta.get("description") or d.title)
        corr = str(meta.get("correction") or "")
        sev = str(meta.get("severity") or "medium")
        section = "mistakes"
        text = f"[{sev}] {cap(desc)}" + (f" → {cap(corr)}" if corr else "")
        data = {"description": cap(desc), "correction": cap(corr), "severity": sev}
    else:
        body = str(meta.get("learned") or d.body)
        section = "preferences" if d.type == "preference" else "related"
        label = d.title if d.type == "preference" else f"{d.type}: {d.title}"
        text = label + (f" — {cap(body, 200)}" if body and body != d.title else "")
        data = {"source": d.type}
    if meta.get("needs_review"):
        text += f" ({REVIEW_FLAG})"
        data["needs_review"] = True
    if d.scope != "project":
        data["scope"] = d.scope
    return Item(section, d.ref_id, text, reason, tier, order, d.key, data)


def hit_item(hit: Hit, tier: int, order: float) -> Item | None:
    if hit.source == "record":
        row = Row(hit_doc(hit), hit.bm25, hit.access_count, "")
        return record_item(row, tier, order, hit.reason)
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
        # what the code says it is for (a docstring, a hand-written purpose), else a function's
        # signature; never the text the search index holds for it (names, calls, a chunk)
        data = {"path": where, "kind": hit.type, "purpose": cap(purpose, 200)}
        if hit.source == "entity" and hit.type != "file":
            data["signature"] = hit.title.split("::", 1)[-1] + str(hit.meta.get("signature") or "")
        shown = cap(purpose or data.get("signature", ""), 200)
        text = f"{label}{lines}: {shown}" if shown else f"{label}{lines}"
        return Item("files", where, text, hit.reason, tier, order, hit.key, data)
    kind = {"doc": hit.path or "doc", "message": f"message ({hit.type})"}.get(hit.source, "")
    text = f"{kind or hit.source}: {cap(hit.title, 120)}"
    title, snippet = " ".join(hit.title.split()), " ".join(hit.snippet.split())
    if title and snippet.startswith(title.rstrip("…")):  # a message is its title and more
        text = f"{kind or hit.source}: {cap(hit.snippet, 200)}"
    elif snippet and snippet not in title:
        text += f" — {cap(hit.snippet, 200)}"
    data = {"source": hit.source, "path": hit.path, "session_id": hit.session_id}
    return Item("related", hit.ref_id or hit.key, text, hit.reason, tier, order, hit.key, data)


def hit_doc(hit: Hit) -> Doc:
    return Doc(
        key=hit.key,
        source=hit.source,
        type=hit.type,
        title=hit.title,
        body=hit.body,
        path=hit.path,
        ref_id=hit.ref_id,
        severity=hit.severity,
        scope=hit.scope,
        tags=hit.tags,
        pinned=hit.pinned,
        meta=hit.meta,
    )


def session_items(
    session: Mapping[str, Any] | None,
    window: int,
    *,
    stale: bool = False,
    shown: Sequence[Item] = (),
) -> list[Item]:
    """The session's summary and current task, its newest messages and decisions. After a
    long gap (``stale``: the temporal notice is shown) its messages rank one tier lower: the
    summary keeps the gist, what the new task matches comes first. Near-duplicate messages
    ("run the tests again", many times) are one item that says how many; a key fact that
    ``shown`` items (the last session's) already say is left out."""
    if not session:
        return []
    sid = str(session.get("id"))
    items: list[Item] = []
    rolling = session.get("rolling_summary") or {}
    summary = str(rolling.get("summary") or "")
    known = [repeat_words(i.text) for i in shown]
    facts = [
        str(f)
        for f in rolling.get("key_facts") or []
        if not said_before(str(f).removeprefix(INHERITED), known, within=True)
    ]
    if summary or facts:
        text = cap(summary, 1200) + "".join(f"\n- {cap(f, 200)}" for f in facts[:20])
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
    newest = messages[::-1]
    said = [str(m.get("content") or "") for m in newest]
    for age, (n, times) in enumerate(collapse_repeats(said)):
        msg, role = newest[n], str(newest[n].get("role") or "user")
        again = f" (said {times} times)" if times > 1 else ""
        text = f"[{role} {msg.get('at', '')}] {cap(said[n])}{again}"
        data = {"kind": "message", "role": role, "at": msg.get("at"), "seq": len(messages) - n}
        data.update({"times": times} if times > 1 else {})
        tier = (3 if age < TOP_MESSAGES else 4) + int(stale)
        items.append(
            Item("session", str(msg.get("id")), text, "session window", tier, age, "", data)
        )
    for age, dec in enumerate(reversed(session.get("decisions") or [])):
        decided = cap(str(dec.get("decision") or ""), 200)
        text = f"decided: {decided} (for: {cap(str(dec.get('question') or ''), 120)})"
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


def temporal_item(now: datetime, tz: tzinfo, session: Mapping[str, Any] | None) -> Item:
    last = None
    messages = (session or {}).get("messages") or []
    if messages and messages[-1].get("at"):
        try:
            last = parse_timestamp(str(messages[-1]["at"]))
        except ValueError:
            last = None
    ctx = temporal.temporal_context(now, tz, last)
    return Item("temporal", "now", ctx.text(), "temporal context", 0, 0, "", ctx.as_dict())


def last_session_items(
    session: Mapping[str, Any] | None, now: datetime, *, fresh: bool
) -> list[Item]:
    """The last ended session: when it ended (a notice once a day has passed), its goal, its
    open next steps and what it accomplished. They rank high when this session has just
    started (``fresh``: nothing said in it yet), low otherwise."""
    if not session:
        return []
    sid, ended = str(session.get("id")), str(session.get("ended_at") or "")
    summary = session.get("end_summary") or {}
    goal = cap(str(summary.get("goal") or session.get("goal") or ""), 200)
    days = temporal.gap_days(now, _time(ended))
    data = {"kind": "ended", "ended_at": ended, "days_ago": days, "goal": goal}
    tiers = (1, 2, 4) if fresh else (4, 4, 5)
    up = fresh  # ranked high: standing (``packer.within_share``)
    head = ended_text(ended, days, goal)
    items = [Item("last", sid, head, "last session", tiers[0], 9, "", data, up)]
    steps = [cap(str(s), 200) for s in summary.get("next_steps") or [] if str(s).strip()]
    why = "open next step of the last session"
    for n, step in enumerate(steps[:LAST_ITEMS]):
        data = {"kind": "next_step"}
        items.append(
            Item("last", f"last:{sid}:{n}", f"Next step: {step}", why, tiers[1], 2, "", data, up)
        )
    done = [cap(str(s), 120) for s in summary.get("accomplished") or [] if str(s).strip()]
    if done:
        text = "Accomplished: " + "; ".join(done[:LAST_ITEMS])
        data = {"kind": "accomplished"}
        items.append(Item("last", f"last:{sid}:done", text, "last session", tiers[2], 9, "", data))
    return items


def ended_text(ended: str, days: int | None, goal: str) -> str:
    """When the last session ended, as a notice once more than a day has passed."""
    text = f"The last session ended at {ended}."
    if days is not None:
        unit = "day" if days == 1 else "days"
        text = (
            f"Notice: the last session ended {days} {unit} ago ({ended}); things may have changed."
        )
    return text + (f" Goal: {goal}" if goal else "")


def _time(value: str) -> datetime | None:
    try:
        return parse_timestamp(value)
    except ValueError:
        return None

"""A session's "Saved in this chat" (seed 003's web tab): the records the session saved.

The records whose ``source`` is ``session:<id>`` (saved by ``[MEMORIZE: ...]`` facts, by a
person's trigger phrase in a prompt, by MCP ``memory_save`` while the session was open) and
that are not forgotten: pinned first, then by ``updated_at``, newest first. The type filter
and the text filter (title, content and topic_key; any case, any length) run here on the
server, over the records the viewer has read. A record whose topic another session updated
later keeps its first session's source, so it stays listed here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from planning_memory.viewer.html import Html, section, table, tag
from planning_memory.viewer.layout import Request
from planning_memory.viewer.overview import record_link
from planning_memory.viewer.records import TYPES, flags, select

Record = dict[str, Any]
CONTENT = ("description", "correction", "example", "learned", "original", "trigger")


def searchable(record: Record) -> str:
    """What the text filter looks in: the title, the content and the topic key, folded."""
    body = record.get("body") or {}
    parts = [record.get("title"), record.get("name"), record.get("topic_key")]
    parts += [record.get(k) for k in CONTENT]
    parts += [body.get(k) for k in ("what", "why", "where", "learned")]
    return "\n".join(str(p) for p in parts if p).casefold()


def saved_in(
    records: Iterable[Record], session_id: str, *, record_type: str = "", text: str = ""
) -> list[Record]:
    """The live records ``session_id`` saved, of ``record_type`` and holding ``text`` when
    given: pinned first, then the most recently updated."""
    source, needle = f"session:{session_id}", text.casefold()
    found = [
        r
        for r in records
        if r.get("source") == source
        and not r.get("deleted_at")
        and (not record_type or r.get("type") == record_type)
        and (not needle or needle in searchable(r))
    ]
    found.sort(key=lambda r: (str(r.get("updated_at") or ""), r["id"]), reverse=True)
    found.sort(key=lambda r: not r.get("pinned"))  # stable: pinned first, each newest first
    return found


def saved_section(req: Request, session_id: str) -> Html:
    """The "Saved in this chat" section of a session's page, with its filters."""
    record_type, text = req.arg("saved_type"), req.arg("saved_q")
    found = saved_in(req.reads.records(), session_id, record_type=record_type, text=text)
    form = tag(
        "form",
        tag("input", type="hidden", name="id", value=session_id),
        tag(
            "input",
            type="search",
            name="saved_q",
            value=text,
            placeholder="title, content or topic",
            aria_label="search what this session saved",
            id="saved-q",
        ),
        select("saved_type", TYPES, record_type, "any type"),
        tag("button", "Filter", type="submit"),
        action="/session#saved",
        method="get",
        class_="filters",
    )
    rows = (
        (record_link(r), r["type"], flags(r), r.get("topic_key") or "", r.get("updated_at", ""))
        for r in found
    )
    head = ("record", "type", "", "topic", "updated")
    return section("Saved in this chat", form, table(head, rows, id="saved-records"), id_="saved")

"""The sessions pages: sessions per channel, and one session with its summaries and timeline."""

from __future__ import annotations

from typing import Any

from planning_memory.viewer import agent, saved
from planning_memory.viewer.html import (
    Html,
    badge,
    definitions,
    link,
    pager,
    section,
    table,
    tag,
    url,
)
from planning_memory.viewer.jobs import Pending, line
from planning_memory.viewer.layout import PAGE_SIZE, Page, Request

END_PARTS = (
    ("goal", "Goal"),
    ("instructions", "Instructions"),
    ("discoveries", "Discoveries"),
    ("accomplished", "Accomplished"),
    ("next_steps", "Next steps"),
    ("relevant_files", "Relevant files"),
)
WINDOW_SHOWN = 200  # newest messages of the window shown on a session's page


def listing(req: Request) -> Page:
    every = req.reads.sessions()
    channels = sorted({s.channel for s in every})
    channel, status = req.arg("channel"), req.arg("status")
    found = [
        s
        for s in every
        if (not channel or s.channel == channel) and (not status or s.status == status)
    ]
    page = req.page()
    shown = found[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    rows = (
        (
            link(url("/session", id=s.id), s.name or s.goal or s.id),
            s.channel,
            badge(s.status, "ok" if s.status == "active" else ""),
            s.started_at,
            s.ended_at or "",
            str(s.message_count),
            "pending" if s.summary_pending else "",
        )
        for s in shown
    )
    filters = tag(
        "nav",
        "Channel: ",
        link(url("/sessions", status=status), "all", class_="current" if not channel else None),
        [
            (
                " · ",
                link(
                    url("/sessions", channel=c, status=status),
                    c,
                    class_="current" if c == channel else None,
                ),
            )
            for c in channels
        ],
        " — Status: ",
        [
            (
                link(
                    url("/sessions", channel=channel, status=s),
                    s or "any",
                    class_="current" if s == status else None,
                ),
                " ",
            )
            for s in ("", "active", "paused", "ended")
        ],
        class_="filters",
    )
    head = ("session", "channel", "status", "started", "ended", "messages", "summary")
    body = [
        filters,
        table(head, rows, id="sessions"),
        pager("/sessions", {"channel": channel, "status": status}, page, len(found), PAGE_SIZE),
    ]
    return Page("Sessions", Html("".join(body)))


def detail(req: Request) -> Page:
    sid = req.arg("id")
    data: dict[str, Any] = req.mem.sessions.get(sid)
    brief = req.mem.sessions.overview(sid)
    around = req.arg("around")
    rolling = data.get("rolling_summary") or {}
    body = [
        definitions(
            [
                ("id", tag("code", sid)),
                ("channel", data.get("channel")),
                ("status", badge(str(data.get("status")))),
                ("goal", data.get("goal")),
                ("started", data.get("started_at")),
                ("ended", data.get("ended_at")),
                ("messages", str(brief["messages"])),
                *((k.replace("_", " "), v) for k, v in brief["current_context"].items()),
            ]
        ),
        section(
            "Rolling summary",
            tag("p", rolling.get("summary") or "—", class_="summary"),
            tag("ul", [tag("li", f) for f in rolling.get("key_facts", [])]),
            id_="rolling",
        ),
        section("End summary", end_summary(data.get("end_summary")), id_="end-summary"),
        saved.saved_section(req, sid),
        section("Timeline", timeline(req, around), id_="timeline") if around else "",
        section("Window", window(req, sid, around), id_="window"),
        section("Injected at session start", agent.injections(req, sid), id_="injections"),
        section(
            "Decisions",
            table(
                ("when", "question", "decision", "why", "alternatives"),
                (
                    (
                        d.get("decided_at", ""),
                        d.get("question", ""),
                        d.get("decision", ""),
                        d.get("reasoning", ""),
                        ", ".join(d.get("alternatives", [])),
                    )
                    for d in data.get("decisions", [])
                ),
            ),
        ),
        section("Errors", errors_table(data.get("errors") or []), id_="errors"),
        section(
            "Files",
            table(
                ("when", "action", "path"),
                (
                    (
                        f.get("at", ""),
                        f.get("action", ""),
                        link(url("/code/file", path=f.get("path")), str(f.get("path"))),
                    )
                    for f in data.get("files_accessed", [])
                ),
            ),
        ),
        section(
            "Steps",
            table(
                ("when", "action", "result"),
                (
                    (s.get("at", ""), s.get("action", ""), s.get("result", ""))
                    for s in data.get("steps", [])
                ),
            ),
        ),
    ]
    return Page(str(data.get("name") or data.get("goal") or sid), Html("".join(body)))


def errors_table(errors: list[dict[str, Any]]) -> Html:
    """The errors met in the session, newest first: open ones marked, resolved ones with how."""
    rows = []
    for e in reversed(errors):
        path = e.get("file")
        rows.append(
            (
                e.get("at", ""),
                e.get("error", ""),
                link(url("/code/file", path=path), str(path)) if path else "",
                e.get("tool", ""),
                e["resolution"] if e.get("resolution") else badge("open", "warn"),
                e.get("resolved_at") or "",
            )
        )
    return table(("when", "error", "file", "tool", "resolution", "resolved"), rows)


def end_summary(summary: dict[str, Any] | None) -> Html:
    if not summary:
        return tag("p", "not ended yet (or nothing was said)", class_="empty")
    parts = []
    for key, label in END_PARTS:
        value = summary.get(key)
        if isinstance(value, list):
            value = tag("ul", [tag("li", v) for v in value]) if value else "—"
        parts.append((label, value or "—"))
    return definitions(parts)


def window(req: Request, sid: str, around: str) -> Html:
    messages = req.mem.sessions.window(sid)[-WINDOW_SHOWN:]
    rows = (
        (
            m.get("at", ""),
            m.get("role", ""),
            tag("div", m.get("content", ""), class_="message"),
            link(
                url("/session", id=sid, around=m["id"]) + "#timeline",
                "timeline",
                class_="current" if m["id"] == around else None,
            ),
        )
        for m in messages
    )
    return table(("when", "role", "message", ""), rows)


def timeline(req: Request, item_id: str) -> Html:
    """The chronological neighbours of one message or decision (across the memory)."""
    try:
        entries = req.reads.indexed(
            f"timeline:{item_id}", "Reading the timeline", lambda: req.mem.timeline(item_id)
        )
    except Pending as waiting:
        return line(waiting.job)
    rows = (
        (
            e.at,
            e.kind,
            tag("strong" if e.anchor else "span", e.text),
            link(url("/session", id=e.session_id), e.session_id) if e.session_id else "",
        )
        for e in entries
    )
    return table(("when", "kind", "text", "session"), rows)

"""The overview page: counts per level, what changed lately, growth, what needs review."""

from __future__ import annotations

from collections import Counter
from typing import Any

from planning_memory.viewer import charts, history
from planning_memory.viewer.html import Html, badge, definitions, link, section, table, tag, url
from planning_memory.viewer.layout import Page, Request

RECENT = 10


def page(req: Request) -> Page:
    every = req.reads.records()
    live = [r for r in every if not r.get("deleted_at")]
    sessions = req.reads.sessions()
    body = [
        section("In memory", counts(req, live, len(every) - len(live), len(sessions))),
        section("Growth", growth(req, every)),
        section("Needs review", review(req, live)),
        section("Changed lately", recent(live), recent_sessions(req)),
    ]
    return Page("Overview", Html("".join(body)))


def counts(req: Request, live: list[dict[str, Any]], deleted: int, sessions: int) -> Html:
    by_type = Counter(r["type"] for r in live)
    long_term = definitions(
        [
            ("records", link("/records", str(len(live)))),
            (
                "soft-deleted",
                link(url("/records", deleted="only"), str(deleted)) if deleted else "0",
            ),
            ("pinned", str(sum(1 for r in live if r.get("pinned")))),
            ("established patterns", str(sum(1 for r in live if r.get("established")))),
        ]
    )
    areas = req.reads.memo("code-areas", req.mem.code.areas, part="entity")
    levels = definitions(
        [
            ("short-term sessions", link("/sessions", str(sessions))),
            (
                "preferences",
                str(len(req.reads.memo("preferences", req.mem.preferences, part="long-term"))),
            ),
            ("code map feature areas", link("/code", str(len(areas)))),
        ]
    )
    chart = charts.hbars(sorted(by_type.items(), key=lambda kv: -kv[1]), "records per type")
    return tag("div", tag("div", long_term, levels), chart, class_="columns")


def growth(req: Request, every: list[dict[str, Any]]) -> Html:
    per_day = Counter(str(r.get("created_at") or "")[:10] for r in every if r.get("created_at"))
    lay = req.mem.layout
    commits = req.reads.memo(
        "commits", lambda: history.commits_per_day(lay.repo_root, lay.memory), max_age=60
    )
    note = tag(
        "p",
        "Line: records by the day they were created (cumulative). Bars: commits that changed ",
        tag("code", ".planning/memory"),
        " on that day (git history). The axis is the days with activity, evenly spaced.",
        class_="note",
    )
    return tag(
        "div",
        charts.growth(sorted(per_day.items()), sorted(commits.items()), "memory growth over time"),
        note,
    )


def review(req: Request, live: list[dict[str, Any]]) -> Html:
    flagged = [r for r in live if r.get("needs_review")]
    queue = req.reads.memo("review", req.mem.review_queue, part="short-term")
    anchored = table(
        ("record", "type", "anchors", "updated"),
        (
            (
                record_link(r),
                r["type"],
                ", ".join(_anchor_text(a) for a in r.get("anchors", [])),
                r.get("updated_at", ""),
            )
            for r in flagged
        ),
    )
    queued = table(
        ("queued", "title", "type", "what was said"),
        (
            (
                q.get("queued_at", ""),
                q.get("record", {}).get("title", ""),
                q.get("record", {}).get("type", ""),
                q.get("utterance", ""),
            )
            for q in queue
        ),
    )
    return Html(
        tag("h3", "Anchored code changed since saved ", badge(str(len(flagged)), "warn"))
        + anchored
        + tag(
            "h3",
            "Waiting in the review queue (",
            tag("code", "pmem review"),
            ") ",
            badge(str(len(queue))),
        )
        + queued
    )


def recent(live: list[dict[str, Any]]) -> Html:
    newest = sorted(live, key=lambda r: str(r.get("updated_at") or ""), reverse=True)[:RECENT]
    return table(
        ("updated", "record", "type", "tags"),
        (
            (r.get("updated_at", ""), record_link(r), r["type"], ", ".join(r.get("tags", [])))
            for r in newest
        ),
    )


def recent_sessions(req: Request) -> Html:
    newest = sorted(req.reads.sessions(), key=lambda s: s.updated_at, reverse=True)[:5]
    return table(
        ("updated", "session", "channel", "status", "messages"),
        (
            (
                s.updated_at,
                link(url("/session", id=s.id), s.name or s.goal or s.id),
                s.channel,
                s.status,
                str(s.message_count),
            )
            for s in newest
        ),
    )


def record_link(record: dict[str, Any]) -> Html:
    title = record.get("title") or record.get("name") or record.get("description") or record["id"]
    return link(url("/record", id=record["id"]), str(title))


def _anchor_text(anchor: dict[str, Any]) -> str:
    symbol = anchor.get("symbol")
    return f"{anchor.get('path')}::{symbol}" if symbol else str(anchor.get("path"))

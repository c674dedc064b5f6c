"""The overview page: counts per level, what changed lately, growth, what needs review."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from planning_memory.viewer import charts, history
from planning_memory.viewer.html import Html, badge, definitions, link, section, table, tag, url
from planning_memory.viewer.jobs import Pending, line
from planning_memory.viewer.layout import Page, Request

RECENT = 10
SHOWN = 50  # records needing review listed (the badge counts them all)
COMMITS_EVERY_S = 60


@dataclass(frozen=True)
class Summary:
    """What the overview shows of the records, worked out once per reading of them."""

    live: int
    deleted: int
    pinned: int
    established: int
    by_type: list[tuple[str, int]]
    per_day: list[tuple[str, int]]
    flagged: list[dict[str, Any]]
    newest: list[dict[str, Any]]


def summarize(every: list[dict[str, Any]]) -> Summary:
    live = [r for r in every if not r.get("deleted_at")]
    per_day = Counter(str(r.get("created_at") or "")[:10] for r in every if r.get("created_at"))
    return Summary(
        live=len(live),
        deleted=len(every) - len(live),
        pinned=sum(1 for r in live if r.get("pinned")),
        established=sum(1 for r in live if r.get("established")),
        by_type=sorted(Counter(r["type"] for r in live).items(), key=lambda kv: -kv[1]),
        per_day=sorted(per_day.items()),
        flagged=[r for r in live if r.get("needs_review")],
        newest=sorted(live, key=lambda r: str(r.get("updated_at") or ""), reverse=True)[:RECENT],
    )


def page(req: Request) -> Page:
    summary: Summary = req.reads.derived("overview", req.reads.records(), summarize)
    sessions = req.reads.sessions()
    body = [
        section("In memory", counts(req, summary, len(sessions))),
        section("Growth", growth(req, summary)),
        section("Needs review", review(req, summary.flagged)),
        section("Changed lately", recent(summary.newest), recent_sessions(req)),
    ]
    return Page("Overview", Html("".join(body)))


def counts(req: Request, summary: Summary, sessions: int) -> Html:
    deleted = summary.deleted
    long_term = definitions(
        [
            ("records", link("/records", str(summary.live))),
            (
                "soft-deleted",
                link(url("/records", deleted="only"), str(deleted)) if deleted else "0",
            ),
            ("pinned", str(summary.pinned)),
            ("established patterns", str(summary.established)),
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
    chart = charts.hbars(summary.by_type, "records per type")
    return tag("div", tag("div", long_term, levels), chart, class_="columns")


def growth(req: Request, summary: Summary) -> Html:
    lay = req.mem.layout
    try:
        commits: dict[str, int] = req.reads.jobs.kept(
            "commits",
            "Reading the memory's git history",
            lambda job: history.commits_per_day(lay.repo_root, lay.memory),
            every=COMMITS_EVERY_S,
            version=req.reads.stamps()["long-term"],
        )
        waiting = Html("")
    except Pending as running:
        commits, waiting = {}, line(running.job)  # the bars follow when git has answered
    note = tag(
        "p",
        "Line: records by the day they were created (cumulative). Bars: commits that changed ",
        tag("code", ".planning/memory"),
        " on that day (git history). The axis is the days with activity, evenly spaced.",
        class_="note",
    )
    return tag(
        "div",
        charts.growth(summary.per_day, sorted(commits.items()), "memory growth over time"),
        note,
        waiting,
    )


def review(req: Request, flagged: list[dict[str, Any]]) -> Html:
    queue = req.reads.memo("review", req.mem.longterm.review_queue, part="short-term")
    anchored = table(
        ("record", "type", "anchors", "updated"),
        (
            (
                record_link(r),
                r["type"],
                ", ".join(_anchor_text(a) for a in r.get("anchors", [])),
                r.get("updated_at", ""),
            )
            for r in flagged[:SHOWN]
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


def recent(newest: list[dict[str, Any]]) -> Html:
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

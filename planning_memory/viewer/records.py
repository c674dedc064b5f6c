"""The long-term pages: records with filters and full-text search, and one record's page."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from planning_memory.viewer import anchored, history
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
from planning_memory.viewer.overview import record_link

Record = dict[str, Any]
FILTERS = ("q", "type", "tag", "scope", "established", "severity", "pinned", "deleted")
TYPES = (
    "pattern",
    "mistake",
    "learning",
    "bugfix",
    "decision",
    "discovery",
    "architecture",
    "config",
    "preference",
)
SEARCH_LIMIT = 200
COUNTERS = (
    "occurrences",
    "duplicate_count",
    "revision_count",
    "praise_count",
    "access_count",
    "usage_count",
    "success_rate",
)


def listing(req: Request) -> Page:
    params = {k: req.arg(k) for k in FILTERS if req.arg(k)}
    try:
        found, note = _matching(req, params)
    except Pending as waiting:
        return Page("Long-term memory", Html(filters_form(params) + line(waiting.job)))
    page, size = req.page(), PAGE_SIZE
    shown = found[(page - 1) * size : page * size]
    rows = (
        (
            record_link(r),
            r["type"],
            flags(r),
            ", ".join(r.get("tags", [])),
            r.get("scope", "project"),
            r.get("updated_at", ""),
        )
        for r in shown
    )
    body = [
        filters_form(params),
        tag("p", note, class_="note") if note else "",
        table(("record", "type", "", "tags", "scope", "updated"), rows, id="records"),
        pager("/records", params, page, len(found), size),
    ]
    return Page("Long-term memory", Html("".join(body)))


def _matching(req: Request, params: dict[str, str]) -> tuple[list[Record], str]:
    records = req.reads.records()
    deleted = params.get("deleted", "no")
    if deleted == "no":
        records = [r for r in records if not r.get("deleted_at")]
    elif deleted == "only":
        records = [r for r in records if r.get("deleted_at")]
    for key, keep in _TESTS.items():
        if key in params:
            records = [r for r in records if keep(r, params[key])]
    query = params.get("q")
    if not query:
        return records, ""
    # the list holds every personal record, so the search looks at every project's too
    hits = req.reads.indexed(
        f"search-records:{query}",
        f"Searching the records for “{query}”",
        lambda: req.mem.search(
            query, sources=["record"], limit=SEARCH_LIMIT, remember=False, all_projects=True
        ),
    )
    by_id = {r["id"]: r for r in records}
    ranked = [by_id[h.ref_id] for h in hits if h.ref_id in by_id]
    return ranked, f"{len(ranked)} records match “{query}”, best first"


def _yes(value: object, wanted: str) -> bool:
    return bool(value) == (wanted == "yes")


_TESTS: dict[str, Callable[[Record, str], bool]] = {
    "type": lambda r, v: r["type"] == v,
    "tag": lambda r, v: v in r.get("tags", []),
    "scope": lambda r, v: r.get("scope", "project") == v,
    "established": lambda r, v: _yes(r.get("established"), v),
    "severity": lambda r, v: r.get("severity") == v,
    "pinned": lambda r, v: _yes(r.get("pinned"), v),
}


def flags(record: Record) -> Html:
    flags = [
        badge("pinned") if record.get("pinned") else "",
        badge("established", "ok") if record.get("established") else "",
        badge(str(record["severity"]), f"sev-{record['severity']}")
        if record.get("severity")
        else "",
        badge("needs review", "warn") if record.get("needs_review") else "",
        badge("deleted", "gone") if record.get("deleted_at") else "",
    ]
    return Html(" ".join(f for f in flags if f))


def select(name: str, options: tuple[str, ...], current: str, label: str) -> Html:
    choices = [tag("option", label, value="")]
    choices += [tag("option", o, value=o, selected=o == current) for o in options]
    return tag("select", choices, name=name, aria_label=label)


def filters_form(params: dict[str, str]) -> Html:
    return tag(
        "form",
        tag(
            "input",
            type="search",
            name="q",
            value=params.get("q", ""),
            placeholder="search the records",
            aria_label="search",
            id="q",
        ),
        select("type", TYPES, params.get("type", ""), "any type"),
        tag(
            "input",
            type="text",
            name="tag",
            value=params.get("tag", ""),
            placeholder="tag",
            aria_label="tag",
            size=10,
        ),
        select("scope", ("project", "personal"), params.get("scope", ""), "any scope"),
        select(
            "severity",
            ("low", "medium", "high", "critical"),
            params.get("severity", ""),
            "any severity",
        ),
        select("established", ("yes", "no"), params.get("established", ""), "established?"),
        select("pinned", ("yes", "no"), params.get("pinned", ""), "pinned?"),
        select("deleted", ("no", "yes", "only"), params.get("deleted", ""), "deleted: no"),
        tag("button", "Filter", type="submit"),
        action="/records",
        method="get",
        class_="filters",
    )


def detail(req: Request) -> Page:
    record_id = req.arg("id")
    record: Record = req.mem.find(record_id)
    title = str(record.get("title") or record.get("name") or record_id)
    fields = {
        k: v
        for k, v in sorted(record.items())
        if k not in ("body", "anchors") and k not in COUNTERS
    }
    body = [
        tag("p", flags(record), " ", tag("code", record_id)),
        section("Fields", definitions((k, _value(v)) for k, v in fields.items())),
        section("Body", definitions((k, _value(v)) for k, v in (record.get("body") or {}).items())),
        section("Anchors", anchors(req, record), id_="anchors"),
        section("Counters", definitions((k, _value(record[k])) for k in COUNTERS if k in record)),
        section("History in git", git_history(req, record)),
    ]
    return Page(title, Html("".join(body)))


def _value(value: object) -> Html | str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ", ".join(value) or "—"
    if value is None:
        return "—"
    return tag("pre", json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True))


def anchors(req: Request, record: Record) -> Html:
    """The record's anchors, each linked to its code, and whether that code changed since."""
    found = anchored.by_path([{**record, "deleted_at": None}])
    kept = [a for items in found.values() for a in items]
    states = anchored.states(req, kept)
    rows = (
        (
            link(url("/code/file", path=a.path), a.path),
            anchored.symbol_link(a.path, a.symbol),
            str(a.hash or "—"),
            anchored.state_badge(state),
        )
        for a, state in zip(kept, states, strict=True)
    )
    review = record.get("needs_review")
    note = tag("p", "The anchored code changed since this was saved: review it.", class_="warn")
    head = ("path", "symbol", "hash when saved", "code since saved")
    return Html((note if review else "") + table(head, rows, class_="anchors"))


def git_history(req: Request, record: Record) -> Html:
    lay = req.mem.layout
    if record.get("scope", "project") != "project":
        return tag("p", "a personal record lives outside the repository", class_="empty")
    path = lay.record_path(record["type"], record["id"])
    try:  # ``git log --follow`` of a long history takes a while: in the background
        commits = req.reads.jobs.run(
            f"git-log:{path}:{req.stamp}",
            "Reading the record's history in git",
            lambda job: history.file_log(lay.repo_root, path),
        )
    except Pending as waiting:
        return line(waiting.job)
    return table(
        ("date", "commit", "author", "subject"),
        ((c.date, tag("code", c.sha[:10]), c.author, c.subject) for c in commits),
    )

"""What the agent sees: the context block for a task, item by item, and what was injected.

The block is built by ``Memory.contextual.context(..., touch=False)``: ``Memory.context`` (what
``pmem context`` and the SessionStart hook call) without counting its items as used, so the
text shown is the text an agent gets and looking at it changes nothing. Each item shows why it
is there and its share of the token budget (tokens estimated as characters / 4, as the packer
counts them).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from planning_memory.viewer import charts
from planning_memory.viewer.html import Html, definitions, section, table, tag
from planning_memory.viewer.jobs import Pending, line
from planning_memory.viewer.layout import Page, Request

CHARS_PER_TOKEN = 4
FORMATS = ("md", "xml", "json", "agent")


def page(req: Request) -> Page:
    task, budget, fmt = req.arg("task"), req.arg("budget"), req.arg("format", "md")
    body = [form(task, budget, fmt)]
    if task:
        body.append(section("The context block", pack_view(req, task, budget, fmt), id_="pack"))
    body.append(section("Injected at session start", injections(req), id_="injections"))
    return Page("What the agent sees", Html("".join(body)))


def form(task: str, budget: str, fmt: str) -> Html:
    return tag(
        "form",
        tag(
            "input",
            type="text",
            name="task",
            value=task,
            id="task",
            size=60,
            placeholder="a task, e.g. add password reset to the login form",
            aria_label="task",
        ),
        tag(
            "input",
            type="number",
            name="budget",
            value=budget,
            min=100,
            max=100000,
            placeholder="budget",
            aria_label="token budget",
            id="budget",
        ),
        tag(
            "select",
            [tag("option", f, value=f, selected=f == fmt) for f in FORMATS],
            name="format",
            aria_label="format",
        ),
        tag("button", "Show the context", type="submit"),
        action="/context",
        method="get",
        class_="filters",
    )


def tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def pack_view(req: Request, task: str, budget: str, fmt: str) -> Html:
    wanted = int(budget) if budget.isdigit() else None
    shape = fmt if fmt in FORMATS else "md"
    try:
        pack = req.reads.indexed(
            f"context:{wanted}:{shape}:{task}",
            f"Building the context block for “{task}”",
            lambda: req.mem.contextual.context(task, budget=wanted, fmt=shape, touch=False),
        )
    except Pending as waiting:
        return line(waiting.job)
    rows, per_section = [], Counter[str]()
    for item in pack.items:
        cost = tokens(item.text)
        per_section[item.section] += cost
        rows.append(
            (
                item.section,
                tag("code", item.id),
                item.text,
                item.reason,
                str(cost),
                f"{100 * cost / max(1, pack.budget):.1f}%",
            )
        )
    summary = definitions(
        [
            ("tokens", f"{pack.tokens} of a budget of {pack.budget}"),
            ("items", str(len(pack.items))),
            ("left out (did not fit)", str(pack.dropped)),
        ]
    )
    shares = charts.hbars(per_section.most_common(), "tokens per section", " tok")
    return Html(
        tag("div", summary, shares, class_="columns")
        + tag("h3", "Exactly what is injected")
        + tag("pre", pack.text, id="context-text", class_="block")
        + tag("h3", "Items, with why each is there")
        + table(("section", "id", "text", "reason", "tokens", "of budget"), rows, id="items")
    )


def injections(req: Request, session_id: str | None = None) -> Html:
    """What was injected at each session start, newest first, each one folded."""
    found = req.reads.injections(session_id, limit=50)
    if not found:
        return tag(
            "p",
            "No injections recorded yet: the history fills in as agents start sessions "
            "with the hooks installed (`pmem install`).",
            class_="empty",
        )
    return Html("".join(_injection(i) for i in found))


def _injection(item: dict[str, Any]) -> Html:
    budget = max(1, int(item.get("budget") or 0))
    rows = (
        (
            str(i.get("section") or i.get("kind") or ""),
            tag("code", str(i.get("id", ""))),
            str(i.get("reason", "")),
            str(i.get("tokens", "")),
            f"{100 * int(i.get('tokens') or 0) / budget:.1f}%",
        )
        for i in item.get("items", [])
    )
    head = (
        f"{item.get('at', '')} · {item.get('event', '')} · session "
        f"{item.get('session_id', '')} · {item.get('tokens', '?')} of "
        f"{item.get('budget', '?')} tokens"
    )
    return tag(
        "details",
        tag("summary", head),
        definitions([("task", item.get("task") or "—")]),
        table(("section", "id", "reason", "tokens", "of budget"), rows),
        tag("pre", str(item.get("text", "")), class_="block"),
        class_="injection",
        id=f"injection-{item.get('session_id', '')}-{item.get('at', '')}",  # kept open on refresh
    )

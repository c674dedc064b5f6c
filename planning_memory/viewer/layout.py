"""The frame around every page: the document, its navigation and the request a page reads."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from planning_memory.viewer.html import Html, link, tag

if TYPE_CHECKING:
    from planning_memory.memory import Memory
    from planning_memory.viewer.reads import Reads

NAV = (
    ("/", "Overview"),
    ("/records", "Long-term"),
    ("/sessions", "Sessions"),
    ("/context", "What the agent sees"),
    ("/code", "Code map"),
)
PAGE_SIZE = 50


@dataclass(frozen=True)
class Request:
    """One page request: its path, its query parameters (first value of each) and the reads."""

    path: str
    params: Mapping[str, str]
    reads: Reads
    stamp: str = ""

    @property
    def mem(self) -> Memory:
        return self.reads.mem

    def arg(self, name: str, default: str = "") -> str:
        return self.params.get(name, default).strip()

    def page(self) -> int:
        text = self.arg("page", "1")
        return max(1, int(text)) if text.isdigit() else 1


@dataclass(frozen=True)
class Page:
    title: str
    body: Html
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)


def document(page: Page, current: str, stamp: str, repo: str) -> str:
    """The whole HTML document of ``page``."""
    nav = tag(
        "nav",
        tag("span", "pmem ui", class_="brand"),
        [
            link(href, label, class_="current" if _section(current) == href else None)
            for href, label in NAV
        ],
        tag("span", repo, class_="repo", title="the repository whose memory this is"),
        class_="top",
    )
    head = tag(
        "head",
        tag("meta", charset="utf-8"),
        tag("meta", name="viewport", content="width=device-width, initial-scale=1"),
        tag("title", f"{page.title} · pmem ui"),
        tag("link", rel="icon", href="data:,"),
        tag("link", rel="stylesheet", href="/static/app.css"),
        tag("script", src="/static/app.js", defer=True),
    )
    main = tag("main", tag("h1", page.title), page.body, id="content", data_stamp=stamp)
    return "<!doctype html>\n" + tag("html", head, tag("body", nav, main), lang="en")


def _section(path: str) -> str:
    first = "/" + path.strip("/").split("/")[0]
    return first if first != "/" else "/"


def not_found(what: str) -> Page:
    return Page("Not found", tag("p", what, class_="error"), status=404)

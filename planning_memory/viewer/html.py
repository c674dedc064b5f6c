"""Building HTML safely: every text is escaped unless it is already ``Html``.

Pure: values in, markup out. Records hold whatever agents wrote, so nothing here trusts a
string: ``tag`` escapes its text children and every attribute value, and ``Html`` marks the
markup this module (or ``charts``) built.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlencode

Child = Any  # str | Html | int | None | an iterable of children


class Html(str):
    """Markup that is safe to emit as is (built here, never taken from a record)."""


def esc(value: object) -> Html:
    """``value`` as text: ``<``, ``>``, ``&`` and quotes escaped."""
    return value if isinstance(value, Html) else Html(html.escape(str(value), quote=True))


def join(children: Iterable[Child]) -> Html:
    return Html("".join(_render(c) for c in children))


def _render(child: Child) -> str:
    if child is None or child is False:
        return ""
    if isinstance(child, Html):
        return child
    if isinstance(child, str | int | float):
        return esc(child)
    return join(child)


def tag(name: str, /, *children: Child, **attrs: object) -> Html:
    """``<name attrs>children</name>``; ``class_`` is ``class``; a None/False attribute is left
    out, a True one written bare."""
    parts = [name]
    for key, value in attrs.items():
        if value is None or value is False:
            continue
        attr = key.rstrip("_").replace("_", "-")
        parts.append(attr if value is True else f'{attr}="{esc(value)}"')
    head = "<" + " ".join(parts) + ">"
    if name in ("input", "br", "meta", "link", "hr"):
        return Html(head)
    return Html(head + join(children) + f"</{name}>")


def url(path: str, /, **params: object) -> str:
    """``path`` with its query string (parameters that are None or "" left out)."""
    kept = {k: str(v) for k, v in params.items() if v not in (None, "", False)}
    return path + ("?" + urlencode(kept) if kept else "")


def link(href: str, /, *children: Child, **attrs: object) -> Html:
    return tag("a", *children, href=href, **attrs)


def table(head: Iterable[str], rows: Iterable[Iterable[Child]], **attrs: object) -> Html:
    """A table with a header row; an empty body says so."""
    body = [tag("tr", *(tag("td", cell) for cell in row)) for row in rows]
    if not body:
        return tag("p", "nothing here", class_="empty")
    return tag(
        "table", tag("thead", tag("tr", *(tag("th", h) for h in head))), tag("tbody", body), **attrs
    )


def definitions(pairs: Mapping[str, Child] | Iterable[tuple[str, Child]]) -> Html:
    """A ``<dl>`` of label / value pairs (values None or "" left out)."""
    items = pairs.items() if isinstance(pairs, Mapping) else pairs
    return tag("dl", [(tag("dt", k), tag("dd", v)) for k, v in items if v not in (None, "", [])])


def pager(path: str, params: Mapping[str, object], page: int, total: int, size: int) -> Html:
    """Previous / next links and where this page is, for a list of ``total`` items."""
    pages = max(1, -(-total // size))
    prev = link(url(path, **{**params, "page": page - 1}), "← previous") if page > 1 else ""
    nxt = link(url(path, **{**params, "page": page + 1}), "next →") if page < pages else ""
    return tag("nav", prev, f" page {page} of {pages} ({total} in all) ", nxt, class_="pager")


def badge(text: str, kind: str = "") -> Html:
    return tag("span", text, class_=f"badge {kind}".strip())


def section(title: str, *children: Child, id_: str | None = None) -> Html:
    return tag("section", tag("h2", title), *children, id=id_)

"""The memories anchored to code: by file, and whether the code changed since they were saved.

A record's ``anchors`` name a file (``path``), maybe a function or class in it (``symbol``), and
the hash of that code when the record was saved. The code map holds the current hashes: an
anchor whose hash differs now (or whose code is gone) points at changed code. The index of
anchors by file is built from the records the pages already hold, once per reading of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from planning_memory.errors import PlanningMemoryError
from planning_memory.viewer.html import Html, badge, link, table, url

if TYPE_CHECKING:
    from planning_memory.viewer.layout import Request

Record = dict[str, Any]


@dataclass(frozen=True)
class Anchored:
    """One anchor of one live record."""

    record: Record
    path: str
    symbol: str | None
    hash: str | None


def by_path(records: list[Record]) -> dict[str, list[Anchored]]:
    """The anchors of the live records, by the file they name (newest records first)."""
    found: dict[str, list[Anchored]] = {}
    for record in records:
        if record.get("deleted_at"):
            continue
        for anchor in record.get("anchors") or ():
            if not isinstance(anchor, dict) or not isinstance(anchor.get("path"), str):
                continue
            symbol = anchor.get("symbol")
            digest = anchor.get("hash")
            found.setdefault(anchor["path"], []).append(
                Anchored(
                    record,
                    anchor["path"],
                    symbol if isinstance(symbol, str) and symbol else None,
                    digest if isinstance(digest, str) and digest else None,
                )
            )
    return found


def of_file(req: Request, path: str) -> list[Anchored]:
    """The anchors that name ``path`` (the file itself or a symbol in it)."""
    records = req.reads.records()
    index: dict[str, list[Anchored]] = req.reads.derived("anchored", records, by_path)
    return index.get(path, [])


def states(req: Request, anchors: list[Anchored]) -> list[str]:
    """Per anchor: ``same`` (the code hashes as when saved), ``changed`` (differently, or it
    is gone) or ``unknown`` (no hash was kept when it was saved)."""
    if not anchors:
        return []
    try:
        now = req.mem.code.complete_anchors([{"path": a.path, "symbol": a.symbol} for a in anchors])
    except PlanningMemoryError:
        now = [{"hash": None} for _ in anchors]
    return [
        "unknown" if a.hash is None else ("same" if a.hash == n.get("hash") else "changed")
        for a, n in zip(anchors, now, strict=True)
    ]


def state_badge(state: str) -> Html:
    if state == "changed":
        return badge("code changed since", "warn")
    if state == "same":
        return badge("unchanged", "ok")
    return badge("no hash kept")


def symbol_link(path: str, symbol: str | None) -> Html | str:
    if not symbol:
        return "the whole file"
    return link(url("/code/name", q=f"{path}::{symbol}"), symbol)


def listing(req: Request, anchors: list[Anchored], *, with_symbol: bool = True) -> Html:
    """A table of the memories of ``anchors``: the memory, its type, what it is anchored to
    and whether that code changed since."""
    from planning_memory.viewer.overview import record_link

    found = states(req, anchors)
    rows = (
        (
            record_link(a.record),
            str(a.record.get("type", "")),
            *((symbol_link(a.path, a.symbol),) if with_symbol else ()),
            state_badge(state),
        )
        for a, state in zip(anchors, found, strict=True)
    )
    head = ("memory", "type", *(("anchored to",) if with_symbol else ()), "code since saved")
    return table(head, rows, class_="anchored")


def matches(anchor: Anchored, function: dict[str, Any]) -> bool:
    """Whether ``anchor`` names ``function`` (its qualified name, its name, or the class
    holding it)."""
    if not anchor.symbol:
        return False
    qualified = str(function.get("qualified_name") or "")
    return anchor.symbol in (qualified, function.get("name")) or qualified.startswith(
        anchor.symbol + "."
    )

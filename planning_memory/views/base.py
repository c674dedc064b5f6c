"""The base of a three-way import: what changed in a view's items since its file was written.

A hand edit of patterns.md or mistakes.md is imported against the render it was made on
(``workflow``): an item missing from the edit but absent from that render too is a record
added since, not a deletion. That render is not kept as a copy of the file (megabytes,
rewritten at every save): the render cache keeps the items of the records as they are now,
and ``Since`` keeps, per view, what changed since the render its file last got (the items
that went, as they were, and the digests that came) with that render's header line. The
base is rebuilt from them only when an import asks for it, and used only when its header line
is the one the file was written with (``state.Views.base_text``). Pure: no file I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Since:
    """A view's changes since its file was last written: ``went`` (digest -> the item it
    gave) and ``came`` (digests), with that render's ``header`` line. ``known`` False: not
    known (no render written since the items were kept, or the kept items were lost)."""

    header: str = ""
    went: dict[str, list[Any]] = field(default_factory=dict)
    came: set[str] = field(default_factory=set)
    known: bool = False

    @classmethod
    def of(cls, value: Any) -> Since:
        """From ``as_json``; an unknown one from anything else."""
        try:
            header, went, came = value["header"], dict(value["went"]), set(value["came"])
        except (KeyError, TypeError, ValueError):
            return cls()
        if not isinstance(header, str) or not all(isinstance(i, list) for i in went.values()):
            return cls()
        return cls(header, went, came, known=True)

    def as_json(self) -> dict[str, Any] | None:
        if not self.known:
            return None
        return {"header": self.header, "went": self.went, "came": sorted(self.came)}

    def moved(self, went: Mapping[str, list[Any]], came: Iterable[str]) -> None:
        """The kept items lost ``went`` (digest -> item) and gained ``came``."""
        if not self.known:
            return
        for digest, item in went.items():
            if digest in self.came:
                self.came.discard(digest)
            else:
                self.went[digest] = item
        for digest in came:
            if self.went.pop(digest, None) is None:
                self.came.add(digest)

    def written(self, header: str) -> bool:
        """The view's file now holds the render of the kept items, with ``header``; True when
        that changed what is kept."""
        before = self.as_json()
        self.header, self.went, self.came, self.known = header, {}, set(), True
        return self.as_json() != before

    def items(self, kept: Mapping[str, list[Any]]) -> dict[str, list[Any]] | None:
        """The items of that render (digest -> item), from the ``kept`` ones; None unknown."""
        if not self.known:
            return None
        found = {d: item for d, item in kept.items() if d not in self.came}
        return found | self.went

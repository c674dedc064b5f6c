"""``LongTerm``: the long-term level of one memory tree (records, learning rules, review queue).

One object holds the tree, its settings and the clock, so the rules in ``rules`` and
``lessons`` are called without threading them through every call. It never refreshes the
Markdown views nor the search index: the ``Memory`` facade does that after each write.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from planning_memory.core import LEARNING_TYPES, Layout, Record
from planning_memory.errors import InputError, NotFoundError
from planning_memory.longterm import catalog, lessons, lookups, preferences, records, rules
from planning_memory.store import Store

SEVERITY_ORDER = {"critical": 0, "high": 1, "medium": 2, "low": 3}


def priority(record: Record) -> tuple[Any, ...]:
    """Pinned, then established, then most severe, most used, most repeated."""
    return (
        not record.get("pinned"),
        not record.get("established", False),
        SEVERITY_ORDER.get(record.get("severity", ""), 4),
        -record.get("usage_count", 0),
        -record.get("occurrences", 0),
        record["id"],
    )


def observation_fields(
    record_type: str,
    title: str,
    *,
    what: str = "",
    learned: str = "",
    description: str = "",
    example: str = "",
    correction: str = "",
    severity: str = "medium",
) -> dict[str, Any]:
    """Seed 003's observation mapped onto a type's own fields: a pattern's description is its
    *what*, a mistake's correction its *learned*."""
    if record_type == "pattern":
        return {"description": description or what or title, "example": example}
    if record_type == "mistake":
        return {
            "description": description or what or title,
            "correction": correction or learned,
            "severity": severity,
        }
    return {"learned": learned} if learned else {}


class LongTerm:
    """Patterns, mistakes, learnings and preferences of one tree, with seed 000's and seed
    003's rules (reinforce, escalate, upsert by topic, dedup window, soft delete, pin)."""

    def __init__(
        self, layout: Layout, store: Store, config: dict[str, Any], clock: Callable[[], datetime]
    ) -> None:
        self.tree = rules.Tree(layout, store, config)
        self.clock = clock

    # -- reading -----------------------------------------------------------------------------
    def records(self, types: Sequence[str] = (), *, deleted: bool = False) -> list[Record]:
        return records.load_all(self.tree.layout, self.tree.store, types or None, deleted=deleted)

    def files(self, since: int = -1) -> tuple[str, int, list[lookups.Row], list[str]]:
        """The record files by the one catalog of them, brought up to date first: its epoch
        (a new catalog file restarts the generations), its generation now, every record
        file's row (or only those changed after generation ``since``) and the files gone
        since (``Catalog.rows``). What reads records over and over (the viewer) asks this
        rather than listing the folders itself."""
        shelf = self._catalog()
        gen, rows, gone = shelf.rows(since)
        return shelf.generations()[""], gen, rows, gone

    def _catalog(self) -> catalog.Catalog:
        """The catalog of the record files, brought up to date."""
        shelf = catalog.Catalog.of(self.tree.layout, self.tree.store)
        shelf.current()
        return shelf

    def get(self, record_id: str) -> Record:
        value: Record = records.locate(self.tree.layout, self.tree.store, record_id).value
        return value

    def preferences(self, *, skip_broken: bool = False) -> dict[str, Any]:
        """``preferences.json`` ({} when there is none). A broken one is an ``InputError``,
        or with ``skip_broken`` (a command that only counts or shows) a warning and {}."""
        try:
            return preferences.read(self.tree.layout, self.tree.store)
        except InputError as exc:
            if not skip_broken:
                raise
            self.tree.store.skip_broken(exc)
            return {}

    def set_preferences(self, changes: Mapping[str, Any]) -> dict[str, Any]:
        """Set ``section.key`` preferences in ``preferences.json`` (``None`` removes one)."""
        return preferences.apply(self.tree.layout, self.tree.store, changes, self.clock())

    def ranked(self, record_type: str) -> list[Record]:
        """Live records of one type, in ``priority`` order."""
        return sorted(self.records([record_type]), key=priority)

    def counts(self) -> dict[str, Any]:
        """How many records (live, deleted, per type, pinned, established patterns) and
        preferences there are (``pmem show``), from the catalog of the record files."""
        tally = self._catalog().tally()
        preferences = self.preferences(skip_broken=True)
        return {
            "records": tally["records"],
            "deleted": tally["deleted"],
            "by_type": tally["by_type"],
            "preferences": sum(1 for k in preferences if k != "updated_at"),
            "pinned": tally["pinned"],
            "established_patterns": tally["established_patterns"],
        }

    # -- learning ----------------------------------------------------------------------------
    def save(self, record_type: str, title: str, **fields: Any) -> rules.Outcome:
        """A new record of any type, through the rules (similar -> reinforce, same topic ->
        upsert, duplicate -> count)."""
        if record_type == "pattern":
            fields.setdefault("name", title)
        now = self.clock()
        return rules.remember(
            self.tree, rules.new_record(record_type, now, title=title, **fields), now
        )

    def learn_pattern(
        self, name: str, description: str = "", example: str = "", **fields: Any
    ) -> rules.Outcome:
        return rules.learn_pattern(
            self.tree, self.clock(), name=name, description=description, example=example, **fields
        )

    def learn_mistake(
        self, description: str, correction: str = "", severity: str = "medium", **fields: Any
    ) -> rules.Outcome:
        return rules.learn_mistake(
            self.tree,
            self.clock(),
            description=description,
            correction=correction,
            severity=severity,
            **fields,
        )

    def learn_utterance(
        self, utterance: str, *, source: str = "cli", **fields: Any
    ) -> lessons.Lesson:
        return lessons.learn_utterance(self.tree, self.clock(), utterance, source=source, **fields)

    def review_queue(self) -> list[dict[str, Any]]:
        return lessons.pending(self.tree)

    def accept(self, record_id: str) -> rules.Outcome:
        return lessons.accept(self.tree, self.clock(), record_id)

    def reject(self, record_id: str) -> dict[str, Any]:
        return lessons.reject(self.tree, record_id)

    # -- changing one record -----------------------------------------------------------------
    def praise(self, record_id: str | None = None) -> rules.Outcome:
        return rules.praise(self.tree, self.clock(), record_id)

    def forget(self, record_id: str, *, hard: bool = False) -> rules.Outcome:
        return rules.forget(self.tree, self.clock(), record_id, hard=hard)

    def restore(self, record_id: str) -> rules.Outcome:
        return rules.restore(self.tree, self.clock(), record_id)

    def pin(self, record_id: str, pinned: bool = True) -> rules.Outcome:
        return rules.pin(self.tree, self.clock(), record_id, pinned=pinned)

    def applied(self, record_id: str) -> rules.Outcome:
        """One more application of a learning (seed 000's ``applications``). Its
        ``updated_at`` stays: being used is not an edit, and recency ranking must not feed
        on the memory's own deliveries."""
        with self.tree.store.lock():
            loaded = records.locate(self.tree.layout, self.tree.store, record_id)
            record: Record = loaded.value
            if record["type"] not in LEARNING_TYPES:
                raise InputError(
                    f"{record_id} is a {record['type']}; applications count learnings",
                    record_id=record_id,
                    hint="a pattern counts its uses with `pmem praise ID`",
                )
            counted = {**record, "applications": int(record.get("applications") or 0) + 1}
            records.save(self.tree.layout, self.tree.store, counted, expect=loaded.digest)
            return rules.Outcome("applied", counted)

    def applied_once(self, ids: Sequence[str], *others: LongTerm) -> list[str]:
        """One more application of each learning of ``ids``, in this tree or else in the first
        of ``others`` (the personal store's) that holds it; the ids counted."""
        counted = []
        for rid in ids:
            for level in (self, *others):
                with contextlib.suppress(NotFoundError):
                    level.applied(rid)
                    counted.append(rid)
                    break
        return counted

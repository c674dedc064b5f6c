"""Long-term rules (seed 000 and seed 003), deterministic and offline.

- A new pattern similar to a live one reinforces it (``usage_count`` + 1; established at 5).
- A repeated mistake increments ``occurrences``; the 3rd occurrence raises severity one level.
- Praise reinforces the pattern used most recently.
- Same ``topic_key`` in the same scope upserts (``revision_count`` + 1), whatever the type.
- An exact duplicate within the dedup window (15 min) bumps ``duplicate_count``; a stated
  rule or ``[MEMORIZE]`` fact (a ``trigger``) said again, whenever, does too and raises its
  ``confidence`` (``confidence.py``).
- Past ``maxPatterns`` / ``maxMistakes`` the least used record that is neither established nor
  pinned is archived (soft delete).
- Delete is soft unless asked; pin and unpin.

Functions take the tree (``layout``, ``store``), the effective config and ``now``; they return
an ``Outcome`` saying what happened, for the CLI to print.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar

from planning_memory.core import (
    ESCALATE_AT,
    ESTABLISHED_AT,
    ID_PREFIX,
    LONG_TERM_TYPES,
    SEVERITIES,
    Layout,
    Record,
    codec,
    new_id,
    new_long_term,
    parse_timestamp,
    timestamp,
)
from planning_memory.errors import InputError, NotFoundError, StorageError
from planning_memory.longterm import catalog, confidence, lookups, records, similarity
from planning_memory.store import Store

_T = TypeVar("_T")


@dataclass
class Outcome:
    """What a learning call did: ``action`` is one of created, reinforced, escalated, upserted,
    duplicate, deleted, restored, pinned, unpinned, queued, suggested. ``merged`` is set when a
    new pattern or mistake was merged into the similar ``record`` (reinforced or escalated)
    rather than saved; ``archived`` names the records a save archived past a cap;
    ``warnings`` what the call saved but could not finish (one line each, for stderr)."""

    action: str
    record: Record
    archived: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    merged: float | None = None  # the similarity score when a save merged into ``record``
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "id": self.record.get("id"),
            "type": self.record.get("type"),
            "title": self.record.get("title"),
            "archived": self.archived,
            "merged": None
            if self.merged is None
            else {"into": self.record.get("id"), "similarity": self.merged},
            "notes": self.notes,
        }


def written_ids(outcome: object) -> list[str] | None:
    """The ids of the records a long-term write names (an ``Outcome``'s record and what it
    archived, or a list of ids); None when it names none (the end of a bulk write)."""
    if isinstance(outcome, list):
        return [str(rid) for rid in outcome]
    record = getattr(outcome, "record", None)
    if not isinstance(record, dict):
        return None
    return [str(record.get("id", "")), *getattr(outcome, "archived", [])]


@dataclass(frozen=True)
class Tree:
    """Where to learn: a memory tree, its store and its effective settings."""

    layout: Layout
    store: Store
    config: dict[str, Any]

    @property
    def long_term(self) -> dict[str, Any]:
        settings: dict[str, Any] = self.config["memory"]["longTerm"]
        return settings


def _touch(record: Record, now: datetime) -> Record:
    return {**record, "updated_at": timestamp(now)}


def _within(stamp: str, now: datetime, minutes: int) -> bool:
    return now - parse_timestamp(stamp) <= timedelta(minutes=minutes)


def _looked_up(shelf: catalog.Catalog, record_type: str, find: Callable[[], _T]) -> _T:
    """``find()`` over a fresh catalog; once more after a full refresh of the folder if a
    record it picked changed in place since it was catalogued."""
    shelf.refresh(record_type)
    try:
        return find()
    except lookups.Stale:
        shelf.refresh(record_type, force=True)
        return find()


TOPIC_KINDS = ("learning", "pattern", "mistake")  # a type per long-term folder


def _same_topic(shelf: catalog.Catalog, record: Record) -> Record | None:
    """The live record of ``record``'s topic in its scope and project, whatever its type (the
    same type first); every folder is brought up to date for it (forced after a stale pick).
    In the personal store a topic saved from one project does not update another's."""
    key = record.get("topic_key")
    if not key:
        return None
    for force in (False, True):
        for kind in TOPIC_KINDS:
            shelf.refresh(kind, force=force)
        entries = shelf.same_topic(record["type"], record.get("scope"), key)
        try:
            found = (shelf.load(entry) for entry in entries)
            return next((r for r in found if r.get("project") == record.get("project")), None)
        except lookups.Stale:
            if force:
                raise
    return None


def _duplicate(
    shelf: catalog.Catalog, record: Record, now: datetime, minutes: int | None
) -> Record | None:
    """The live record with the same content saved within ``minutes`` (None: ever)."""
    for entry, updated_at in shelf.same_fingerprint(record):
        if minutes is None or _within(updated_at, now, minutes):
            return shelf.load(entry)
    return None


def _similar(
    shelf: catalog.Catalog, record: Record, threshold: float
) -> tuple[Record, float] | None:
    """The live record of the same type and scope most similar to ``record`` (first in file
    order on a tie) and its score, if it reaches ``threshold``."""
    mine = similarity.profile(lookups.text_of(record))
    entries = shelf.similar(record["type"], record.get("scope"), mine, threshold)
    found = similarity.best_profile(
        mine, ((str(i), e.profile) for i, e in enumerate(entries) if e.profile), threshold
    )
    return None if found is None else (shelf.load(entries[int(found[0])]), found[1])


def _save(tree: Tree, record: Record) -> Record:
    records.save(tree.layout, tree.store, record)
    return record


def _match(tree: Tree, shelf: catalog.Catalog, record: Record, now: datetime) -> Outcome | None:
    """What ``remember`` does with an existing record, if one matches: topic upsert, dedup
    window, similarity (patterns and mistakes)."""
    topic = _same_topic(shelf, record)
    if topic is not None:
        return _upsert_topic(tree, topic, record, now)
    # seed 002 never stores a [MEMORIZE] fact twice, nor is a rule a person stated saved twice
    # (said again, it is surer); other saves repeat after the window
    window = None if record.get("trigger") else int(tree.long_term["dedupWindowMinutes"])
    dup = _duplicate(shelf, record, now, window)
    if dup is not None:
        bumped = _touch({**dup, "duplicate_count": dup["duplicate_count"] + 1}, now)
        if isinstance(dup.get("confidence"), int | float):  # said again: surer of it
            bumped["confidence"] = confidence.reinforced(float(dup["confidence"]))
        return Outcome("duplicate", _save(tree, bumped))
    if record["type"] in lookups.SIMILAR_TYPES:
        threshold = float(tree.long_term["similarityThreshold"])
        match = _similar(shelf, record, threshold)
        if match is not None:
            outcome = _repeat(tree, match[0], now)
            outcome.merged = round(match[1], 3)
            outcome.notes.insert(
                0,
                f"merged into {match[0]['id']}: {match[1]:.0%} similar (similarityThreshold "
                f"{threshold:g}), so no new {record['type']} was saved",
            )
            return outcome
    return None


def remember(tree: Tree, record: Record, now: datetime) -> Outcome:
    """Store ``record`` (complete, with a fresh id) applying topic upsert, the dedup window and,
    for patterns and mistakes, similarity; then enforce the caps. The candidates come from the
    catalog (``catalog.Catalog``), not from reading every record of the type. A text that
    UTF-8 cannot hold (an argument that was not UTF-8) is refused before anything is looked
    up or written."""
    codec.check_encodable(record)
    with tree.store.lock():
        shelf = catalog.Catalog.of(tree.layout, tree.store)
        matched = _looked_up(shelf, record["type"], lambda: _match(tree, shelf, record, now))
        if matched is not None:
            return matched
        outcome = Outcome("created", _save(tree, record))
        return _capped(tree, outcome, now)


def _upsert(old: Record, new: Record, now: datetime) -> Record:
    keep = {
        "id",
        "created_at",
        "revision_count",
        "duplicate_count",
        "pinned",
        "usage_count",
        "occurrences",
        "applications",
        "established",
    }
    merged = {**old, **{k: v for k, v in new.items() if k not in keep}}
    merged["revision_count"] = old["revision_count"] + 1
    merged["deleted_at"] = None
    return _touch(merged, now)


def _upsert_topic(tree: Tree, old: Record, new: Record, now: datetime) -> Outcome:
    """Seed 003's upsert by topic, across types. A type of the same folder (a decision saved
    again as architecture) changes in place, keeping the id. A type of another folder (a
    decision saved again as a pattern) cannot keep the id (ids carry the folder's prefix): the
    new record takes the topic's history (created_at, revision_count + 1, pinned) and the old
    one is soft-deleted; the outcome's note names both ids."""
    if ID_PREFIX[old["type"]] == ID_PREFIX[new["type"]]:
        outcome = Outcome("upserted", _save(tree, _upsert(old, new, now)))
        if old["type"] != new["type"]:
            outcome.notes.append(f"type changed from {old['type']} to {new['type']}")
        return outcome
    history: Record = {k: old[k] for k in ("created_at", "pinned") if k in old}
    moved = _touch({**new, **history, "revision_count": old["revision_count"] + 1}, now)
    _save(tree, moved)
    _save(tree, _touch({**old, "deleted_at": timestamp(now)}, now))
    outcome = Outcome("upserted", moved)
    outcome.notes.append(
        f"type changed from {old['type']} to {new['type']}: {old['id']} is replaced by "
        f"{moved['id']} and soft-deleted (`pmem memory show {old['id']}` still shows it)"
    )
    return _capped(tree, outcome, now)


def _repeat(tree: Tree, match: Record, now: datetime) -> Outcome:
    if match["type"] == "pattern":
        return reinforce(tree, match, now)
    return repeat_mistake(tree, match, now)


def reinforce(tree: Tree, pattern: Record, now: datetime) -> Outcome:
    """One more use of ``pattern``; established at ``ESTABLISHED_AT`` uses."""
    uses = pattern["usage_count"] + 1
    updated = _touch(
        {
            **pattern,
            "usage_count": uses,
            "established": pattern["established"] or uses >= ESTABLISHED_AT,
        },
        now,
    )
    outcome = Outcome("reinforced", _save(tree, updated))
    if updated["established"] and not pattern["established"]:
        outcome.notes.append(f"established after {uses} uses")
    return outcome


def repeat_mistake(tree: Tree, mistake: Record, now: datetime) -> Outcome:
    """One more occurrence; the ``ESCALATE_AT``-th raises severity one level."""
    count = mistake["occurrences"] + 1
    severity = mistake["severity"]
    action = "reinforced"
    if count == ESCALATE_AT and severity != SEVERITIES[-1]:
        severity = SEVERITIES[SEVERITIES.index(severity) + 1]
        action = "escalated"
    updated = _touch(
        {**mistake, "occurrences": count, "severity": severity, "last_occurrence": timestamp(now)},
        now,
    )
    outcome = Outcome(action, _save(tree, updated))
    if action == "escalated":
        outcome.notes.append(f"seen {count} times: severity raised to {severity}")
    return outcome


def _capped(tree: Tree, outcome: Outcome, now: datetime) -> Outcome:
    """``outcome`` of a save, its caps enforced (``enforce_caps``). On a full disk the save
    stands and a warning says the cap waits for the next save: never saved and failed."""
    record = outcome.record
    try:
        outcome.archived = enforce_caps(tree, record["type"], now, keep=record["id"])
    except StorageError as exc:
        outcome.warnings.append(
            f"{exc.path}: {exc.message}; the {record['type']} was saved, its cap "
            "(maxPatterns / maxMistakes) is checked by the next save once there is room"
        )
    return outcome


def enforce_caps(tree: Tree, record_type: str, now: datetime, *, keep: str) -> list[str]:
    """Archive (soft-delete) past maxPatterns / maxMistakes: least used first, never
    established or pinned records, never ``keep``."""
    cap_key = {"pattern": "maxPatterns", "mistake": "maxMistakes"}.get(record_type)
    if cap_key is None:
        return []
    cap = int(tree.long_term[cap_key])
    with tree.store.lock():
        shelf = catalog.Catalog.of(tree.layout, tree.store)

        def victims() -> list[Record]:
            excess = shelf.live_count(record_type) - cap
            if excess <= 0:
                return []
            return [shelf.load(e) for e in shelf.archive_order(record_type, keep, excess)]

        chosen = _looked_up(shelf, record_type, victims)
        for victim in chosen:
            _save(tree, _touch({**victim, "deleted_at": timestamp(now)}, now))
        return [v["id"] for v in chosen]


def new_record(record_type: str, now: datetime, *, title: str, **fields: Any) -> Record:
    """A complete record with a fresh id; an unknown ``record_type`` is an ``InputError``
    naming the types there are."""
    if record_type not in ID_PREFIX:
        close = difflib.get_close_matches(str(record_type), LONG_TERM_TYPES, n=1)
        guess = f"; did you mean {close[0]!r}?" if close else ""
        raise InputError(
            f"unknown record type {record_type!r}{guess}",
            hint=f"one of: {', '.join(LONG_TERM_TYPES)}",
        )
    if ID_PREFIX[record_type] == ID_PREFIX["learning"] and "confidence" not in fields:
        fields["confidence"] = confidence.initial(str(fields.get("trigger") or ""))
    return new_long_term(record_type, new_id(ID_PREFIX[record_type]), now, title=title, **fields)


def learn_pattern(
    tree: Tree, now: datetime, *, name: str, description: str = "", example: str = "", **fields: Any
) -> Outcome:
    record = new_record(
        "pattern", now, title=name, name=name, description=description, example=example, **fields
    )
    return remember(tree, record, now)


def learn_mistake(
    tree: Tree,
    now: datetime,
    *,
    description: str,
    correction: str = "",
    severity: str = "medium",
    **fields: Any,
) -> Outcome:
    title = " ".join(description.split())[:200] or "Mistake"
    record = new_record(
        "mistake",
        now,
        title=title,
        description=description,
        correction=correction,
        severity=severity,
        **fields,
    )
    return remember(tree, record, now)


def praise(tree: Tree, now: datetime, record_id: str | None = None) -> Outcome:
    """Reinforce ``record_id``, or the pattern used most recently."""
    with tree.store.lock():
        if record_id is not None:
            target = records.locate(tree.layout, tree.store, record_id).value
            if target["type"] != "pattern":
                raise InputError(
                    f"{record_id} is a {target['type']}; praise reinforces patterns",
                    record_id=record_id,
                )
        else:
            shelf = catalog.Catalog.of(tree.layout, tree.store)
            found = _looked_up(shelf, "pattern", lambda: _latest(shelf))
            if found is None:
                raise NotFoundError(
                    "no pattern to reinforce yet",
                    hint='teach one first, e.g. `pmem learn "always use X"`',
                )
            target = found
        return reinforce(tree, target, now)


def _latest(shelf: catalog.Catalog) -> Record | None:
    entry = shelf.latest("pattern")
    return None if entry is None else shelf.load(entry)


def forget(tree: Tree, now: datetime, record_id: str, *, hard: bool = False) -> Outcome:
    """Soft-delete (``deleted_at``) or, with ``hard``, remove the record's file."""
    with tree.store.lock():
        loaded = records.locate(tree.layout, tree.store, record_id)
        if hard:
            with catalog.writing(tree.layout, tree.store, loaded.path):
                tree.store.delete(loaded.path, expect=loaded.digest)
            return Outcome("deleted", loaded.value, notes=["file removed"])
        record = _touch({**loaded.value, "deleted_at": timestamp(now)}, now)
        records.save(tree.layout, tree.store, record, expect=loaded.digest)
        return Outcome("deleted", record, notes=["soft delete: `pmem forget --hard` removes"])


def restore(tree: Tree, now: datetime, record_id: str) -> Outcome:
    with tree.store.lock():
        loaded = records.locate(tree.layout, tree.store, record_id)
        record = _touch({**loaded.value, "deleted_at": None}, now)
        records.save(tree.layout, tree.store, record, expect=loaded.digest)
        return Outcome("restored", record)


def pin(tree: Tree, now: datetime, record_id: str, *, pinned: bool = True) -> Outcome:
    with tree.store.lock():
        loaded = records.locate(tree.layout, tree.store, record_id)
        record = _touch({**loaded.value, "pinned": pinned}, now)
        records.save(tree.layout, tree.store, record, expect=loaded.digest)
        return Outcome("pinned" if pinned else "unpinned", record)


def review_dir(layout: Layout) -> str:
    return os.path.join(layout.short_term, "review")

"""Long-term rules (seed 000 and seed 003), deterministic and offline.

- A new pattern similar to a live one reinforces it (``usage_count`` + 1; established at 5).
- A repeated mistake increments ``occurrences``; the 3rd occurrence raises severity one level.
- Praise reinforces the pattern used most recently.
- Same ``topic_key`` in the same scope upserts (``revision_count`` + 1).
- An exact duplicate within the dedup window (15 min) bumps ``duplicate_count``.
- Past ``maxPatterns`` / ``maxMistakes`` the least used record that is neither established nor
  pinned is archived (soft delete).
- Delete is soft unless asked; pin and unpin.

Functions take the tree (``layout``, ``store``), the effective config and ``now``; they return
an ``Outcome`` saying what happened, for the CLI to print.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from planning_memory.core import (
    ESCALATE_AT,
    ESTABLISHED_AT,
    ID_PREFIX,
    SEVERITIES,
    Layout,
    Record,
    new_id,
    new_long_term,
    parse_timestamp,
    timestamp,
)
from planning_memory.errors import InputError, NotFoundError
from planning_memory.longterm import records, similarity
from planning_memory.store import Store


@dataclass
class Outcome:
    """What a learning call did: ``action`` is one of created, reinforced, escalated, upserted,
    duplicate, deleted, restored, pinned, unpinned, queued, suggested."""

    action: str
    record: Record
    archived: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "id": self.record.get("id"),
            "type": self.record.get("type"),
            "title": self.record.get("title"),
            "archived": self.archived,
            "notes": self.notes,
        }


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


def _text_of(record: Record) -> str:
    if record["type"] == "pattern":
        return f"{record.get('name', '')} {record.get('description', '')}"
    if record["type"] == "mistake":
        return f"{record.get('description', '')} {record.get('correction', '')}"
    return f"{record.get('title', '')} {record.get('learned', '')}"


def _fingerprint(record: Record) -> str:
    """Exact-duplicate key: type, scope and normalised content."""
    return "\x1f".join(
        [
            record["type"],
            record.get("scope", "project"),
            " ".join(_text_of(record).lower().split()),
            " ".join(record["body"].get("what", "").lower().split()),
        ]
    )


def _touch(record: Record, now: datetime) -> Record:
    return {**record, "updated_at": timestamp(now)}


def _live(tree: Tree, *types: str) -> list[Record]:
    return records.load_all(tree.layout, tree.store, types)


def _within(stamp: str, now: datetime, minutes: int) -> bool:
    return now - parse_timestamp(stamp) <= timedelta(minutes=minutes)


def _same_topic(candidates: Iterable[Record], record: Record) -> Record | None:
    key = record.get("topic_key")
    if not key:
        return None
    for other in candidates:
        if other.get("topic_key") == key and other.get("scope") == record.get("scope"):
            return other
    return None


def _duplicate(
    candidates: Iterable[Record], record: Record, now: datetime, minutes: int
) -> Record | None:
    mark = _fingerprint(record)
    for other in candidates:
        if _fingerprint(other) == mark and _within(other["updated_at"], now, minutes):
            return other
    return None


def _similar(candidates: list[Record], record: Record, threshold: float) -> Record | None:
    pool = [
        (c["id"], _text_of(c))
        for c in candidates
        if c["type"] == record["type"] and c.get("scope") == record.get("scope")
    ]
    found = similarity.best_match(_text_of(record), pool, threshold)
    if found is None:
        return None
    return next(c for c in candidates if c["id"] == found[0])


def _save(tree: Tree, record: Record) -> Record:
    records.save(tree.layout, tree.store, record)
    return record


def remember(tree: Tree, record: Record, now: datetime) -> Outcome:
    """Store ``record`` (complete, with a fresh id) applying topic upsert, the dedup window and,
    for patterns and mistakes, similarity; then enforce the caps."""
    with tree.store.lock():
        live = _live(tree, record["type"])
        topic = _same_topic(live, record)
        if topic is not None:
            return Outcome("upserted", _save(tree, _upsert(topic, record, now)))
        dup = _duplicate(live, record, now, int(tree.long_term["dedupWindowMinutes"]))
        if dup is not None:
            bumped = _touch({**dup, "duplicate_count": dup["duplicate_count"] + 1}, now)
            return Outcome("duplicate", _save(tree, bumped))
        if record["type"] in ("pattern", "mistake"):
            match = _similar(live, record, float(tree.long_term["similarityThreshold"]))
            if match is not None:
                return _repeat(tree, match, now)
        outcome = Outcome("created", _save(tree, record))
        outcome.archived = enforce_caps(tree, record["type"], now, keep=record["id"])
        return outcome


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


def enforce_caps(tree: Tree, record_type: str, now: datetime, *, keep: str) -> list[str]:
    """Archive (soft-delete) past maxPatterns / maxMistakes: least used first, never
    established or pinned records, never ``keep``."""
    cap_key = {"pattern": "maxPatterns", "mistake": "maxMistakes"}.get(record_type)
    if cap_key is None:
        return []
    cap = int(tree.long_term[cap_key])
    live = _live(tree, record_type)
    excess = len(live) - cap
    if excess <= 0:
        return []
    uses = "usage_count" if record_type == "pattern" else "occurrences"
    victims = sorted(
        (r for r in live if not r.get("pinned") and not r.get("established") and r["id"] != keep),
        key=lambda r: (r[uses], r["updated_at"], r["id"]),
    )[:excess]
    for victim in victims:
        _save(tree, _touch({**victim, "deleted_at": timestamp(now)}, now))
    return [v["id"] for v in victims]


def new_record(record_type: str, now: datetime, *, title: str, **fields: Any) -> Record:
    """A complete record with a fresh id."""
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
            patterns = _live(tree, "pattern")
            if not patterns:
                raise NotFoundError(
                    "no pattern to reinforce yet",
                    hint='teach one first, e.g. `pmem learn "always use X"`',
                )
            target = max(patterns, key=lambda r: (r["updated_at"], r["id"]))
        return reinforce(tree, target, now)


def forget(tree: Tree, now: datetime, record_id: str, *, hard: bool = False) -> Outcome:
    """Soft-delete (``deleted_at``) or, with ``hard``, remove the record's file."""
    with tree.store.lock():
        loaded = records.locate(tree.layout, tree.store, record_id)
        if hard:
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

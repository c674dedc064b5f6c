"""Learning from what people say: a trigger phrase becomes a pattern, mistake or preference.

The config's ``autoLearn`` (off: only suggest) and ``confirmBeforeLearn`` (on: a review
queue) decide what is saved.

The review queue lives in ``memory/short-term/review/`` (gitignored: pending items are
personal until accepted); each item is the complete record that accepting would save.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planning_memory import longterm
from planning_memory.core import Layout, Record, check_id, timestamp
from planning_memory.errors import NotFoundError
from planning_memory.longterm import rules as learn

if TYPE_CHECKING:
    from planning_memory.longterm.triggers import Trigger

MAX_TITLE = 200


@dataclass
class Lesson:
    """What an utterance teaches: ``outcome`` is None when no trigger phrase was found."""

    utterance: str
    trigger: Trigger | None
    outcome: learn.Outcome | None

    def summary(self) -> dict[str, Any]:
        found = self.trigger
        return {
            "trigger": None
            if found is None
            else {
                "kind": found.kind,
                "phrase": found.phrase,
                "subject": found.subject,
                "language": found.language,
                "preferred": found.preferred,
                "avoided": found.avoided,
            },
            "outcome": None if self.outcome is None else self.outcome.summary(),
        }


def review_dir(layout: Layout) -> Path:
    return layout.short_term / "review"


def _title(text: str) -> str:
    text = " ".join(text.split())
    return text[:1].upper() + text[1:MAX_TITLE]


def record_for(found: Trigger, utterance: str, now: datetime, source: str) -> Record:
    """The record an utterance's trigger describes (not yet saved)."""
    tags = ["learned-from-conversation"]
    if found.kind == "pattern":
        name = _title(found.subject)
        return learn.new_record(
            "pattern", now, title=name, name=name, description=utterance, tags=tags, source=source
        )
    if found.kind == "mistake":
        correction = f"Do not use {found.avoided}" if found.avoided else ""
        if found.preferred:
            correction = f"Use {found.preferred}" + (
                f", not {found.avoided}" if found.avoided else ""
            )
        return learn.new_record(
            "mistake",
            now,
            title=_title(utterance),
            description=utterance,
            correction=correction,
            tags=tags,
            source=source,
        )
    learned = found.subject
    if found.preferred and found.avoided:
        learned = f"Use {found.preferred} instead of {found.avoided}"
    return learn.new_record(
        "preference",
        now,
        title=_title(learned),
        learned=learned,
        original=utterance,
        trigger=found.phrase,
        confidence=0.9,
        tags=tags,
        source=source,
    )


def learn_utterance(
    tree: learn.Tree, now: datetime, utterance: str, *, source: str = "cli"
) -> Lesson:
    """Detect a trigger and act on it as the config says: save, suggest or queue."""
    found = longterm.detect(utterance)  # the trigger phrases load on first use
    if found is None:
        return Lesson(utterance, None, None)
    if found.kind == "praise":
        try:
            return Lesson(utterance, found, learn.praise(tree, now))
        except NotFoundError:
            return Lesson(utterance, found, None)
    record = record_for(found, utterance, now, source)
    settings = tree.long_term
    if not settings["autoLearn"]:
        outcome = learn.Outcome(
            "suggested", record, notes=["autoLearn is off: nothing saved; `pmem save` keeps it"]
        )
        return Lesson(utterance, found, outcome)
    if settings["confirmBeforeLearn"]:
        path = review_dir(tree.layout) / f"{record['id']}.json"
        tree.store.write_json(
            path, {"record": record, "utterance": utterance, "queued_at": timestamp(now)}
        )
        outcome = learn.Outcome(
            "queued", record, notes=["waiting for review: `pmem review --accept ID`"]
        )
        return Lesson(utterance, found, outcome)
    return Lesson(utterance, found, learn.remember(tree, record, now))


def pending(tree: learn.Tree) -> list[dict[str, Any]]:
    """The review queue, oldest first."""
    items = [tree.store.read_json(p) for p in tree.store.list_json(review_dir(tree.layout))]
    return sorted(items, key=lambda i: (i["queued_at"], i["record"]["id"].split("_", 1)[-1]))


def _queued(tree: learn.Tree, record_id: str) -> Path:
    path = review_dir(tree.layout) / f"{check_id(record_id)}.json"
    if not path.is_file():
        raise NotFoundError(
            f"{record_id} is not in the review queue",
            record_id=record_id,
            hint="`pmem review` lists what is waiting",
        )
    return path


def accept(tree: learn.Tree, now: datetime, record_id: str) -> learn.Outcome:
    """Save a queued item through the usual rules, then drop it from the queue."""
    with tree.store.lock():
        path = _queued(tree, record_id)
        item = tree.store.read_json(path)
        outcome = learn.remember(tree, item["record"], now)
        tree.store.delete(path)
        return outcome


def reject(tree: learn.Tree, record_id: str) -> dict[str, Any]:
    with tree.store.lock():
        path = _queued(tree, record_id)
        item: dict[str, Any] = tree.store.read_json(path)
        tree.store.delete(path)
        return item

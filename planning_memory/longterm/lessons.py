"""Learning from what people say: a trigger phrase becomes a pattern, mistake or preference.

Every rule an utterance states is learned (``detect_all``: "Always use pnpm. Never commit .env
files." teaches two). What is stored is the rule as the person said it (``Trigger.rule``: the
trigger's sentence, not the whole prompt around it), in their language; the few words written
for them (a mistake's correction, "use X instead of Y") come from ``WORDING`` in that language
too.

The config's ``autoLearn`` (off: only suggest) and ``confirmBeforeLearn`` (on: a review
queue) decide what is saved. A correction that names nothing ("No, así no", "that's wrong";
``Trigger.bare``) saves nothing: it never reinforces nor escalates a stored mistake.

The review queue lives in ``memory/short-term/review/`` (gitignored: pending items are
personal until accepted); each item is the complete record that accepting would save.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planning_memory.core import TAUGHT_TAG, Layout, Record, check_id, timestamp
from planning_memory.errors import InputError, NotFoundError, StorageError
from planning_memory.longterm import preferences
from planning_memory.longterm import rules as learn

if TYPE_CHECKING:
    from planning_memory.longterm.triggers import Trigger

MAX_TITLE = 200
WORDING = {
    "en": {
        "avoid": "Do not use {0}",
        "use": "Use {0}",
        "not": "{0}, not {1}",
        "over": "Use {0} instead of {1}",
    },
    "es": {
        "avoid": "No uses {0}",
        "use": "Usa {0}",
        "not": "{0}, no {1}",
        "over": "Usa {0} en vez de {1}",
    },
}


@dataclass
class Lesson:
    """What an utterance teaches: its first rule's trigger and what learning it did
    (``outcome`` is None when no trigger phrase was found, when it names nothing, or when
    praise had nothing to reinforce); ``also``: the same for each further rule, in order."""

    utterance: str
    trigger: Trigger | None
    outcome: learn.Outcome | None
    also: list[Lesson] = field(default_factory=list)

    def each(self) -> list[Lesson]:
        """One lesson per rule of the utterance, in order."""
        return [self, *self.also]

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
                "rule": found.rule,
            },
            "outcome": None if self.outcome is None else self.outcome.summary(),
            "also": [lesson.summary() for lesson in self.also],
        }


def review_dir(layout: Layout) -> Path:
    return layout.short_term / "review"


def _title(text: str) -> str:
    text = " ".join(text.split())
    return text[:1].upper() + text[1:MAX_TITLE]


def _correction(found: Trigger) -> str:
    """What to do instead, in the language the mistake was said in ("" when it says nothing)."""
    words = WORDING[found.language]
    if found.preferred:
        use = words["use"].format(found.preferred)
        return words["not"].format(use, found.avoided) if found.avoided else use
    return words["avoid"].format(found.avoided) if found.avoided else ""


def record_for(found: Trigger, now: datetime, source: str, **fields: Any) -> Record:
    """The record a trigger describes (not yet saved), written from the rule as it was said;
    ``fields`` add to it (the personal store's ``scope`` and ``project``)."""
    tags = [TAUGHT_TAG]
    said = found.rule or found.phrase
    if found.kind == "pattern":
        name = _title(found.subject or said)
        return learn.new_record(
            "pattern",
            now,
            title=name,
            name=name,
            description=said,
            tags=tags,
            source=source,
            **fields,
        )
    if found.kind == "mistake":
        return learn.new_record(
            "mistake",
            now,
            title=_title(said),
            description=said,
            correction=_correction(found),
            tags=tags,
            source=source,
            **fields,
        )
    learned = found.subject or said
    if found.preferred and found.avoided:
        learned = WORDING[found.language]["over"].format(found.preferred, found.avoided)
    return learn.new_record(
        "preference",
        now,
        title=_title(learned),
        learned=learned,
        original=said,
        trigger=found.phrase,
        tags=tags,
        source=source,
        **fields,
    )


def learn_utterance(
    tree: learn.Tree, now: datetime, utterance: str, *, source: str = "cli", **fields: Any
) -> Lesson:
    """Find every rule the utterance states and act on each as the config says: save,
    suggest or queue; praise reinforces; a rule that names nothing does nothing. ``fields``
    go into each record saved."""
    from planning_memory.longterm.triggers import detect_all  # the phrases load on first use

    found = detect_all(utterance)
    if not found:
        return Lesson(utterance, None, None)
    first, *rest = [_learn(tree, now, utterance, t, source, fields) for t in found]
    first.also = rest
    return first


def _learn(
    tree: learn.Tree,
    now: datetime,
    utterance: str,
    found: Trigger,
    source: str,
    fields: dict[str, Any],
) -> Lesson:
    if found.bare:  # "No, así no": a correction with no content is no mistake to count
        return Lesson(utterance, found, None)
    if found.kind == "praise":
        try:
            return Lesson(utterance, found, learn.praise(tree, now))
        except NotFoundError:
            return Lesson(utterance, found, None)
    record = record_for(found, now, source, **fields)
    settings = tree.long_term
    if not settings["autoLearn"]:
        outcome = learn.Outcome(
            "suggested", record, notes=["autoLearn is off: nothing saved; `pmem save` keeps it"]
        )
        return Lesson(utterance, found, outcome)
    if settings["confirmBeforeLearn"]:
        path = review_dir(tree.layout) / f"{record['id']}.json"
        said = found.rule or found.phrase  # the rule as said, never the task around it
        tree.store.write_json(
            path, {"record": record, "utterance": said, "queued_at": timestamp(now)}
        )
        outcome = learn.Outcome(
            "queued", record, notes=["waiting for review: `pmem review --accept ID`"]
        )
        return Lesson(utterance, found, outcome)
    stated = preferences.stated(found)
    with tree.store.lock():  # a broken preferences.json that must change stops us before a write
        try:
            prefs = preferences.updated(tree.layout, tree.store, stated, now) if stated else None
        except InputError as exc:
            done = "nothing was saved: this rule sets a preference, so repair or remove the file"
            exc.hint = f"{exc.hint}; {done}" if exc.hint else done
            raise
        outcome = learn.remember(tree, record, now)
        told = ", ".join(f"{key} = {value}" for key, value in stated.items())
        if stated:
            outcome.notes.append(f"preferences.json: {told}")
        if prefs is not None:
            try:
                tree.store.write_json(tree.layout.preferences, prefs)
            except StorageError as exc:  # the rule is saved: say what is missing, not fail
                outcome.warnings.append(
                    f"{exc.path}: {exc.message}; the rule was saved, its setting was not "
                    f"(free some disk space, then `pmem prefs set` it: {told})"
                )
    return Lesson(utterance, found, outcome)


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

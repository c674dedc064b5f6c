"""Compare a parsed patterns.md / mistakes.md with the records: the changes a hand edit makes.

Pure: no I/O, no clock (``now`` is a timestamp string passed in). An edited item becomes an
update of its editable fields, a new item (no id marker) a creation, a vanished item a soft
delete; any error refuses the whole file, so a broken view never half-applies.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from planning_memory.errors import InputError
from planning_memory.views.fileformat import (
    HEADING_FIELD,
    Issue,
    Kind,
    display_text,
    editable_fields,
)

if TYPE_CHECKING:
    from planning_memory.views.parse import ParsedItem, ParsedView

RECORD_TYPE: dict[Kind, str] = {"patterns": "pattern", "mistakes": "mistake"}
TITLE_MAX = 200
TEXT_MAX = 50_000
TAG_MAX = 100


@dataclass(frozen=True)
class Update:
    """An edited item: ``changed`` holds the new values, ``after`` the whole new record."""

    record_id: str
    line: int
    changed: dict[str, Any]
    after: dict[str, Any]


@dataclass(frozen=True)
class Creation:
    """A new item: the fields it states. The caller adds id, timestamps, defaults and
    ``source: "human"``, then validates and secret-scans it."""

    line: int
    fields: dict[str, Any]


@dataclass(frozen=True)
class Deletion:
    """An item that vanished: ``after`` is the record soft-deleted (``deleted_at`` set)."""

    record_id: str
    after: dict[str, Any]


@dataclass(frozen=True)
class Changes:
    updates: tuple[Update, ...] = ()
    creations: tuple[Creation, ...] = ()
    deletions: tuple[Deletion, ...] = ()
    errors: tuple[Issue, ...] = ()
    warnings: tuple[Issue, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def empty(self) -> bool:
        return not (self.updates or self.creations or self.deletions)

    def raise_for_errors(self, path: str | None = None) -> None:
        """Raise an InputError naming the first error (and how many there are)."""
        if not self.errors:
            return
        first = self.errors[0]
        more = f" (and {len(self.errors) - 1} more)" if len(self.errors) > 1 else ""
        raise InputError(
            first.message + more,
            path=path,
            line=first.line,
            record_id=first.record_id,
            hint="nothing was imported",
        )


def _display_norm(text: str) -> str:
    return " ".join(text.replace("_(read-only)_", "").replace("(read-only)", "").split())


def _short_title(name: str) -> str:
    return name if len(name) <= TITLE_MAX else name[: TITLE_MAX - 1] + "…"


def _length_errors(fields: Mapping[str, Any], item: ParsedItem) -> list[Issue]:
    errors = []
    for name, value in fields.items():
        limit = TITLE_MAX if name == "title" else TEXT_MAX
        if isinstance(value, str) and len(value) > limit:
            errors.append(
                Issue(
                    f"{name} is {len(value):,} characters; the limit is {limit:,}",
                    item.line,
                    item.record_id,
                )
            )
    for tag in fields.get("tags", []):
        if not tag or len(tag) > TAG_MAX:
            errors.append(
                Issue(
                    f"tag {tag[:40]!r} must be 1 to {TAG_MAX} characters", item.line, item.record_id
                )
            )
    return errors


def _display_warnings(item: ParsedItem, record: Mapping[str, Any] | None) -> list[Issue]:
    warnings = []
    for label, (line, text) in item.display.items():
        if record is None:
            warnings.append(
                Issue(
                    f"**{label.title()}:** is display-only; ignored for a new "
                    "item (it starts at 1)",
                    line,
                )
            )
        elif _display_norm(text) != _display_norm(display_text(record, label)):
            warnings.append(
                Issue(
                    f"**{label.title()}:** is display-only; the edit is "
                    "ignored and the next render shows the recorded value",
                    line,
                    item.record_id,
                )
            )
    return warnings


def _missing_warnings(item: ParsedItem, kind: Kind, record: Mapping[str, Any]) -> list[Issue]:
    warnings = [
        Issue(
            f"the **{name.title()}:** line is missing; {name} stays {record.get(name)!r}",
            item.line,
            item.record_id,
        )
        for name in item.missing
    ]
    shown = {"patterns": ("usage",), "mistakes": ("occurrences",)}[kind]
    warnings += [
        Issue(
            f"the display-only **{label.title()}:** line was removed; nothing changes",
            item.line,
            item.record_id,
        )
        for label in shown
        if label not in item.display
    ]
    return warnings


def _update(item: ParsedItem, record: Mapping[str, Any], kind: Kind, now: str) -> Update | None:
    current = editable_fields(record, kind)
    changed = {k: v for k, v in item.fields.items() if k in current and current[k] != v}
    if not changed:
        return None
    after = {**record, **changed}
    if "name" in changed and record.get("title") == record.get("name"):
        after["title"] = _short_title(changed["name"])
    after["updated_at"] = now
    after["revision_count"] = int(record.get("revision_count", 1)) + 1
    return Update(str(record["id"]), item.line, changed, after)


def _creation(item: ParsedItem, kind: Kind) -> Creation:
    fields: dict[str, Any] = {"type": RECORD_TYPE[kind], **item.fields}
    if kind == "patterns":
        fields["title"] = _short_title(item.fields[HEADING_FIELD[kind]])
    fields.setdefault("tags", [])
    return Creation(item.line, fields)


def _item_changes(
    item: ParsedItem, kind: Kind, records: Mapping[str, Mapping[str, Any]], now: str
) -> tuple[Update | Creation | None, list[Issue], list[Issue]]:
    if item.record_id is None:
        creation = _creation(item, kind)
        return creation, _length_errors(creation.fields, item), _display_warnings(item, None)
    record = records.get(item.record_id)
    if record is None:
        return (
            None,
            [
                Issue(
                    f"unknown id {item.record_id}: no {RECORD_TYPE[kind]} has it; "
                    "remove the marker to add a new item",
                    item.line,
                    item.record_id,
                )
            ],
            [],
        )
    if record.get("deleted_at") is not None:
        return (
            None,
            [
                Issue(
                    f"{item.record_id} was deleted at {record['deleted_at']}; remove "
                    "the marker to add it again as a new item",
                    item.line,
                    item.record_id,
                )
            ],
            [],
        )
    warnings = _display_warnings(item, record) + _missing_warnings(item, kind, record)
    update = _update(item, record, kind, now)
    errors = _length_errors(update.changed, item) if update else []
    return update, errors, warnings


def diff_view(parsed: ParsedView, records: Iterable[Mapping[str, Any]], now: str) -> Changes:
    """The changes that importing ``parsed`` makes to ``records`` (those of the view's type;
    others are ignored). With any error, only errors and warnings are returned."""
    kind = parsed.kind
    by_id = {str(r["id"]): r for r in records if r.get("type") == RECORD_TYPE[kind]}
    errors, warnings = list(parsed.errors), list(parsed.warnings)
    updates: list[Update] = []
    creations: list[Creation] = []
    for item in parsed.items:
        change, item_errors, item_warnings = _item_changes(item, kind, by_id, now)
        errors += item_errors
        warnings += item_warnings
        if isinstance(change, Update):
            updates.append(change)
        elif isinstance(change, Creation):
            creations.append(change)
    live = {rid: r for rid, r in sorted(by_id.items()) if r.get("deleted_at") is None}
    gone = [rid for rid in live if rid not in parsed.seen_ids]
    if gone and not parsed.seen_ids and parsed.header is None:
        errors.append(
            Issue(
                f"the file has no items and no planning-memory header; refusing "
                f"to delete {len(gone)} records (restore it or run `pmem render`)"
            )
        )
    if errors:
        return Changes(errors=tuple(errors), warnings=tuple(warnings))
    deletions = tuple(
        Deletion(rid, {**live[rid], "deleted_at": now, "updated_at": now}) for rid in gone
    )
    return Changes(
        tuple(sorted(updates, key=lambda u: u.record_id)),
        tuple(creations),
        deletions,
        (),
        tuple(warnings),
    )

"""Export and import: the seed's combined shape and its single-file shapes.

Export writes ``{shortTerm, longTerm, entityMemory, contextualMemory}``. Import accepts that,
the seed's camelCase record shapes with sequential ids (``pat_001``), and the array-per-file
shapes (``patterns.json`` as an array, ``preferences.json`` as an object). Everything is
converted and validated first; only then is anything written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from planning_memory.core import (
    ID_RE,
    LEARNING_TYPES,
    Record,
    codec,
    new_id,
    new_long_term,
    normalize,
    privacy,
    schema,
    timestamp,
)
from planning_memory.errors import InputError, PlanningMemoryError, SchemaError
from planning_memory.gitops import merge_copies
from planning_memory.store import read_regular

FORMAT_VERSION = 1
_KIND_KEYS = {"patterns": "pattern", "mistakes": "mistake", "learnings": "learning"}


@dataclass
class ImportPlan:
    """What an import would do; nothing is written until ``Memory.transfer.apply``."""

    records: list[Record] = field(default_factory=list)
    preferences: dict[str, Any] | None = None
    sessions: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was read but is not imported


_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def _snake(key: str) -> str:
    """``usageCount`` -> ``usage_count``, ``HTTPTimeout`` -> ``http_timeout``."""
    return _CAMEL_BOUNDARY.sub("_", key).lower()


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def camelize(value: Any) -> Any:
    """Object keys to camelCase, recursively (the seed's export shape)."""
    if isinstance(value, dict):
        return {_camel(k): camelize(v) for k, v in value.items()}
    if isinstance(value, list):
        return [camelize(v) for v in value]
    return value


def snakeify(value: Any) -> Any:
    """Object keys to snake_case, recursively (``camelize`` undone)."""
    if isinstance(value, dict):
        return {_snake(k): snakeify(v) for k, v in value.items()}
    if isinstance(value, list):
        return [snakeify(v) for v in value]
    return value


def _guess_kind(item: Mapping[str, Any], hint: str | None, where: str) -> str:
    kind = item.get("type")
    if isinstance(kind, str) and kind in (*LEARNING_TYPES, "pattern", "mistake"):
        return kind
    if kind is not None:
        raise SchemaError(
            f"unknown record type {kind!r}; expected one of "
            + ", ".join(sorted((*LEARNING_TYPES, "pattern", "mistake"))),
            json_path=f"{where}.type",
        )
    if hint:
        return hint
    if "correction" in item or "severity" in item:
        return "mistake"
    if "usageCount" in item or "usage_count" in item or "example" in item:
        return "pattern"
    return "learning"


def _title_from(item: Mapping[str, Any], kind: str) -> str:
    for key in ("title", "name", "description", "learned", "original", "trigger"):
        value = item.get(key)
        if isinstance(value, str) and value.strip():
            text = " ".join(value.split())
            return text if len(text) <= 200 else text[:199] + "…"
    return f"Imported {kind}"


def convert_record(item: Any, hint: str | None, now: datetime, where: str) -> Record:
    """A seed-shaped or native record to a complete native record (not yet validated)."""
    if not isinstance(item, dict):
        raise SchemaError("each record must be a JSON object", json_path=where)
    fields = {_snake(k): v for k, v in item.items()}
    kind = _guess_kind(item, hint, where)
    if "context" in fields and "tags" not in fields:
        fields["tags"] = fields.pop("context")
    if kind not in ("pattern", "mistake") and "type" not in fields:
        fields["type"] = "learning"
    record_id = fields.pop("id", None)
    if record_id is None:
        record_id = new_id("pat" if kind == "pattern" else "mis" if kind == "mistake" else "lrn")
    if not isinstance(record_id, str) or not ID_RE.match(record_id):
        raise SchemaError(f"invalid id {record_id!r}", json_path=f"{where}.id")
    title = fields.pop("title", None) or _title_from(item, kind)
    fields.pop("type", None)
    record = new_long_term(kind, record_id, now, title=title, source="import")
    for key, value in fields.items():
        record[key] = value
    if "created_at" in fields and "updated_at" not in fields:
        record["updated_at"] = record["created_at"]
    if kind == "mistake" and "last_occurrence" not in fields and "created_at" in fields:
        record["last_occurrence"] = record["created_at"]
    return _normalized(record)


def _normalized(record: Record) -> Record:
    """``normalize(record)`` when the fields it sorts are well typed; otherwise the record as
    given, so that the schema check reports the bad field with its JSON path."""
    if not isinstance(record.get("tags"), list) or not isinstance(record.get("anchors"), list):
        return record
    try:
        return normalize(record)
    except (TypeError, AttributeError):
        return record


def _preferences_from(prefs: Any, now: datetime, where: str) -> dict[str, Any]:
    """The seed's camelCase preferences (``codeStyle.maxLineLength``) in snake_case, with
    ``updated_at`` filled in when missing."""
    if not isinstance(prefs, dict):
        raise SchemaError("preferences must be an object", json_path=where)
    result: dict[str, Any] = {}
    for key, section in prefs.items():
        if isinstance(section, dict):
            section = {_snake(k): v for k, v in section.items()}
        result[_snake(key)] = section
    result.setdefault("updated_at", timestamp(now))
    return result


def _records_from(value: Any, hint: str | None, now: datetime, where: str) -> list[Record]:
    if not isinstance(value, list):
        raise SchemaError("expected an array of records", json_path=where)
    return [convert_record(item, hint, now, f"{where}[{i}]") for i, item in enumerate(value)]


def plan_import(data: Any, now: datetime, *, name_hint: str | None = None) -> ImportPlan:
    """Convert any accepted shape to native records; raise on the first bad item."""
    plan = ImportPlan()
    if isinstance(data, list):
        hint = _KIND_KEYS.get((name_hint or "").removesuffix(".json"))
        plan.records = _records_from(data, hint, now, "$")
        return plan
    if not isinstance(data, dict):
        raise InputError("expected a JSON object or array", json_path="$")
    long_term = data.get("longTerm", data)
    if not isinstance(long_term, dict):
        raise SchemaError("longTerm must be an object", json_path="$.longTerm")
    where = "$.longTerm" if "longTerm" in data else "$"
    found = False
    for key, hint in _KIND_KEYS.items():
        if key in long_term:
            found = True
            plan.records += _records_from(long_term[key], hint, now, f"{where}.{key}")
    if "preferences" in long_term:
        found = True
        plan.preferences = _preferences_from(long_term["preferences"], now, f"{where}.preferences")
    entity = data.get("entityMemory")
    if isinstance(entity, dict) and any(entity.values()):
        plan.notes.append(
            "entityMemory is not imported: the code map is derived from the code "
            "(`pmem scan` rebuilds it here)"
        )
    short = data.get("shortTerm")
    if isinstance(short, dict):
        found = True
        sessions = short.get("sessions", [])
        if isinstance(sessions, list):
            # a --seed-format export writes them camelCase (startedAt); the files are snake_case
            plan.sessions = [snakeify(s) for s in sessions if isinstance(s, dict)]
    if not found and (name_hint or "").removesuffix(".json") == "preferences":
        plan.preferences = _preferences_from(data, now, "$")
        found = True
    if not found:
        raise InputError(
            "nothing to import: expected longTerm/patterns/mistakes/learnings/preferences",
            json_path="$",
        )
    if plan.preferences is not None and set(plan.preferences) <= {"updated_at"}:
        plan.preferences = None  # no section (an export of a tree without preferences)
    return plan


def check_plan(plan: ImportPlan, check_record: Callable[[Record], object]) -> None:
    """Validate every item of ``plan``; raise the first problem with its place."""
    seen: set[str] = set()
    for index, record in enumerate(plan.records):
        try:
            check_record(record)
        except PlanningMemoryError as exc:
            raise SchemaError(
                exc.message,
                json_path=f"record {record.get('id')} (#{index + 1}) {exc.json_path or ''}".strip(),
            ) from None
        if record["id"] in seen:
            raise SchemaError(f"duplicate id {record['id']} in the import", record_id=record["id"])
        seen.add(record["id"])
    if plan.preferences is not None:
        schema.check("preferences", plan.preferences)
    for index, session in enumerate(plan.sessions):
        where = f"$.shortTerm.sessions[{index}]"
        if not ID_RE.match(str(session.get("id"))):  # it becomes a file name: check it now
            raise SchemaError(f"invalid id {session.get('id')!r}", json_path=f"{where}.id")
        try:
            schema.check("session", session)
        except SchemaError as exc:
            inner = (exc.json_path or "$")[1:]
            raise SchemaError(exc.message, json_path=where + inner) from None


def export_document(
    long_term: list[Record],
    preferences: dict[str, Any],
    sessions: list[dict[str, Any]],
    entity: dict[str, Any],
    contextual: dict[str, Any],
    now: datetime,
    *,
    seed: bool = False,
) -> dict[str, Any]:
    """The combined export shape; ``seed=True`` emits camelCase field names."""
    by_kind: dict[str, list[Record]] = {"patterns": [], "mistakes": [], "learnings": []}
    for record in long_term:
        key = {"pattern": "patterns", "mistake": "mistakes"}.get(record["type"], "learnings")
        by_kind[key].append(record)
    doc: dict[str, Any] = {
        "formatVersion": FORMAT_VERSION,
        "exportedAt": timestamp(now),
        "shortTerm": {"sessions": sessions},
        "longTerm": {**by_kind, "preferences": preferences},
        "entityMemory": entity,
        "contextualMemory": contextual,
    }
    if seed:
        doc["shortTerm"] = camelize(doc["shortTerm"])
        doc["longTerm"] = camelize(doc["longTerm"])
        doc["entityMemory"] = camelize(doc["entityMemory"])
        doc["contextualMemory"] = camelize(doc["contextualMemory"])
    return doc


@dataclass
class ImportResult:
    """A checked import plan and what applying it changes (or changed, once ``applied``)."""

    plan: ImportPlan
    created: list[str] = field(default_factory=list)  # record ids, by what the import does
    updated: list[str] = field(default_factory=list)  # to them (once applied: what it did)
    unchanged: list[str] = field(default_factory=list)
    already_present: list[str] = field(default_factory=list)  # left out by ``keep_new``
    files: list[str] = field(default_factory=list)  # the files read, when known
    session_outcomes: dict[str, str] = field(default_factory=dict)  # id -> created/updated/...
    preferences_outcome: str | None = None  # created/updated/unchanged, once applied
    applied: bool = False

    def summary(self) -> dict[str, Any]:
        return {
            "created": len(self.created),
            "updated": len(self.updated),
            "unchanged": len(self.unchanged),
            "record_outcomes": self.record_outcomes(),
            "applied": self.applied,
            "preferences": sorted(k for k in self.plan.preferences or {} if k != "updated_at"),
            "sessions": [s["id"] for s in self.plan.sessions],
            "session_outcomes": self.session_outcomes,
            "preferences_outcome": self.preferences_outcome,
            "already_present": self.already_present,
            "files": self.files,
            "notes": self.plan.notes,
        }

    def record_outcomes(self) -> dict[str, str]:
        """Record id -> ``created``, ``updated`` or ``unchanged``."""
        lists = {"created": self.created, "updated": self.updated, "unchanged": self.unchanged}
        return {i: outcome for outcome, ids in lists.items() for i in ids}


def plan(
    data: Any,
    now: datetime,
    existing: Mapping[str, Record],
    *,
    check: Callable[[Record], object],
    name_hint: str | None = None,
) -> ImportResult:
    """``data`` converted, redacted and validated (``check`` validates one record), with
    each record sorted into created, updated or unchanged against ``existing``: a record
    already there is merged with it (``merge_copies``), and is unchanged when the merge is."""
    converted = plan_import(data, now, name_hint=name_hint)
    converted.records = [privacy.redact_value(r) for r in converted.records]
    check_plan(converted, check)
    result = ImportResult(plan=converted)
    for record in converted.records:
        old = existing.get(record["id"])
        if old is None:
            result.created.append(record["id"])
        elif _merge_record(old, record, check) is not old:
            result.updated.append(record["id"])
        else:
            result.unchanged.append(record["id"])
    return result


def _merge_record(mine: Record, theirs: Record, check: Callable[[Record], object]) -> Record:
    """The tree's record ``mine`` with what the imported copy ``theirs`` adds (two-way, see
    ``gitops.merge_copies``), checked; ``mine`` itself when it adds nothing."""
    merged: Record = merge_copies(mine, theirs)
    if merged is not mine:
        try:
            check(merged)
        except PlanningMemoryError as exc:
            raise SchemaError(
                f"merged with the record already here: {exc.message}",
                record_id=mine["id"],
                json_path=exc.json_path,
            ) from None
    return merged


def keep_new(
    result: ImportResult, session_exists: Callable[[str], bool], preferences: Mapping[str, Any]
) -> None:
    """Leave out of ``result`` what is already there (records, sessions, preference
    sections), listing it in ``already_present``: such an import never overwrites."""
    found = result.plan
    present = [*result.updated, *result.unchanged]
    found.records = [r for r in found.records if r["id"] not in present]
    result.updated, result.unchanged = [], []
    kept = []
    for item in found.sessions:
        if session_exists(item["id"]):
            present.append(item["id"])
        else:
            kept.append(item)
    found.sessions = kept
    if found.preferences is not None:
        taken = sorted(k for k in found.preferences if k in preferences and k != "updated_at")
        present += [f"preferences.{k}" for k in taken]
        new = {k: v for k, v in found.preferences.items() if k not in taken}
        found.preferences = new if set(new) - {"updated_at"} else None
    result.already_present = present


def read_document(path: Path) -> Any:
    """A user-supplied JSON file, decoded with the codec's limits, or one clear error. Only a
    regular file is read, and never more than the size limit (a device or FIFO is refused)."""
    if path.is_dir():
        raise InputError("is a directory, expected a JSON file", path=str(path))
    data = read_regular(path)  # opened non-blocking, checked with fstat, read up to the limit
    if data is None:
        raise InputError("no such file", path=str(path))
    return codec.loads(data, path=str(path))

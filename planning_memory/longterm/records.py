"""Long-term records on disk: one canonical JSON file per record, validated on every write."""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path
from typing import Any

from planning_memory.core import (
    LONG_TERM_DIRS,
    SCHEMA_FOR_TYPE,
    Layout,
    Record,
    check_id,
    codec,
    normalize,
    privacy,
    schema,
)
from planning_memory.errors import InputError, NotFoundError, SchemaError
from planning_memory.longterm import catalog
from planning_memory.store import Loaded, Store

_DIR_FOR_PREFIX = {"pat": "patterns", "mis": "mistakes"}


def iter_loaded(
    layout: Layout, store: Store, types: Iterable[str] | None = None
) -> Iterator[Loaded]:
    """Every long-term record file (of ``types`` if given), in id order per folder. A file
    that cannot be read or fails its schema is skipped and told to ``store.skip_broken``."""
    wanted = set(types) if types is not None else set(LONG_TERM_DIRS)
    folders = sorted({LONG_TERM_DIRS[t] for t in wanted})
    for folder in folders:
        for path in store.list_json(layout.long_term / folder):
            loaded = load_checked(store, path)
            if loaded is not None and _is_record(loaded.value, wanted):
                yield loaded


def load_checked(store: Store, path: Path) -> Loaded | None:
    """The record file at ``path``, schema-checked; None (and ``store.skip_broken``) when it is
    broken. The fast schema check costs ~10 us; only a failing record pays for jsonschema."""
    try:
        loaded = store.load(path)
        value = loaded.value
        name = SCHEMA_FOR_TYPE.get(value.get("type", "")) if isinstance(value, dict) else None
        valid = schema.fast_check(name) if name is not None else None
        if valid is None or not valid(value):
            check_record(value, path=store.rel(path))
        if value.get("id") != path.stem:  # a save would write a second file: a duplicate
            raise SchemaError(
                f"id {value.get('id')!r} does not match the file name",
                path=store.rel(path),
                json_path="$.id",
                hint=f"rename the file to {value.get('id')}.json or set its id to {path.stem}",
            )
    except (InputError, NotFoundError) as exc:  # broken JSON, a FIFO, a schema problem
        if os.path.lexists(path):  # not a file removed since it was listed
            store.skip_broken(exc)
        return None
    return loaded


def _is_record(value: Any, types: Collection[str]) -> bool:
    return isinstance(value, dict) and value.get("type") in types


def load_record(layout: Layout, store: Store, file: str) -> Record | None:
    """The record in ``file`` (``patterns/pat_….json``), or None when that JSON
    file holds no long-term record or is broken (``load_all`` skips it too)."""
    loaded = load_checked(store, layout.long_term / file)
    if loaded is None:
        return None
    value: Record = loaded.value
    return value if _is_record(value, LONG_TERM_DIRS) else None


def load_all(
    layout: Layout, store: Store, types: Iterable[str] | None = None, *, deleted: bool = False
) -> list[Record]:
    return [
        loaded.value
        for loaded in iter_loaded(layout, store, types)
        if deleted or loaded.value.get("deleted_at") is None
    ]


def locate(layout: Layout, store: Store, record_id: str) -> Loaded:
    """The file of record ``record_id`` (any long-term folder)."""
    check_id(record_id)
    prefix = record_id.split("_", 1)[0]
    first = _DIR_FOR_PREFIX.get(prefix, "learnings")
    folders = [first, *(d for d in ("patterns", "mistakes", "learnings") if d != first)]
    for folder in folders:
        path = layout.long_term / folder / f"{record_id}.json"
        if os.path.lexists(path):
            loaded = store.load(path)
            check_record(loaded.value, path=store.rel(path))
            return loaded
    raise NotFoundError(
        f"no record with id {record_id}",
        record_id=record_id,
        hint="`pmem show` lists what is in memory",
    )


def check_record(record: Any, *, path: str | None = None) -> Record:
    """Schema-check a long-term record; its ``type`` picks the schema."""
    if not isinstance(record, dict):
        raise SchemaError("a record must be a JSON object", path=path, json_path="$")
    name = SCHEMA_FOR_TYPE.get(record.get("type", ""))
    if name is None:
        raise SchemaError(
            f"unknown record type {record.get('type')!r}; expected one of "
            + ", ".join(sorted(SCHEMA_FOR_TYPE)),
            path=path,
            json_path="$.type",
        )
    schema.check(name, record, path=path)
    return record


def save(layout: Layout, store: Store, record: Record, *, expect: str | None = None) -> bool:
    """Validate and write one record; False if its file already held these exact bytes."""
    record = normalize(record)
    if record.get("type") not in LONG_TERM_DIRS:
        check_record(record)  # raises with the list of known types
    target = layout.record_path(record["type"], str(record.get("id", "")))
    try:
        check_record(record)
    except SchemaError as exc:
        exc.path = store.rel(target)  # named only when needed: rel() costs
        raise
    on_disk = _redacted(record)  # what ``store.write_json`` would write
    known = on_disk if on_disk == record else None  # checked: the catalog need not read it
    with catalog.writing(layout, store, target, known):
        return store.write_bytes(target, codec.dump_bytes(on_disk), expect=expect)


_REDACTED: dict[tuple[str | None, str], str] = {}  # (key, text) -> the text redacted
_REDACTED_MAX = 1 << 15


def _redacted(value: Any, key: str | None = None) -> Any:
    """``privacy.redact_value(value)``, each string redacted once per process: a save writes
    again the texts of the record it updates (an archived, reinforced or merged record), and
    many fields hold the same few words (``"pattern"``, ``"project"``)."""
    if isinstance(value, str):
        found = _REDACTED.get((key, value))
        if found is None:
            found = (
                privacy.redact_value({key: value})[key]
                if key is not None
                else privacy.redact(value)
            )
            if len(_REDACTED) >= _REDACTED_MAX:
                _REDACTED.clear()
            _REDACTED[(key, value)] = found
        return found
    if isinstance(value, dict):
        return {k: _redacted(v, k if isinstance(k, str) else None) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(item) for item in value]
    return privacy.redact_value(value)

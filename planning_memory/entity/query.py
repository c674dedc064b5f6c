"""Look-ups in the code map, and the annotations people and agents add to a file.

Files, functions, components, areas and relationships; annotations are notes,
``modified_by`` and a hand-written purpose."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from planning_memory.core import Layout, privacy
from planning_memory.entity import areas, modified
from planning_memory.entity.entities import (
    ANNOTATED,
    expand_component,
    expand_file,
    expand_function,
    name_of,
    qualified_of,
)
from planning_memory.entity.shards import RELATIONSHIPS, Shards, file_of, folder_of
from planning_memory.errors import InputError, LimitError, NotFoundError, UnsafePathError
from planning_memory.store import Store

Entity = dict[str, Any]
MAX_TEXT = 50_000


def repo_path(layout: Layout, path: str) -> str:
    """``path`` as a normalised repository-relative POSIX path, or UnsafePathError."""
    text = path.replace(os.sep, "/")
    if os.path.isabs(text):
        root = layout.repo_root.resolve().as_posix()
        if not text.startswith(root + "/"):
            raise UnsafePathError("path is outside the repository", path=path)
        text = text[len(root) + 1 :]
    text = posixpath.normpath(text)
    if text in (".", "") or text.startswith("../") or text == "..":
        raise UnsafePathError("path is outside the repository", path=path)
    return text


def get_file(layout: Layout, store: Store, path: str) -> Entity | None:
    """The file entity at ``path`` with its functions' qualified names, or None."""
    path = repo_path(layout, path)
    shard = Shards(layout, store).load_dir(folder_of(path))
    entity = shard.files.get(path)
    if entity is None:
        return None
    functions = sorted(qualified_of(k) for k in shard.functions if file_of(k) == path)
    return {**shown_file(layout, store, path, entity), "functions": functions}


def shown_file(
    layout: Layout, store: Store, path: str, entity: Entity, annotated: dict[str, str] | None = None
) -> Entity:
    """The full shape of a file entity as shown, with its ``last_modified`` (``modified``)."""
    if annotated is None:
        annotated = modified.annotated_at(layout, store)
    found = expand_file(path, entity)
    found["last_modified"] = modified.last_modified(layout, path, annotated)
    return found


_EXPAND = {"functions": expand_function, "components": expand_component}


def _matching(shards: Shards, kind: str, name: str) -> list[Entity]:
    if "::" in name:
        entries: Iterable[tuple[str, Entity]] = (
            shards.load_dir(folder_of(file_of(name))).kind(kind).items()
        )
    else:
        entries = shards.iter_kind(kind)
    found = [
        _EXPAND[kind](key, entity)
        for key, entity in entries
        if name in (key, name_of(key, entity), qualified_of(key))
    ]
    return sorted(found, key=lambda e: str(e["key"]))


def get_function(layout: Layout, store: Store, name: str) -> list[Entity]:
    """Functions whose name, qualified name (``Class.method``) or key (``path::name``) is
    ``name``; several files may define one name."""
    return _matching(Shards(layout, store), "functions", name)


def get_component(layout: Layout, store: Store, name: str) -> list[Entity]:
    return _matching(Shards(layout, store), "components", name)


def _relationships(layout: Layout, store: Store) -> Entity:
    value = Shards(layout, store).read(layout.entity / RELATIONSHIPS)
    return value if value is not None else {"areas": {}}


def get_area(layout: Layout, store: Store, name: str) -> Entity | None:
    found = _relationships(layout, store).get("areas", {})
    for key in (name, areas.SYNONYMS.get(name.lower(), name.lower())):
        if key in found:
            return {"name": key, **found[key]}
    return None


def _areas_of(layout: Layout, store: Store, path: str) -> list[str]:
    names = []
    for name, area in _relationships(layout, store).get("areas", {}).items():
        folders = area.get("paths", [])
        if path in area.get("files", []) or any(path.startswith(f + "/") for f in folders):
            names.append(name)
    return sorted(names)


def get_relationships(layout: Layout, store: Store, name: str) -> Entity:
    """How ``name`` (an area, a file path, a component or a function) relates to the rest."""
    area = get_area(layout, store, name)
    if area is not None:
        return {"kind": "area", **area}
    shards = Shards(layout, store)
    if "/" in name or "." in posixpath.basename(name):
        found = _file_relationships(layout, store, shards, name)
        if found is not None:
            return found
    components = _matching(shards, "components", name)
    if components:
        return _component_relationships(layout, store, shards, name, components)
    functions = _matching(shards, "functions", name)
    if functions:
        files = sorted({str(f["file"]) for f in functions})
        return {
            "kind": "function",
            "name": name,
            "definitions": [
                {k: f[k] for k in ("key", "file", "calls", "called_by", "side_effects")}
                for f in functions
            ],
            "areas": sorted({a for p in files for a in _areas_of(layout, store, p)}),
        }
    raise NotFoundError(f"no area, file, component or function named {name!r}")


def _file_relationships(layout: Layout, store: Store, shards: Shards, name: str) -> Entity | None:
    try:
        path = repo_path(layout, name)
    except UnsafePathError:
        return None
    entity = shards.load_dir(folder_of(path)).files.get(path)
    if entity is None:
        return None
    targets = {path, folder_of(path) or "."}  # a package import names its folder ("." the root)
    imported_by = sorted(
        p
        for p, e in shards.iter_kind("files")
        if p != path and any(t in targets for t in e.get("imports", {}).values())
    )
    return {
        "kind": "file",
        "name": path,
        "imports": sorted({t for t in entity.get("imports", {}).values() if t}),
        "packages": entity.get("packages", []),
        "imported_by": imported_by,
        "components": entity.get("components", []),
        "areas": _areas_of(layout, store, path),
    }


def _component_relationships(
    layout: Layout, store: Store, shards: Shards, name: str, found: list[Entity]
) -> Entity:
    names = {str(c["name"]) for c in found}
    parents = sorted(
        name_of(k, e)
        for k, e in shards.iter_kind("components")
        if names & set(e.get("children", []))
    )
    files = sorted({str(c["file"]) for c in found})
    return {
        "kind": "component",
        "name": name,
        "files": files,
        "children": sorted({ch for c in found for ch in c.get("children", [])}),
        "hooks": sorted({h for c in found for h in c.get("hooks", [])}),
        "rendered_by": parents,
        "areas": sorted({a for p in files for a in _areas_of(layout, store, p)}),
    }


# -- annotations ---------------------------------------------------------------------------
def _as_list(value: str | Iterable[str] | None, field: str) -> list[str]:
    if value is None:
        return []
    items = [value] if isinstance(value, str) else list(value)
    for item in items:
        if not isinstance(item, str):
            raise InputError(f"{field} must be text")
        if len(item) > MAX_TEXT:
            raise LimitError(f"{field} is over {MAX_TEXT:,} characters")
    return [privacy.redact(i.strip()) for i in items if i.strip()]


def update_file_annotations(
    layout: Layout,
    store: Store,
    path: str,
    *,
    notes: str | Iterable[str] | None = None,
    purpose: str | None = None,
    modified_by: str | Iterable[str] | None = None,
    now: datetime | None = None,
) -> Entity:
    """Add notes and authors to a file's entity and/or set a hand-written purpose (``""``
    hands the purpose back to the scanner). Returns the updated entity, its ``last_modified``
    at least ``now`` (seed 000's ``updateFileEntity``). The file must exist; the scanner keeps
    these fields on every rescan."""
    path = repo_path(layout, path)
    full = layout.repo_root / path
    if not full.is_file() or full.is_symlink():
        raise NotFoundError("no such file in the repository", path=path)
    new_notes = _as_list(notes, "notes")
    authors = _as_list(modified_by, "modified_by")
    if purpose is not None and len(purpose) > MAX_TEXT:
        raise LimitError(f"purpose is over {MAX_TEXT:,} characters", path=path)
    shards = Shards(layout, store)
    with store.lock():
        shard = shards.load_dir(folder_of(path))
        entity = dict(shard.files.get(path) or {"language": None, "hash": None})
        if new_notes:
            entity["notes"] = list(dict.fromkeys([*entity.get("notes", []), *new_notes]))
        if authors:
            entity["modified_by"] = sorted({*entity.get("modified_by", []), *authors})
        if purpose is not None:
            _set_purpose(entity, privacy.redact(purpose.strip()))
        shard.files[path] = entity
        shards.write_dir(folder_of(path), shard)
        modified.note_annotation(layout, store, path, now or datetime.now(UTC))
    return shown_file(layout, store, path, entity)


def _set_purpose(entity: Entity, purpose: str) -> None:
    if purpose:
        entity["purpose"] = purpose
        entity["purpose_source"] = ANNOTATED
    elif entity.get("purpose_source") == ANNOTATED:
        entity["purpose"] = None
        entity["purpose_source"] = None


def entity_snapshot(layout: Layout, store: Store) -> Entity:
    """All of entity memory in one value (for export): ``{files, functions, components,
    relationships}``, each entity in its full shape (files with ``last_modified``)."""
    files: dict[str, Entity] = {}
    functions: dict[str, Entity] = {}
    components: dict[str, Entity] = {}
    annotated = modified.annotated_at(layout, store)
    for shard in Shards(layout, store).iter_shards():
        for path, stored in shard.files.items():
            files[path] = shown_file(layout, store, path, stored, annotated)
        functions.update((k, expand_function(k, e)) for k, e in shard.functions.items())
        components.update((k, expand_component(k, e)) for k, e in shard.components.items())
    return {
        "files": dict(sorted(files.items())),
        "functions": dict(sorted(functions.items())),
        "components": dict(sorted(components.items())),
        "relationships": _relationships(layout, store),
    }

"""Props types imported from another file: their members merged into components' props.

The extractor sees one file at a time: a component whose props type comes from another file
records it as ``props_type``: ``import('../types').InputLabelProps``; the props of a
component it imports (``ComponentProps<typeof Button>``) as
``typeof import('./Button').Button``; inside ``Omit`` as
``Omit<import('./x').Props, 'a' | 'b'>``; several joined by `` & ``. A TypeScript file
records the members of the interfaces and type aliases it exports as ``types`` (as far as
the file itself declares them), the imported types each is built from as ``type_refs``
(``extends``, ``&``, a generic base by its own members), and the props of each component it
exports as ``types["typeof <name>"]`` (its ``props_type`` in ``type_refs``). Once a scan's
files are extracted, ``merge`` puts first in the component's props the members the imported
file records for that name (when the import resolves to a file of the map), then those of
the types that file's ``type_refs`` names, followed through their own imports, file after
file (``MAX_DEPTH`` deep, each type once, a barrel's re-exports followed), less the keys
``Omit`` leaves out; then the props its own file gives. A type from a package outside the
repository gives nothing.

A component's props so depend on several files. ``dependents`` names the files this scan
did not parse whose merge may be out of date (a file their props types lead to changed its
``types``, ``type_refs`` or re-exports, or their imports now resolve elsewhere): the scan
parses them again, so every merge starts from what the component's own file says.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from planning_memory.entity.filetable import FileTable
from planning_memory.entity.symbols import Symbols

Entity = dict[str, Any]
# ``import('m').Name``, ``typeof import('m').Button`` (a component's props), either inside
# ``Omit<..., 'a' | 'b'>`` (those keys left out)
_REF = re.compile(r"(typeof )?import\('([^']*)'\)\.([\w$]+)((?:, '[^']*'(?: \| '[^']*')*)?)")
_KEY = re.compile(r"'([^']*)'")
MAX_DEPTH = 10  # files a props type is followed through
_TYPE_FIELDS = ("types", "type_refs", "reexports")


def merge(paths: Iterable[str], table: FileTable, symbols: Symbols) -> None:
    """Merge imported props types into the components of ``paths`` (freshly extracted)."""
    for path in paths:
        components = symbols.components_of(path)
        if not any("props_type" in c for c in components.values()):
            continue
        merged = {key: _merged(path, c, table) for key, c in components.items()}
        symbols.replace(path, "components", merged)


def _merged(path: str, component: Entity, table: FileTable) -> Entity:
    members = _members_of_refs(table, path, component.get("props_type", ""), MAX_DEPTH, None)
    if not members:
        return component
    props = list(dict.fromkeys([*members, *component.get("props", [])]))
    return {**component, "props": props}


def _members_of_refs(
    table: FileTable, path: str, refs: str, depth: int, seen: set[tuple[str, str]] | None
) -> list[str]:
    """The members the imported types ``refs`` (written in ``path``) give, less what
    ``Omit`` leaves out. ``seen`` holds the types already followed (each once); None: each
    ref of ``refs`` starts its own walk."""
    imports = (table.get(path) or {}).get("imports", {})
    members: list[str] = []
    for typeof, module, name, omitted in _REF.findall(refs):
        target = imports.get(module)
        if not target:
            continue  # a package, or a module that is not a file of the map
        found = _type_members(table, target, typeof + name, depth, set() if seen is None else seen)
        left_out = set(_KEY.findall(omitted))
        members += [m for m in found if m not in left_out]
    return members


def _type_members(
    table: FileTable, path: str, name: str, depth: int, seen: set[tuple[str, str]]
) -> list[str]:
    """The members file ``path`` gives its type ``name``: those it declares, then those of
    the imported types it is built from (first, for a component's props, as ``merge`` puts
    them); for a name it does not declare, what the modules it re-exports give it."""
    if depth <= 0 or (path, name) in seen:
        return []
    seen.add((path, name))
    entity = table.get(path) or {}
    own = entity.get("types", {}).get(name)
    refs = entity.get("type_refs", {}).get(name)
    if own is None and refs is None:
        imports = entity.get("imports", {})
        targets = (imports.get(m) for m in entity.get("reexports", ()))
        return [m for t in targets if t for m in _type_members(table, t, name, depth - 1, seen)]
    inherited = [
        m for ref in refs or () for m in _members_of_refs(table, path, ref, depth - 1, seen)
    ]
    if name.startswith("typeof "):  # in the order of the component's own merged props
        return inherited + (own or [])
    return (own or []) + inherited


def dependents(table: FileTable, symbols: Symbols, parsed: set[str]) -> list[str]:
    """Files not in ``parsed`` with a component whose imported props type may have changed:
    its module leads to a file whose ``types``, ``type_refs`` or re-exports this scan
    changed (or that came or went), directly or through the files in between, or the file's
    imports resolve differently than before."""
    moved: set[str] = set()  # files whose types, as other files see them, may have changed
    rewired: set[str] = set()  # files not parsed whose imports were resolved again
    for path in table.changed_paths():
        old, new = table.old(path) or {}, table.get(path) or {}
        if any(old.get(k) != new.get(k) for k in _TYPE_FIELDS):
            moved.add(path)
        if path not in parsed and old and new and old.get("imports") != new.get("imports"):
            rewired.add(path)
            if any(new.get(k) for k in _TYPE_FIELDS[1:]):
                moved.add(path)  # its refs or re-exports now lead elsewhere
    if not moved and not rewired:
        return []
    importers = _importers(table) if moved else {}
    moved = _closure(table, moved, importers)
    candidates = set(rewired)
    for path in moved:
        candidates.update(importers.get(path, ()))
    return sorted(p for p in candidates - parsed if _stale(p, table, symbols, moved, rewired))


def _importers(table: FileTable) -> dict[str, set[str]]:
    """Each file -> the files that import it, after this scan's changes."""
    found: dict[str, set[str]] = {}
    for path, entity in table.graph_views()[1].items():
        for target in entity.get("imports", {}).values():
            if target:
                found.setdefault(target, set()).add(path)
    return found


def _closure(table: FileTable, moved: set[str], importers: dict[str, set[str]]) -> set[str]:
    """``moved`` and the files whose types lead to one (up to ``MAX_DEPTH`` files away):
    importers of a moved file that build types from imported ones or re-export modules."""
    found = set(moved)
    frontier = set(moved)
    for _ in range(MAX_DEPTH):
        reached = {p for m in frontier for p in importers.get(m, ())} - found
        frontier = {p for p in reached if _builds_types(table.get(p))}
        if not frontier:
            break
        found |= frontier
    return found


def _builds_types(entity: Entity | None) -> bool:
    return entity is not None and bool(entity.get("type_refs") or entity.get("reexports"))


def _stale(
    path: str, table: FileTable, symbols: Symbols, moved: set[str], rewired: set[str]
) -> bool:
    """Whether a props type of ``path``'s components names a module now in ``moved`` (or
    any, when ``path``'s imports changed)."""
    imports = (table.get(path) or {}).get("imports", {})
    for component in symbols.components_of(path).values():
        for _typeof, module, _name, _omitted in _REF.findall(component.get("props_type", "")):
            if path in rewired or imports.get(module) in moved:
                return True
    return False

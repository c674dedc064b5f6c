"""Props types imported from another file: their members merged into components' props.

The extractor sees one file at a time: a component whose props type comes from another file
records it as ``props_type``: ``import('../types').InputLabelProps``; the props of a
component it imports (``ComponentProps<typeof Button>``) as
``typeof import('./Button').Button``; inside ``Omit`` as
``Omit<import('./x').Props, 'a' | 'b'>``; several joined by `` & ``. A TypeScript file
records the members of the interfaces and type aliases it exports as ``types``, and the
props of each component it exports as ``types["typeof <name>"]``. Once a scan's files are
extracted, ``merge`` puts the members the imported file records for that name (when the
import resolves to a file of the map), less the keys ``Omit`` leaves out, first in the
component's props, then the props its own file gives. Only what that one file declares
counts: a type it builds from a third file's types gives its own members.

A component's props so depend on two files. ``dependents`` names the files this scan did not
parse whose merge may be out of date (a file their props types come from changed its
``types``, or their imports now resolve elsewhere): the scan parses them again, so every
merge starts from what the component's own file says.
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


def merge(paths: Iterable[str], table: FileTable, symbols: Symbols) -> None:
    """Merge imported props types into the components of ``paths`` (freshly extracted)."""
    for path in paths:
        components = symbols.components_of(path)
        if not any("props_type" in c for c in components.values()):
            continue
        imports = (table.get(path) or {}).get("imports", {})
        merged = {key: _merged(c, imports, table) for key, c in components.items()}
        symbols.replace(path, "components", merged)


def _merged(component: Entity, imports: dict[str, str | None], table: FileTable) -> Entity:
    members: list[str] = []
    for typeof, module, name, omitted in _REF.findall(component.get("props_type", "")):
        target = imports.get(module)
        source = table.get(target) if target else None
        found = (source or {}).get("types", {}).get(typeof + name, [])
        left_out = set(_KEY.findall(omitted))
        members += [m for m in found if m not in left_out]
    if not members:
        return component
    props = list(dict.fromkeys([*members, *component.get("props", [])]))
    return {**component, "props": props}


def dependents(table: FileTable, symbols: Symbols, parsed: set[str]) -> list[str]:
    """Files not in ``parsed`` with a component whose imported props type may have changed:
    its module resolves to a file whose ``types`` this scan changed (or that came or went),
    or the file's imports resolve differently than before."""
    moved: set[str] = set()  # files whose ``types`` changed
    rewired: set[str] = set()  # files not parsed whose imports were resolved again
    for path in table.changed_paths():
        old, new = table.old(path), table.get(path)
        if (old or {}).get("types") != (new or {}).get("types"):
            moved.add(path)
        if path not in parsed and old and new and old.get("imports") != new.get("imports"):
            rewired.add(path)
    if not moved and not rewired:
        return []
    candidates = set(rewired)
    if moved:
        after = table.graph_views()[1]
        candidates.update(
            p for p, e in after.items() if not moved.isdisjoint(e.get("imports", {}).values())
        )
    return sorted(p for p in candidates - parsed if _stale(p, table, symbols, moved, rewired))


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

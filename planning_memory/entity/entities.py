"""Entity records built from extracted facts; their stored (compact) and full shapes. Pure.

A file entity holds what the scanner derived (language, type, purpose, imports, exports, line
count, complexity, hash, ...) plus annotations a person or an agent added: ``notes``,
``modified_by`` and a ``purpose`` with ``purpose_source: "annotation"``. On rescan the derived
fields are replaced and the annotations are carried over.

Shards store entities compactly: fields that can be derived from the key (``file``,
``name``, ``qualified_name``) and empty or default values (``null``, ``[]``, ``false``) are
left out. ``expand_*`` gives the full shape the API returns.
"""

from __future__ import annotations

import re
from typing import Any

from planning_memory.entity.facts import ComponentFact, FileFacts, FunctionFact

ANNOTATIONS = ("notes", "modified_by")
ANNOTATED = "annotation"
_TEST_PATH = re.compile(
    r"(^|/)(tests?|__tests__|spec)/|(^|/)test_[^/]*\.py$|_test\.(py|go)$|"
    r"\.(test|spec)\.[jt]sx?$|Tests?\.java$"
)
Entity = dict[str, Any]
FILE_LISTS = ("packages", "reexports", "exports", "classes", "components", "models")
FUNCTION_LISTS = ("side_effects", "calls", "called_by")
COMPONENT_LISTS = ("props", "state", "hooks", "children")


def complexity_label(facts: FileFacts) -> str:
    """``low``/``medium``/``high`` from the most complex function (McCabe's bands: 1-5, 6-10,
    more), raised one band for a file over 60 branch points in total."""
    worst = max((f["complexity"] for f in facts["functions"]), default=facts["complexity"])
    band = 0 if worst <= 5 else 1 if worst <= 10 else 2
    if facts["complexity"] > 60:
        band = min(2, band + 1)
    return ("low", "medium", "high")[band]


def file_type(path: str, facts: FileFacts) -> str:
    if _TEST_PATH.search(path):
        return "test"
    if path.endswith((".d.ts", ".pyi")):
        return "types"
    if facts["components"]:
        return "component"
    return "module"


# -- keys ----------------------------------------------------------------------------------
def keyed(path: str, names: list[str]) -> list[str]:
    """Entity keys ``path::name``; a repeated name gets ``#2``, ``#3``... in source order."""
    seen: dict[str, int] = {}
    keys = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        suffix = f"#{seen[name]}" if seen[name] > 1 else ""
        keys.append(f"{path}::{name}{suffix}")
    return keys


def qualified_of(key: str) -> str:
    qualified = key.split("::", 1)[1] if "::" in key else key
    if "#" in qualified:
        head, _, tail = qualified.rpartition("#")
        if tail.isdigit():
            return head
    return qualified


def name_of(key: str, entity: Entity) -> str:
    """A function's or component's simple name (stored only when the key cannot give it)."""
    stored = entity.get("name")
    if isinstance(stored, str):
        return stored
    return qualified_of(key).rsplit(".", 1)[-1]


def _compact(entity: Entity) -> Entity:
    """``entity`` without ``None``, ``False``, ``[]`` and ``{}`` values (``0`` and ``""`` kept);
    a truthy value, the common case, costs one test."""
    return {
        k: v for k, v in entity.items() if v or not (v is None or v is False or v == [] or v == {})
    }


# -- building (run in the workers) ---------------------------------------------------------
def file_entity(
    path: str, language: str, digest: str, lines: int, facts: FileFacts, utf8: bool
) -> Entity:
    """The stored file entity for freshly extracted ``facts`` (no annotations yet)."""
    return _compact(
        {
            "language": language,
            "type": file_type(path, facts),
            "purpose": facts["purpose"],
            "purpose_source": "code" if facts["purpose"] else None,
            "imports": {i["module"]: None for i in facts["imports"]},
            "reexports": sorted({i["module"] for i in facts["imports"] if i.get("reexport")}),
            "exports": sorted(set(facts["exports"])),
            "classes": sorted(set(facts["classes"])),
            "components": sorted({c["name"] for c in facts["components"]}),
            "models": sorted(set(facts["models"])),
            "types": facts.get("types"),
            "type_refs": facts.get("type_refs"),
            "lines": lines,
            "complexity": complexity_label(facts),
            "cyclomatic": facts["complexity"],
            "hash": digest,
            "parse_errors": facts["parse_errors"],
            "encoding_errors": not utf8,
        }
    )


def function_entities(
    path: str, facts: FileFacts, side_effects: list[list[str]]
) -> dict[str, Entity]:
    functions = facts["functions"]
    keys = keyed(path, [f["qualified_name"] for f in functions])
    return {
        key: _function_entity(key, fact, effects)
        for key, fact, effects in zip(keys, functions, side_effects, strict=True)
    }


def _function_entity(key: str, fact: FunctionFact, effects: list[str]) -> Entity:
    entity = _compact(
        {
            "kind": fact["kind"],
            "lines": fact["lines"],
            "signature": fact["signature"],
            "purpose": fact["purpose"],
            "side_effects": effects,
            "calls": sorted(set(fact["calls"])),
            "exported": fact["exported"],
            "complexity": fact["complexity"],
            "hash": fact["hash"],
        }
    )
    if name_of(key, {}) != fact["name"]:
        entity["name"] = fact["name"]
    return entity


def component_entities(path: str, facts: FileFacts) -> dict[str, Entity]:
    components = facts["components"]
    keys = keyed(path, [c["name"] for c in components])
    return {k: _component_entity(k, c) for k, c in zip(keys, components, strict=True)}


def _component_entity(key: str, fact: ComponentFact) -> Entity:
    entity = _compact(
        {
            "kind": fact["kind"],
            "lines": fact["lines"],
            "props": fact["props"],
            "state": fact["state"],
            "hooks": fact["hooks"],
            "children": fact["children"],
            "exported": fact["exported"],
            "props_type": fact.get("props_type"),
        }
    )
    if name_of(key, {}) != fact["name"]:
        entity["name"] = fact["name"]
    return entity


# -- annotations ---------------------------------------------------------------------------
def carry(entity: Entity, old: Entity | None, *, keep: tuple[str, ...] = ()) -> Entity:
    """``entity`` with the annotations of ``old`` (notes, modified_by, a hand purpose) and
    the fields named in ``keep`` copied over."""
    if not old:
        return entity
    for key in (*ANNOTATIONS, *keep):
        if old.get(key):
            entity[key] = old[key]
    if old.get("purpose_source") == ANNOTATED:
        entity["purpose"] = old.get("purpose")
        entity["purpose_source"] = ANNOTATED
    return entity


def annotation_only(old: Entity) -> Entity | None:
    """What is left of ``old`` when its file is no longer a scanned source file: its
    annotations, or None when it has none."""
    kept = carry({}, old)
    if not kept:
        return None
    return {"language": None, "hash": None, **kept}


# -- full shapes for the API ---------------------------------------------------------------
def expand_file(path: str, stored: Entity) -> Entity:
    full: Entity = {"path": path, "purpose": None, "purpose_source": None, "imports": {}}
    full.update({k: [] for k in FILE_LISTS})
    full.update(stored)
    full["depends_on"] = sorted({p for p in full["imports"].values() if p})
    return full


def expand_function(key: str, stored: Entity) -> Entity:
    full: Entity = {
        "key": key,
        "name": name_of(key, stored),
        "qualified_name": qualified_of(key),
        "file": key.split("::", 1)[0],
        "purpose": None,
        "exported": False,
    }
    full.update({k: [] for k in FUNCTION_LISTS})
    full.update(stored)
    return full


def expand_component(key: str, stored: Entity) -> Entity:
    full: Entity = {
        "key": key,
        "name": name_of(key, stored),
        "file": key.split("::", 1)[0],
        "exported": False,
    }
    full.update({k: [] for k in COMPONENT_LISTS})
    full.update(stored)
    return full

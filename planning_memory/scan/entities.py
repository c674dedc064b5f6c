"""Entity records built from extracted facts, and the annotations that survive a rescan. Pure.

A file entity holds what the scanner derived (language, type, purpose, imports, exports, line
count, complexity, hash, ...) plus annotations a person or an agent added: ``notes``,
``modified_by`` and a ``purpose`` with ``purpose_source: "annotation"``. On rescan the derived
fields are replaced and the annotations are carried over.
"""

from __future__ import annotations

import re
from typing import Any

from planning_memory.scan.facts import ComponentFact, FileFacts, FunctionFact

ANNOTATIONS = ("notes", "modified_by")
ANNOTATED = "annotation"
_TEST_PATH = re.compile(
    r"(^|/)(tests?|__tests__|spec)/|(^|/)test_[^/]*\.py$|_test\.(py|go)$|"
    r"\.(test|spec)\.[jt]sx?$|Tests?\.java$"
)
Entity = dict[str, Any]


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


def file_entity(
    path: str,
    language: str,
    digest: str,
    lines: int,
    facts: FileFacts,
    utf8: bool,
    old: Entity | None,
) -> Entity:
    entity: Entity = {
        "language": language,
        "type": file_type(path, facts),
        "purpose": facts["purpose"],
        "purpose_source": "code" if facts["purpose"] else None,
        "imports": sorted(
            ({**i} for i in facts["imports"]), key=lambda i: (i["module"], bool(i.get("reexport")))
        ),
        "exports": sorted(set(facts["exports"])),
        "classes": sorted(set(facts["classes"])),
        "components": sorted({c["name"] for c in facts["components"]}),
        "models": sorted(set(facts["models"])),
        "lines": lines,
        "complexity": complexity_label(facts),
        "cyclomatic": facts["complexity"],
        "hash": digest,
    }
    if facts["parse_errors"]:
        entity["parse_errors"] = True
    if not utf8:
        entity["encoding_errors"] = True
    return carry_annotations(entity, old)


def carry_annotations(entity: Entity, old: Entity | None) -> Entity:
    """``entity`` with the annotations of ``old`` (notes, modified_by, a hand purpose)."""
    if not old:
        return entity
    for key in ANNOTATIONS:
        if old.get(key):
            entity[key] = old[key]
    if old.get("purpose_source") == ANNOTATED:
        entity["purpose"] = old.get("purpose")
        entity["purpose_source"] = ANNOTATED
    return entity


def annotation_only(old: Entity) -> Entity | None:
    """What is left of ``old`` when its file is no longer a scanned source file: its
    annotations, or None when it has none."""
    kept: Entity = {k: old[k] for k in ANNOTATIONS if old.get(k)}
    if old.get("purpose_source") == ANNOTATED:
        kept["purpose"] = old.get("purpose")
        kept["purpose_source"] = ANNOTATED
    if not kept:
        return None
    return {"language": None, "hash": None, **kept}


def keyed(path: str, names: list[str]) -> list[str]:
    """Entity keys ``path::name``; a repeated name gets ``#2``, ``#3``... in source order."""
    seen: dict[str, int] = {}
    keys = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        suffix = f"#{seen[name]}" if seen[name] > 1 else ""
        keys.append(f"{path}::{name}{suffix}")
    return keys


def function_entities(
    path: str, facts: FileFacts, side_effects: list[list[str]], old: dict[str, Entity]
) -> dict[str, Entity]:
    functions = facts["functions"]
    keys = keyed(path, [f["qualified_name"] for f in functions])
    out: dict[str, Entity] = {}
    for key, fact, effects in zip(keys, functions, side_effects, strict=True):
        out[key] = _function_entity(path, fact, effects, old.get(key))
    return out


def _function_entity(
    path: str, fact: FunctionFact, effects: list[str], old: Entity | None
) -> Entity:
    entity: Entity = {
        "name": fact["name"],
        "qualified_name": fact["qualified_name"],
        "file": path,
        "kind": fact["kind"],
        "lines": fact["lines"],
        "signature": fact["signature"],
        "purpose": fact["purpose"],
        "side_effects": effects,
        "calls": sorted(set(fact["calls"])),
        "called_by": list(old.get("called_by", [])) if old else [],
        "exported": fact["exported"],
        "complexity": fact["complexity"],
        "hash": fact["hash"],
    }
    if old:
        for key in ANNOTATIONS:
            if old.get(key):
                entity[key] = old[key]
        if old.get("purpose_source") == ANNOTATED:
            entity["purpose"] = old.get("purpose")
            entity["purpose_source"] = ANNOTATED
    return entity


def component_entities(path: str, facts: FileFacts, old: dict[str, Entity]) -> dict[str, Entity]:
    components = facts["components"]
    keys = keyed(path, [c["name"] for c in components])
    return {
        k: _component_entity(path, c, old.get(k)) for k, c in zip(keys, components, strict=True)
    }


def _component_entity(path: str, fact: ComponentFact, old: Entity | None) -> Entity:
    entity: Entity = {
        "name": fact["name"],
        "file": path,
        "kind": fact["kind"],
        "lines": fact["lines"],
        "props": fact["props"],
        "state": fact["state"],
        "hooks": fact["hooks"],
        "children": fact["children"],
        "exported": fact["exported"],
    }
    if old:
        for key in ANNOTATIONS:
            if old.get(key):
                entity[key] = old[key]
    return entity

"""Import resolution: the code map's ``imports`` against ``ts.resolveModuleName``.

Compared: each distinct (file, module) of a TypeScript/JavaScript corpus that is relative
(``./``, ``../``) or that TypeScript resolves to a file of the corpus (a tsconfig alias).
Self-imports (an import resolved to the importing file) are counted for every corpus.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from accuracy.codemap import CodeMap

CODE = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".json", ".d.ts")


@dataclass
class ImportScore:
    compared: int = 0  # TypeScript resolved these into the corpus
    agree: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[tuple[str, str, Any, Any]]] = field(default_factory=dict)


def compare(view: dict[str, Any], code: CodeMap) -> ImportScore:
    score = ImportScore()
    seen = set()
    for item in view["imports"]:
        place = (item["file"], item["module"])
        if place in seen:
            continue
        seen.add(place)
        theirs = item["resolved"]
        if theirs is None and not item["module"].startswith("."):
            continue
        table = code.files.get(item["file"], {}).get("imports", {})
        mine = table.get(item["module"], "<absent>")
        outcome = _outcome(theirs, mine)
        score.outcomes[outcome] += 1
        if theirs is not None:
            score.compared += 1
            score.agree += outcome == "agree"
        if outcome != "agree":
            score.examples.setdefault(outcome, []).append((*place, theirs, mine))
    return score


def _outcome(theirs: str | None, mine: str | None) -> str:
    if theirs is None:
        if mine is None or mine == "<absent>":
            return "agree"
        return "asset (not code)" if not mine.endswith(CODE) else "TS unresolved, map resolved"
    if mine == theirs:
        return "agree"
    if mine == "<absent>":
        return "not recorded"
    if mine is None:
        return "left unresolved"
    return "other file"


def self_imports(code: CodeMap) -> list[tuple[str, str]]:
    return [
        (path, module)
        for path, entity in code.files.items()
        for module, target in (entity.get("imports") or {}).items()
        if target == path
    ]

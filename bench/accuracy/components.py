"""React components and their props against the TypeScript compiler (bench/ts_components.mjs).

- Component recall: the compiler's components (file + name) the code map has; precision: the
  code map's components the compiler also finds.
- Props, for components both find in TypeScript files (the compiler knows nothing of an
  untyped JavaScript parameter): per component, recall against the props declared in the
  corpus ("own") and against every prop the checker lists (inherited ones included, such as
  a React Native View's 60-odd), and precision against every prop; each averaged over the
  components where it is defined, with the summed counts beside it.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from accuracy.codemap import CodeMap

SCRIPT = Path(__file__).resolve().parent.parent / "ts_components.mjs"


def typescript_view(root: Path, node_modules: Path) -> dict[str, Any]:
    """{"components": [...], "imports": [...], "files": n} from the compiler API."""
    done = subprocess.run(
        ["node", str(SCRIPT), str(root), str(node_modules)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


@dataclass
class Ratio:
    hit: int = 0
    total: int = 0
    per_item: list[float] = field(default_factory=list)

    def add(self, hit: int, total: int) -> None:
        self.hit += hit
        self.total += total
        if total:
            self.per_item.append(hit / total)

    @property
    def mean(self) -> float | None:
        return sum(self.per_item) / len(self.per_item) if self.per_item else None


@dataclass
class ComponentScore:
    compiler: int = 0
    codemap: int = 0
    found: int = 0
    confirmed: int = 0
    own_recall: Ratio = field(default_factory=Ratio)
    all_recall: Ratio = field(default_factory=Ratio)
    precision: Ratio = field(default_factory=Ratio)
    compared: int = 0  # components whose props were compared
    missed: list[dict[str, Any]] = field(default_factory=list)
    extra: list[dict[str, Any]] = field(default_factory=list)
    # (file, component, props the code map lacks (own), props it has that the type lacks)
    prop_diffs: list[tuple[str, str, list[str], list[str]]] = field(default_factory=list)


def compare(view: dict[str, Any], code: CodeMap) -> ComponentScore:
    score = ComponentScore()
    ours = {(c["file"], c["name"]): c for c in code.components.values()}
    theirs = {(c["file"], c["name"]): c for c in view["components"]}
    score.compiler, score.codemap = len(theirs), len(ours)
    for place, comp in sorted(theirs.items()):
        mine = ours.get(place)
        if mine is None:
            score.missed.append(comp)
            continue
        score.found += 1
        if comp["props"] is None or not comp["file"].endswith((".ts", ".tsx")):
            continue
        score.compared += 1
        listed = set(mine.get("props") or [])
        every = {p["name"] for p in comp["props"]}
        own = {p["name"] for p in comp["props"] if p["own"]}
        score.own_recall.add(len(listed & own), len(own))
        score.all_recall.add(len(listed & every), len(every))
        score.precision.add(len(listed & every), len(listed))
        if own - listed or listed - every:
            score.prop_diffs.append(
                (comp["file"], comp["name"], sorted(own - listed), sorted(listed - every))
            )
    for place, mine in sorted(ours.items()):
        if place in theirs:
            score.confirmed += 1
        else:
            score.extra.append(mine)
    return score

"""Definitions: the code map's functions and classes against universal-ctags.

ctags runs as ``ctags --output-format=json --fields=+nl --map-TypeScript=+.tsx -R`` (ctags
has no TSX parser; its TypeScript one reads .tsx files well enough for definitions).

- Recall: ctags' function-like tags (FUNCTION_KINDS) that the code map has as a function of
  the same file and name whose first line is within one line of the tag's.
- Precision: code-map functions for which ctags has a tag of any kind with that name within
  one line (ctags calls ``const f = () => ...`` a constant and a class field holding an arrow
  function a property). A code-map function with no such tag is reported as "nested" when it
  sits inside another code-map function (ctags leaves out local definitions), else "other".
- Classes: ctags' class-like tags (CLASS_KINDS) against each file's ``classes`` (by name; the
  map lists a nested class qualified, ``Outer.Inner``, and its last part is compared),
  top-level ones apart from those nested in a class or local to a function. ctags' JavaScript
  "classes" that are object literals (no ``class`` on the line) are left out.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from accuracy.codemap import CodeMap

LANGUAGES = {
    ".py": "python",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
}
FUNCTION_KINDS = {
    "python": {"function", "member"},
    "javascript": {"function", "method", "generator", "getter", "setter"},
    "typescript": {"function", "method", "generator"},
    "tsx": {"function", "method", "generator"},
    "go": {"func"},
    "rust": {"function", "method"},
    "java": {"method"},
}
CLASS_KINDS = {
    "python": {"class"},
    "javascript": {"class"},
    "typescript": {"class"},
    "tsx": {"class"},
    "go": {"struct", "interface"},
    "rust": {"struct", "enum", "interface"},
    "java": {"class", "interface", "enum"},
}


@dataclass(frozen=True)
class Tag:
    file: str
    name: str
    line: int
    kind: str
    scope_kind: str  # "" at the top level, else the kind of the enclosing definition


@dataclass
class Score:
    """Counts for one corpus and language, with examples of each kind of disagreement."""

    ctags_functions: int = 0
    found: int = 0
    line_off: int = 0  # same file and name, first line more than one line away
    codemap_functions: int = 0
    confirmed: int = 0
    unconfirmed_nested: int = 0
    ctags_classes: int = 0  # at the top level of a file
    classes_found: int = 0
    nested_classes: int = 0  # inside another class
    nested_found: int = 0
    local_classes: int = 0  # inside a function
    local_found: int = 0
    missed: list[Tag] = field(default_factory=list)
    unconfirmed: list[dict[str, Any]] = field(default_factory=list)
    missed_classes: list[Tag] = field(default_factory=list)


def run_ctags(ctags: str, root: Path, repeat: int = 1) -> tuple[list[Tag], float]:
    """ctags' tags of the 7 languages, and the fastest of ``repeat`` runs' seconds."""
    cmd = [ctags, "--output-format=json", "--fields=+nl", "--map-TypeScript=+.tsx", "-R"]
    cmd += ["--exclude=.git", "--exclude=.planning", "--exclude=node_modules", "-f", "-", "."]
    wall = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=True)
        wall = min(wall, time.perf_counter() - started)
    tags = []
    for line in done.stdout.splitlines():
        tag = json.loads(line)
        path = tag.get("path", "").removeprefix("./")
        if tag.get("_type") != "tag" or Path(path).suffix not in LANGUAGES:
            continue
        if _object_literal(tag):
            continue
        tags.append(Tag(path, tag["name"], tag["line"], tag["kind"], tag.get("scopeKind", "")))
    return tags, round(wall, 3)


def _object_literal(tag: dict[str, Any]) -> bool:
    """ctags' JavaScript parser calls an object literal with methods a class."""
    return (
        tag["kind"] == "class"
        and LANGUAGES[Path(tag["path"]).suffix] in ("javascript", "typescript", "tsx")
        and "class" not in tag.get("pattern", "")
    )


def language(path: str) -> str:
    return LANGUAGES[Path(path).suffix]


def compare(tags: list[Tag], code: CodeMap) -> dict[str, Score]:
    scores: dict[str, Score] = defaultdict(Score)
    starts: dict[tuple[str, str], list[int]] = defaultdict(list)
    for fn in code.functions.values():
        starts[fn["file"], fn["name"]].append(fn["lines"][0])
    class_names: dict[str, set[str]] = defaultdict(set)  # "Outer.Inner" is listed as such
    for path, entity in code.files.items():
        class_names[path] = {name.rsplit(".", 1)[-1] for name in entity.get("classes", [])}
    by_place: dict[tuple[str, str], list[int]] = defaultdict(list)
    for tag in tags:
        by_place[tag.file, tag.name].append(tag.line)
        lang = language(tag.file)
        score = scores[lang]
        if tag.kind in FUNCTION_KINDS[lang]:
            score.ctags_functions += 1
            lines = starts.get((tag.file, tag.name), [])
            if any(abs(line - tag.line) <= 1 for line in lines):
                score.found += 1
            else:
                score.line_off += bool(lines)
                score.missed.append(tag)
        elif tag.kind in CLASS_KINDS[lang]:
            found = tag.name in class_names[tag.file]
            if tag.scope_kind in ("", "package", "module", "namespace"):
                score.ctags_classes += 1
                score.classes_found += found
                if not found:
                    score.missed_classes.append(tag)
            elif tag.scope_kind in CLASS_KINDS[lang] | {"class"}:
                score.nested_classes += 1
                score.nested_found += found
            else:
                score.local_classes += 1
                score.local_found += found
    spans = defaultdict(list)
    for fn in code.functions.values():
        spans[fn["file"]].append(fn["lines"])
    for fn in code.functions.values():
        if Path(fn["file"]).suffix not in LANGUAGES:
            continue
        score = scores[language(fn["file"])]
        score.codemap_functions += 1
        start, end = fn["lines"]
        if any(abs(line - start) <= 1 for line in by_place.get((fn["file"], fn["name"]), [])):
            score.confirmed += 1
        elif any(s < start and end <= e for s, e in spans[fn["file"]] if [s, e] != fn["lines"]):
            score.unconfirmed_nested += 1
        else:
            score.unconfirmed.append(fn)
    return dict(scores)

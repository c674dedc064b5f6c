"""The code map of a corpus: a cold `pmem scan` (timed) and its snapshot.

Cold means a fresh ``.planning/``: it is removed, ``pmem init`` makes a new one (not timed)
and ``pmem scan --json`` runs as a new process (start-up included in the wall time; the
scan's own ``seconds`` are kept too). With ``--repeat N`` the fastest of N cold scans counts
(the machine is shared).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planning_memory import Memory

PMEM = str(Path(sys.executable).with_name("pmem"))
DEPTH = 10  # files a props type is followed through (the scanner's own limit)


@dataclass(frozen=True)
class CodeMap:
    files: dict[str, dict[str, Any]]
    functions: dict[str, dict[str, Any]]
    components: dict[str, dict[str, Any]]
    wall: float  # `pmem scan` as a process, seconds
    seconds: float  # the scan's own figure
    parsed: int
    errors: int


def scan(root: Path, repeat: int = 1) -> CodeMap:
    """The code map after ``repeat`` cold scans, with the fastest one's times."""
    runs = [_cold_scan(root) for _ in range(repeat)]
    wall = min(wall for wall, _ in runs)
    report = min((r for _, r in runs), key=lambda r: r["seconds"])
    memory = Memory.open(root)
    # the facade's name for it moved (mem.entity_snapshot() -> mem.code.snapshot())
    snapshot = memory.code.snapshot() if hasattr(memory, "code") else memory.entity_snapshot()
    return CodeMap(
        snapshot["files"],
        snapshot["functions"],
        snapshot["components"],
        round(wall, 3),
        report["seconds"],
        report["parsed"],
        report["errors"],
    )


def _cold_scan(root: Path) -> tuple[float, dict[str, Any]]:
    shutil.rmtree(root / ".planning", ignore_errors=True)
    subprocess.run([PMEM, "init"], cwd=root, check=True, capture_output=True)
    started = time.perf_counter()
    done = subprocess.run(
        [PMEM, "scan", "--json"], cwd=root, check=True, capture_output=True, text=True
    )
    return time.perf_counter() - started, json.loads(done.stdout)


def lines_of(root: Path, path: str) -> list[str]:
    return (root / path).read_text(encoding="utf-8", errors="replace").splitlines()


def not_verbatim(root: Path, code: CodeMap) -> list[tuple[str, str, str]]:
    """Names the code map reports that do not occur in their file's text: (what, file, name)
    for functions, components and props (a correct map has none). A prop may come from a
    props type or a component another file declares (``props_type``): it counts when it
    occurs in a file the component's file imports, or one those import, up to ``DEPTH``
    files away."""
    texts: dict[str, str] = {}

    def text(path: str) -> str:
        if path not in texts:
            texts[path] = (root / path).read_text(encoding="utf-8", errors="replace")
        return texts[path]

    def reachable(path: str) -> list[str]:
        """The files ``path`` imports, and theirs, up to ``DEPTH`` files away (props types are
        followed that far)."""
        seen, frontier = {path}, [path]
        for _ in range(DEPTH):
            frontier = [
                t
                for p in frontier
                for t in code.files.get(p, {}).get("imports", {}).values()
                if t and t not in seen and (root / t).is_file()
            ]
            seen.update(frontier)
        return sorted(seen - {path})

    found = []
    for fn in code.functions.values():
        if not _occurs(fn["name"], text(fn["file"])):
            found.append(("function", fn["file"], fn["name"]))
    for comp in code.components.values():
        if not _occurs(comp["name"], text(comp["file"])):
            found.append(("component", comp["file"], comp["name"]))
        imported = reachable(comp["file"]) if comp.get("props_type") else []
        for prop in comp.get("props") or []:
            if _occurs(prop, text(comp["file"])):
                continue
            if any(_occurs(prop, text(t)) for t in imported):
                continue
            found.append(("prop", comp["file"], f"{comp['name']}.{prop}"))
    return found


def _occurs(name: str, text: str) -> bool:
    return re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", text) is not None

"""Speed yardsticks for a corpus: tree-sitter alone on the same files, and aider's repo map.

The tree-sitter floor parses every file the code map holds with the same grammar wheels the
scanner uses, in 2 processes (the machine's cores), doing nothing with the trees: no scan
of the files can be faster. aider (``aider-chat``, pinned) is installed into its own venv
under the cache and its repo map is timed cold on the same files (accuracy/aider_map.py).
"""

from __future__ import annotations

import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from accuracy.corpora import CACHE, run

AIDER = "aider-chat==0.86.2"
AIDER_VENV = CACHE / "aider-venv"
AIDER_SCRIPT = Path(__file__).resolve().parent / "aider_map.py"

_PARSERS: dict[str, Any] = {}


def _parsers() -> dict[str, Any]:
    import tree_sitter_go
    import tree_sitter_java
    import tree_sitter_javascript
    import tree_sitter_python
    import tree_sitter_rust
    import tree_sitter_typescript
    from tree_sitter import Language, Parser

    javascript = Parser(Language(tree_sitter_javascript.language()))
    return {
        ".py": Parser(Language(tree_sitter_python.language())),
        ".go": Parser(Language(tree_sitter_go.language())),
        ".java": Parser(Language(tree_sitter_java.language())),
        ".rs": Parser(Language(tree_sitter_rust.language())),
        ".ts": Parser(Language(tree_sitter_typescript.language_typescript())),
        ".tsx": Parser(Language(tree_sitter_typescript.language_tsx())),
        **dict.fromkeys((".js", ".jsx", ".mjs", ".cjs"), javascript),
    }


def _parse_all(paths: list[str]) -> int:
    if not _PARSERS:
        _PARSERS.update(_parsers())
    for path in paths:
        _PARSERS[Path(path).suffix].parse(Path(path).read_bytes())
    return len(paths)


def tree_sitter_floor(root: Path, files: list[str], repeat: int = 1, workers: int = 2) -> float:
    """Wall seconds (the fastest of ``repeat``), worker start included."""
    paths = [str(root / f) for f in files]
    chunks = [paths[i::workers] for i in range(workers)]
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        with ProcessPoolExecutor(workers) as pool:
            sum(pool.map(_parse_all, chunks))
        best = min(best, time.perf_counter() - started)
    return round(best, 3)


def aider_ready() -> str | None:
    """None when aider's venv works, else why not (installed once, at bench time)."""
    python = AIDER_VENV / "bin" / "python"
    stamp = AIDER_VENV / ".pmem-bench-installed"
    if stamp.exists() and stamp.read_text() == AIDER:
        return None
    done = run([sys.executable, "-m", "venv", str(AIDER_VENV)])
    if done.returncode == 0:
        done = run([str(python), "-m", "pip", "install", "--quiet", AIDER], timeout=1800)
    if done.returncode != 0:
        return f"{AIDER} did not install: {(done.stderr or done.stdout).strip()[-300:]}"
    stamp.write_text(AIDER)
    return None


def aider_map(root: Path, files: list[str], repeat: int = 1) -> dict[str, Any]:
    """The fastest of ``repeat`` cold repo maps (a new process each)."""
    python = AIDER_VENV / "bin" / "python"
    runs = []
    for _ in range(repeat):
        done = run([str(python), str(AIDER_SCRIPT), str(root), *files], timeout=1800)
        if done.returncode != 0:
            return {"error": (done.stderr or done.stdout).strip()[-300:]}
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    best: dict[str, Any] = min(runs, key=lambda r: r["seconds"])
    return best

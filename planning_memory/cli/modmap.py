"""Generate the module map (docs/modules.md) from the first line of each module's docstring.

Run ``python -m planning_memory.cli.modmap > docs/modules.md``; a test checks the file is
current. The sources are read with ``ast``, nothing of the package is imported.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent
ROOT = PACKAGE.parent

# The layers, top to bottom: (folder or top-level module, what it is); docs/design.md
# describes each and the seams between them.
LAYERS: tuple[tuple[str, str], ...] = (
    ("__main__.py", "entry point: `python -m planning_memory`, the `pmem` command line"),
    ("cli", "entry point: the `pmem` command line (click)"),
    ("agents", "entry point: Claude Code hooks, the MCP server, the installers"),
    ("watch", "entry point: the watch daemon (watchdog)"),
    ("memory.py", "the facade: `Memory(root)`, the one entry point"),
    ("manager.py", "the seeds' API names, thin aliases `Memory` inherits"),
    ("longterm", "part: long-term records and the rules that keep them"),
    ("sessions", "part: short-term sessions and their summaries"),
    ("entity", "part: the code map and its incremental scanner (tree-sitter)"),
    ("search", "part: the derived search index (SQLite FTS5) and its ranking"),
    ("context", "part: the context packer"),
    ("views", "part: the Markdown views, both ways (markdown-it-py)"),
    ("transfer", "part: export and import"),
    ("gitops", "part: git integration and the record-level merge"),
    ("store.py", "the only writer of files under `.planning/`"),
    ("paths.py", "the store's path checks: inside the tree, regular files only"),
    ("atomic.py", "the store's whole-file replace, and the umask"),
    ("lockfile.py", "the store's lock file: its holder, and taking over a dead one's"),
    ("readonly.py", "the derived databases of a tree this process may only read, in memory"),
    ("validate.py", "whole-tree validation (reads only)"),
    ("core", "pure building blocks: values in, values out, no I/O"),
    ("errors.py", "the exception tree"),
    ("__init__.py", "the package: `Memory`, the errors and the version"),
)


@dataclass(frozen=True)
class Module:
    """One source file: its path from the repository root and its docstring's first line."""

    path: str
    summary: str


def summary(path: Path) -> str:
    """The first line of the module docstring of ``path`` ("" when it has none)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    doc = ast.get_docstring(tree) or ""
    return doc.strip().splitlines()[0].strip() if doc.strip() else ""


def _module(path: Path) -> Module:
    return Module(path.relative_to(ROOT).as_posix(), summary(path))


def _sort_key(path: Path) -> tuple[tuple[int, str], ...]:
    """``__init__.py`` first in its folder, then the modules, then the sub-folders."""
    parts = path.relative_to(PACKAGE).parts
    key = [(1, part) for part in parts[:-1]]
    key.append((0, "") if parts[-1] == "__init__.py" else (0, parts[-1]))
    return tuple(key)


def sections() -> list[tuple[str, str, list[Module]]]:
    """(heading, role, modules) per layer, top to bottom; folders not in ``LAYERS`` follow."""
    known = dict(LAYERS)
    found: dict[str, list[Path]] = {}
    for path in PACKAGE.rglob("*.py"):
        if "__pycache__" in path.parts:
            continue
        first = path.relative_to(PACKAGE).parts[0]
        found.setdefault(first, []).append(path)
    order = [name for name, _ in LAYERS if name in found]
    order += sorted(name for name in found if name not in known)
    result = []
    for name in order:
        heading = name if name.endswith(".py") else f"{name}/"
        paths = sorted(found[name], key=_sort_key)
        result.append((heading, known.get(name, ""), [_module(p) for p in paths]))
    return result


def modules() -> list[Module]:
    """Every module of the package, in the map's order."""
    return [module for _, _, found in sections() for module in found]


def module_map() -> str:
    """The whole map as Markdown."""
    lines = [
        "# Module map",
        "",
        "Generated from the first line of each module's docstring by",
        "`python -m planning_memory.cli.modmap`; do not edit by hand. The parts are listed top",
        "to bottom in layer order; [design.md](design.md) describes the layers, the seams",
        "between them and how data flows.",
    ]
    for heading, role, found in sections():
        lines += ["", f"## {heading}" + (f" — {role}" if role else ""), ""]
        lines += [f"- `{m.path}` — {m.summary or '(no docstring)'}" for m in found]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(module_map())

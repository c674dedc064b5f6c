"""Python import resolution: relative imports, and absolute ones against the source roots.

Relative imports (``from ..core import db``) start at the importing file's package; absolute
ones are tried against the source roots (the repository root, ``src/``, and the parent of
every top-level package, i.e. of each outermost folder holding ``__init__.py``). ``a.b.c``
tries ``a/b/c.py``, ``a/b/c/__init__.py``, then ``a/b`` (``c`` may be a name in it).
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from planning_memory.entity.resolve.common import Context


def resolve(module: str, importer: str, ctx: Context) -> tuple[str | None, str | None]:
    if module.startswith("."):
        dots = len(module) - len(module.lstrip("."))
        base = posixpath.dirname(importer)
        for _ in range(dots - 1):
            base = posixpath.dirname(base)
        found = _python_module(base, module[dots:], ctx)
        return found, None
    for root in ctx.python_roots:
        found = _python_module(root, module, ctx, relative=False)
        if found:
            return found, None
    return None, module.split(".", 1)[0]


def _python_module(base: str, dotted: str, ctx: Context, *, relative: bool = True) -> str | None:
    parts = [p for p in dotted.split(".") if p]
    while True:
        stem = posixpath.join(base, *parts) if parts else base
        for candidate in (f"{stem}.py", f"{stem}/__init__.py", f"{stem}.pyi"):
            candidate = candidate.lstrip("/")
            if candidate in ctx.files:
                return candidate
        if not parts or (not relative and len(parts) == 1):
            return None
        parts.pop()

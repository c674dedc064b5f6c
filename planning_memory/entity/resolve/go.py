"""Go import resolution: module paths under the nearest go.mod -> package folders.

An import path under the module path of the nearest ``go.mod`` gives the package folder
(``.`` for the repository root); anything else is a package. ``import_path`` goes the other
way: a package folder's import path.
"""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from planning_memory.entity.resolve.common import Context

_GO_MODULE = re.compile(rb"^\s*module\s+(\S+)", re.MULTILINE)


def resolve(module: str, importer: str, ctx: Context) -> tuple[str | None, str | None]:
    found = _gomod_for(posixpath.dirname(importer), ctx)
    if found is not None:
        name, folder = found
        if module == name or module.startswith(name + "/"):
            target = posixpath.join(folder, module[len(name) :].strip("/")).strip("/")
            if target in ctx.dirs:
                return target or ".", None  # the repository root folder is "."
    return None, module


def import_path(folder: str, ctx: Context) -> str | None:
    """The import path of the package in ``folder`` (``.`` for the repository root) under
    the nearest ``go.mod``, or None outside any module."""
    folder = "" if folder == "." else folder
    found = _gomod_for(folder, ctx)
    if found is None:
        return None
    name, root = found
    rest = folder[len(root) :].strip("/") if folder.startswith(root) else folder
    return f"{name}/{rest}" if rest else name


def _gomod_for(folder: str, ctx: Context) -> tuple[str, str] | None:
    if folder in ctx.gomods:
        return ctx.gomods[folder]
    raw = ctx.read(posixpath.join(folder, "go.mod").lstrip("/"))
    match = _GO_MODULE.search(raw) if raw else None
    if match:
        found: tuple[str, str] | None = (match.group(1).decode("utf-8", "replace"), folder)
    else:
        parent = posixpath.dirname(folder)
        found = _gomod_for(parent, ctx) if folder and parent != folder else None
    ctx.gomods[folder] = found
    return found

"""Import resolution: a module as written in an import -> a repository path or a package name.

One module per language family, behind the ``RESOLVERS`` registry: ``python`` (relative
imports, source roots), ``javascript`` (relative paths, tsconfig/jsconfig aliases), ``go``
(``go.mod`` module paths -> package folders), ``java`` (class files, wildcard package
folders), ``rust`` (the crate's module tree, Cargo dependencies); ``common`` holds the
``Context`` they share. Anything not in the repository is external: the package name
(``react``, ``@scope/pkg``, ``requests``, ``fmt``). No import resolves to the importing file
itself (``use self::Item``): that is ``(None, None)``. Only the small config files
(tsconfig, go.mod, Cargo.toml) are read, through the context's ``read``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable

from planning_memory.entity.languages import FAMILY
from planning_memory.entity.resolve import go, java, javascript, python, rust
from planning_memory.entity.resolve.common import Context, Reader, Resolved, build_context

__all__ = ["RESOLVERS", "Context", "Reader", "Resolved", "build_context", "resolve"]

RESOLVERS: dict[str, Callable[[str, str, Context], Resolved]] = {
    "python": python.resolve,
    "js": javascript.resolve,
    "go": go.resolve,
    "java": java.resolve,
    "rust": rust.resolve,
}


def resolve(module: str, importer: str, language: str, ctx: Context) -> Resolved:
    """``(repository path, None)`` when ``module`` is in the repository (a folder for Go
    packages and Java wildcard imports), else ``(None, package name)``."""
    family = FAMILY.get(language, "")
    resolver = RESOLVERS.get(family)
    if resolver is None or not module:
        return None, module or None
    # the answer depends on the importer's folder only (its module path, for Rust)
    key = (module, importer if family == "rust" else posixpath.dirname(importer), family)
    found = ctx.memo.get(key)
    if found is None:
        found = ctx.memo[key] = resolver(module, importer, ctx)
    if found[0] == importer:  # a name of the file itself (``self::Item``): not a link
        return None, None
    return found

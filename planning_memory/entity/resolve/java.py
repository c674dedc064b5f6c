"""Java import resolution: class imports -> files, wildcard imports -> package folders.

``a.b.C`` gives a file ending in ``a/b/C.java``, ``a.b.*`` that package's folder; anything else
is a package (its first two names).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from planning_memory.entity.resolve.common import Context


def resolve(module: str, importer: str, ctx: Context) -> tuple[str | None, str | None]:
    parts = module.split(".")
    if parts[-1] == "*":
        suffix = "/".join(parts[:-1])
        if suffix not in ctx.java_dirs:
            ctx.java_dirs[suffix] = next(
                (f for f in sorted(ctx.dirs) if f == suffix or f.endswith("/" + suffix)), None
            )
        folder = ctx.java_dirs[suffix]
        return (folder, None) if folder is not None else (None, ".".join(parts[:2]))
    while len(parts) > 1:
        name = parts[-1] + ".java"
        suffix = "/".join(parts) + ".java"
        for candidate in ctx.java_by_name.get(name, []):
            if candidate == suffix or candidate.endswith("/" + suffix):
                return candidate, None
        parts.pop()
    return None, ".".join(module.split(".")[:2])

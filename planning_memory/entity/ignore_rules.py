"""Which repository paths the code map skips, asked one path at a time (for the daemon).

``.gitignore`` files, ``.git/info/exclude``, the config's exclude patterns and the folders
never scanned, in the scan's dialect (``core.ignore``)."""

from __future__ import annotations

import os
from collections.abc import Sequence

from planning_memory.core import Exclusion
from planning_memory.entity.walk import ALWAYS_EXCLUDED
from planning_memory.errors import PlanningMemoryError
from planning_memory.store import read_regular

# folders the scanner never scans, wherever they are (``.git`` and ``.planning`` are the
# watcher's own business)
NEVER_SCANNED = frozenset(p.rstrip("/") for p in ALWAYS_EXCLUDED) - {".git", ".planning"}


class IgnoreRules:
    """``.gitignore`` files (root and nested, read lazily), ``.git/info/exclude``, the
    config's exclude patterns (gitignore syntax, matched by ``core.ignore`` as the scanner and
    the search index match them) and the folders that are never scanned."""

    def __init__(self, root: str, exclude: Sequence[str] = ()) -> None:
        self.root = root
        self.exclude = list(exclude)
        self._specs: dict[str, Exclusion | None] = {}

    def refresh(self) -> None:
        """Forget what was read: a ``.gitignore`` changed."""
        self._specs.clear()

    def ignored(self, rel: str) -> bool:
        parts = rel.split("/")
        if not NEVER_SCANNED.isdisjoint(parts[:-1]):
            return True
        for depth in range(len(parts)):
            folder = "/".join(parts[:depth])
            spec = self._spec(folder)
            if spec is not None and spec.excluded("/".join(parts[depth:])):
                return True
        return False

    def _spec(self, folder: str) -> Exclusion | None:
        if folder in self._specs:
            return self._specs[folder]
        lines = _read_lines(os.path.join(self.root, folder, ".gitignore"))
        if folder == "":
            lines += _read_lines(os.path.join(self.root, ".git", "info", "exclude"))
            lines += self.exclude
        spec = Exclusion(lines) if lines else None
        self._specs[folder] = spec
        return spec


IGNORE_FILE_LIMIT = 1_000_000


def _read_lines(path: str) -> list[str]:
    """The lines of an ignore file; none when it is missing, unreadable, too large or not a
    regular file (a FIFO is never opened for a blocking read)."""
    try:
        data = read_regular(path, IGNORE_FILE_LIMIT)
    except PlanningMemoryError:
        return []
    return [] if data is None else data.decode("utf-8", "replace").splitlines()

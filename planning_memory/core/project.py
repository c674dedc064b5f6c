"""The project id (seed 003): ``<name>-<hash8>``, pure apart from resolving symlinks.

The folder is the one whose memory serves a place (``layout.project_root``: the nearest folder
holding ``.planning/``, else the git work tree root, a linked worktree sharing its main
worktree's memory), else the place itself. ``name`` is that folder's name and ``hash8`` the
first 8 hex digits of the SHA-256 of what the project is (``id_of``): what git says it is
(``gitops.project_id``: its first commit, so that a move or a fresh clone keeps the id), else
the folder's real path (``legacy_id``, the id every project had before: records saved under
it stay the project's).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from planning_memory.core.layout import project_root

NAME_CHARS = 100  # the folder name is cut to this many characters
PROJECT_ID_RE = re.compile(r"^[^/\\\x00-\x1f]{1,100}-[0-9a-f]{8}$")  # the schema's pattern
_UNSAFE = re.compile(r"[/\\\x00-\x1f]")


def id_of(real: str, source: str) -> str:
    """``<name>-<hash8>``: the name of the folder at the real path ``real``, the hash of
    ``source`` (what the project is)."""
    name = _UNSAFE.sub("_", Path(real).name)[:NAME_CHARS] or "root"
    digest = hashlib.sha256(source.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return f"{name}-{digest}"


def legacy_id(folder: Path | str) -> str:
    """The id of ``folder`` by its real path alone (what every project had before)."""
    real = os.path.realpath(folder)
    return id_of(real, real)


def project_folder(start: Path | str) -> Path:
    """The project folder ``start`` belongs to: ``project_root(start)``, else ``start``."""
    return project_root(Path(start)) or Path(start)

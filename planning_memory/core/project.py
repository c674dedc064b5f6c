"""The project id (seed 003): ``<name>-<hash8>`` of the real path of the project's folder.

The folder is the one whose memory serves a place (``layout.project_root``: the nearest folder
holding ``.planning/``, else the git work tree root, a linked worktree sharing its main
worktree's memory), else the place itself. ``name`` is that folder's name and ``hash8`` the
first 8 hex digits of the SHA-256 of its real path (symlinks resolved), so the same checkout
has the same id from any subfolder, and two clones with the same name have different ids.
Personal-scope records carry the id of the project they were saved from.
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


def project_id(folder: Path | str) -> str:
    """``<name>-<hash8>`` of ``folder``'s real path (pure apart from resolving symlinks)."""
    real = os.path.realpath(folder)
    name = _UNSAFE.sub("_", Path(real).name)[:NAME_CHARS] or "root"
    digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return f"{name}-{digest}"


def project_folder(start: Path | str) -> Path:
    """The project folder ``start`` belongs to: ``project_root(start)``, else ``start``."""
    return project_root(Path(start)) or Path(start)

"""Where everything lives in a memory tree; paths only, no I/O beyond locating a root."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from planning_memory.core.ids import check_id

PLANNING_DIR = ".planning"
CONFIG_NAME = "memory-config.json"

# record type -> folder under long-term/
# the tree's own .gitignore: derived and personal data stay out of git
TREE_GITIGNORE = """\
# planning-memory: derived and personal data stay out of git
/memory/contextual/
/memory/short-term/
/.lock
*.pm-tmp
*.orig
"""

LONG_TERM_DIRS = {
    "pattern": "patterns",
    "mistake": "mistakes",
    "bugfix": "learnings",
    "decision": "learnings",
    "discovery": "learnings",
    "architecture": "learnings",
    "config": "learnings",
    "preference": "learnings",
    "learning": "learnings",
}


@dataclass(frozen=True)
class Layout:
    """The paths of one memory tree; ``planning`` is the ``.planning`` folder (or the personal
    store's folder, which has the same ``memory/`` layout).

    ``shared`` is the main worktree's ``.planning`` when this tree is a linked git worktree's
    own (a committed ``.planning/`` checked out there): short-term memory (the sessions) and
    the lock live there, so every worktree of a repository shares its sessions, while each
    keeps the records of its own checkout."""

    planning: Path
    shared: Path | None = None

    @classmethod
    def for_repo(cls, repo_root: Path) -> Layout:
        root = Path(repo_root)
        return cls(root / PLANNING_DIR, shared_tree(root))

    @classmethod
    def of(cls, root: Path | str) -> Layout:
        """The tree of ``root``: a repository, or a ``.planning`` folder (or a copy of one:
        a folder holding ``memory-config.json``)."""
        root = Path(root)
        if root.name == PLANNING_DIR:
            return cls(root, shared_tree(root.parent))
        if (root / CONFIG_NAME).is_file():
            return cls(root)
        return cls.for_repo(root)

    @classmethod
    def personal(cls, env: os._Environ[str] | dict[str, str] | None = None) -> Layout:
        env = os.environ if env is None else env
        state = env.get("XDG_STATE_HOME") or str(Path(env.get("HOME", "~")) / ".local" / "state")
        return cls(Path(state).expanduser() / "planning-memory" / "personal")

    @property
    def repo_root(self) -> Path:
        return self.planning.parent

    @property
    def config(self) -> Path:
        return self.planning / CONFIG_NAME

    @property
    def sessions_tree(self) -> Path:
        """The tree holding short-term memory and the lock: ``shared``, else ``planning``."""
        return self.shared or self.planning

    def tree_of(self, path: Path | str) -> Path:
        """The tree ``path`` belongs to: ``shared`` for a path under it, else ``planning``."""
        shared = self.shared
        if shared is not None and (Path(path) == shared or shared in Path(path).parents):
            return shared
        return self.planning

    @property
    def lock_file(self) -> Path:
        return self.sessions_tree / ".lock"

    @property
    def memory(self) -> Path:
        return self.planning / "memory"

    @property
    def short_term(self) -> Path:
        return self.sessions_tree / "memory" / "short-term"

    @property
    def long_term(self) -> Path:
        return self.memory / "long-term"

    @property
    def entity(self) -> Path:
        return self.memory / "entity"

    @property
    def contextual(self) -> Path:
        return self.memory / "contextual"

    @property
    def preferences(self) -> Path:
        return self.long_term / "preferences.json"

    @property
    def patterns_md(self) -> Path:
        return self.planning / "patterns.md"

    @property
    def mistakes_md(self) -> Path:
        return self.planning / "mistakes.md"

    @property
    def claude_md(self) -> Path:
        return self.planning / "CLAUDE.md"

    def own_folders(self) -> list[Path]:
        """The folders whose entries are the tree's own files (the lock, the config, the
        views, the caches, the databases) and its memory folders, top first: what
        ``Store.audit`` looks over for symlinks that lead out. Record, session and shard files
        are checked one by one as they are opened."""
        contextual = self.contextual
        return [
            *([self.shared] if self.shared else []),
            self.planning,
            self.memory,
            self.long_term,
            self.short_term,
            self.entity,
            contextual,
            contextual / "views",
            contextual / "views" / "cache",
        ]

    def record_dir(self, record_type: str) -> Path:
        return self.long_term / LONG_TERM_DIRS[record_type]

    def record_dirs(self) -> list[Path]:
        return sorted({self.long_term / d for d in LONG_TERM_DIRS.values()})

    def record_path(self, record_type: str, record_id: str) -> Path:
        return self.record_dir(record_type) / f"{check_id(record_id)}.json"

    def session_path(self, session_id: str) -> Path:
        return self.short_term / f"session-{check_id(session_id)}.json"

    def relative(self, path: Path) -> str:
        """``path`` relative to the repository root when inside it, for messages."""
        try:
            return str(Path(path).relative_to(self.repo_root))
        except ValueError:
            return str(path)


def find_repo_root(start: Path | None = None) -> Path | None:
    """The nearest folder at or above ``start`` holding ``.planning/``, else the nearest git
    work tree root, else None."""
    here = Path(start or Path.cwd()).resolve()
    git_root = None
    for folder in (here, *here.parents):
        if (folder / PLANNING_DIR).is_dir():
            return folder
        if git_root is None and (folder / ".git").exists():
            git_root = folder
    return git_root


def main_worktree(root: Path) -> Path | None:
    """The main working tree of a linked git worktree (``.git`` is a file), else None.

    Read from the files git writes (``gitdir:`` and ``commondir``), without running git."""
    dot_git = root / ".git"
    if not dot_git.is_file():
        return None
    try:
        line = dot_git.read_text("utf-8").strip()
        if not line.startswith("gitdir:"):
            return None
        gitdir = (root / line.split(":", 1)[1].strip()).resolve()
        common_file = gitdir / "commondir"
        common = (gitdir / common_file.read_text("utf-8").strip()).resolve()
    except (OSError, ValueError):
        return None
    return common.parent if common.name == ".git" else None


def shared_tree(root: Path) -> Path | None:
    """The main worktree's ``.planning`` when ``root`` is a linked worktree and the main one
    has a memory tree (the linked one holding its own checkout of it), else None."""
    main = main_worktree(root)
    if main is None or not (main / PLANNING_DIR).is_dir():
        return None
    return None if os.path.realpath(main) == os.path.realpath(root) else main / PLANNING_DIR


def project_root(start: Path | None = None) -> Path | None:
    """The repository whose memory serves ``start`` (default: the working directory): the
    nearest folder with ``.planning/``, else the git work tree; a linked worktree without its
    own ``.planning/`` uses its main worktree's, so every worktree shares one memory."""
    root = find_repo_root(start)
    if root is None or (root / PLANNING_DIR).is_dir():
        return root
    main = main_worktree(root)
    return main if main is not None and (main / PLANNING_DIR).is_dir() else root

"""What git says a project is, for its id (seed 003's ``<name>-<hash8>``, ``core.id_of``).

In a git repository the project is its first commit (the oldest root of ``HEAD``) and the
folder's path inside the work tree, so a moved folder, a clone and a linked worktree keep the
id; in a shallow clone the ``origin`` remote's URL; in a repository with no commit yet, or
outside git, the folder's real path (``core.legacy_id``: records saved under it stay the
project's, ``project_ids``).

The first commit is read once, with git, and kept in the git directory (``ROOT_CACHE``), so a
command reads one small file instead of running git. Git's files are read without following a
link and never block.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import subprocess
from pathlib import Path

from planning_memory.core import id_of, legacy_id

ROOT_CACHE = "planning-memory.root"  # in the git directory: the first commit, once found
GIT_TIMEOUT_S = 10.0  # finding the first commit walks the history once
TOO_LONG = "-"  # kept instead of a commit when git took longer: the origin URL or the path
# set by git for its hooks: they would point ``git`` at another repository than the one read
_GIT_PLACES = frozenset(("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE"))
_GIT_PLACES |= {"GIT_NAMESPACE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES"}
_SHA = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")
_SCP_URL = re.compile(r"^[^/@:]+@([^:/]+):(.+)$")  # git@host:owner/repo
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://(?:[^@/]*@)?([^/:]+)(?::\d+)?/(.+)$", re.IGNORECASE)


def project_id(folder: Path | str) -> str:
    """``<name>-<hash8>`` of the project in ``folder`` (see the module docstring)."""
    real = os.path.realpath(folder)
    return id_of(real, identity(real))


def project_ids(folder: Path | str) -> tuple[str, ...]:
    """The ids records of the project in ``folder`` may carry: its id, then its path's."""
    return tuple(dict.fromkeys((project_id(folder), legacy_id(folder))))


def identity(real: str) -> str:
    """What the project at the real path ``real`` is: ``git <first commit> <path inside>``,
    ``remote <normalized origin URL> <path inside>`` (a shallow clone), or ``real``."""
    found = _work_tree(real)
    if found is None:
        return real
    top, git_dir, common = found
    inside = Path(real).relative_to(top).as_posix() if real != top else ""
    root = _first_commit(git_dir, common)
    if root:
        return f"git {root} {inside}"
    url = _origin_url(common)
    return f"remote {url} {inside}" if url else real


def _work_tree(real: str) -> tuple[str, Path, Path] | None:
    """The git work tree holding ``real``: its top, its git directory and the common one
    (the main repository's, for a linked worktree); None outside git."""
    here = Path(real)
    for top in (here, *here.parents):
        dot = top / ".git"
        if dot.is_dir():
            return str(top), dot, dot
        if dot.is_file():
            line = _small(dot).strip()
            if not line.startswith("gitdir:"):
                return None
            git_dir = (top / line.split(":", 1)[1].strip()).resolve()
            common = _small(git_dir / "commondir").strip()
            return str(top), git_dir, (git_dir / common).resolve() if common else git_dir
        if os.path.lexists(dot):
            return None
    return None


def _first_commit(git_dir: Path, common: Path) -> str | None:
    """The oldest root commit of ``HEAD``: kept in ``ROOT_CACHE``, else found with git and
    kept; None for a shallow clone, a repository with no commit yet, or when git fails. A
    history too long to walk within ``GIT_TIMEOUT_S`` is never walked again (``TOO_LONG``)."""
    kept = _small(common / ROOT_CACHE).strip()
    if _SHA.match(kept) or kept == TOO_LONG:
        return kept if kept != TOO_LONG else None
    if os.path.lexists(common / "shallow") or not _born(git_dir, common):
        return None
    env = {k: v for k, v in os.environ.items() if k not in _GIT_PLACES} | {"LC_ALL": "C"}
    try:
        done = subprocess.run(
            ["git", f"--git-dir={git_dir}", "log", "--max-parents=0", "--format=%ct %H", "HEAD"],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        _keep(common / ROOT_CACHE, TOO_LONG + "\n")
        return None
    except (OSError, subprocess.SubprocessError):
        return None
    roots = sorted(tuple(line.split()) for line in done.stdout.splitlines() if " " in line)
    root = roots[0][1] if done.returncode == 0 and roots else ""
    if not _SHA.match(root):
        return None
    _keep(common / ROOT_CACHE, root + "\n")
    return root


def _born(git_dir: Path, common: Path) -> bool:
    """Whether ``HEAD`` names a commit (a branch with no commit yet does not)."""
    head = _small(git_dir / "HEAD").strip()
    if not head.startswith("ref:"):
        return bool(_SHA.match(head))
    ref = head[4:].strip()
    if os.path.lexists(common / ref) or os.path.lexists(git_dir / ref):
        return True
    return any(line.endswith(" " + ref) for line in _small(common / "packed-refs").splitlines())


def _origin_url(common: Path) -> str:
    """The ``origin`` remote's URL from git's config, without user, scheme or ``.git``
    (``github.com/owner/repo``); "" when there is none."""
    section, url = "", ""
    for line in _small(common / "config").splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line
        elif section == '[remote "origin"]' and line.split("=", 1)[0].strip() == "url":
            url = line.split("=", 1)[1].strip()
    url = url.rstrip("/").removesuffix(".git")
    match = _SCP_URL.match(url) or _URL.match(url)
    return f"{match.group(1).lower()}/{match.group(2)}" if match else url


def _small(path: Path, limit: int = 1 << 20) -> str:
    """A small regular file's text, "" for anything else (missing, a FIFO, a link, a device);
    never blocks."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        return os.read(fd, limit).decode("utf-8", "replace")
    except OSError:
        return ""
    finally:
        os.close(fd)


def _keep(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole (a temporary file renamed over it); a git directory
    that refuses it (read-only) costs one git run per command, nothing else."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text, "utf-8")
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink()

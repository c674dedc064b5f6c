"""File discovery for the scanner: which files exist, and which are already known to git.

Inside a git work tree, ``git ls-files -s`` lists tracked files with their blob ids and
``git status --porcelain`` names the ones that differ from the index plus untracked files that
are not ignored; git applies ``.gitignore`` itself and never descends into an ignored folder.
Outside git, an ``os.scandir`` walk reads each folder's ``.gitignore`` and prunes ignored
folders before descending. In both, the config's exclude patterns prune folders and drop files,
include patterns (when any) keep only the files they match, and symbolic links are never
followed (a link is skipped, so nothing outside the repository is read and link loops cannot
occur). Every pattern is gitignore syntax, matched by ``core.ignore`` (the same dialect as the
watch daemon and the search index).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from planning_memory.core import Exclusion, Patterns, ignored_by_layers
from planning_memory.errors import ConfigError, PlanningMemoryError, printable
from planning_memory.store import read_regular, valid_name

ALWAYS_EXCLUDED = (
    ".git/",
    ".hg/",
    ".svn/",
    ".planning/",
    "node_modules/",
    "__pycache__/",
    ".venv/",
    ".tox/",
    ".mypy_cache/",
    ".pytest_cache/",
    ".ruff_cache/",
)
_OWN = (".planning/", ".git/")  # never listed, not counted as ignored
_GIT_TIMEOUT = 120
_PATHSPEC_LIMIT = 200  # more explicit paths than this: list everything and filter
_IGNORE_FILE_LIMIT = 1_000_000


@dataclass(frozen=True)
class Listed:
    """A file to consider: repository-relative POSIX path and, when git vouches that the work
    tree matches the index, its blob id (so it need not be read to know it is unchanged)."""

    path: str
    git_hash: str | None = None


@dataclass
class Listing:
    files: list[Listed]
    ignored: int = 0
    unnamed: list[str] = field(default_factory=list)  # names that are not valid UTF-8: left out
    git: bool = False
    git_dir: str | None = None  # the repository's git dir, when listed by git
    git_stamp: GitStamp | None = None  # git's state just before the listing


GitStamp = tuple[bytes, bytes, bool]  # HEAD, the ref it names, whether git holds index.lock


@dataclass
class Rules:
    """Include/exclude patterns from the config, plus the folders that are never scanned."""

    include: Patterns | None = None
    exclude: Exclusion = field(default_factory=Exclusion)

    def __post_init__(self) -> None:
        self._excluded = self.exclude.excluded
        self._included = self.include.match if self.include is not None else None

    @classmethod
    def from_patterns(cls, include: Iterable[str], exclude: Iterable[str]) -> Rules:
        what = "include/exclude pattern"
        inc = Patterns(include, what=what)
        exc = Patterns([*ALWAYS_EXCLUDED, *exclude], what=what)
        return cls(inc if inc else None, Exclusion(exc))

    def dir_excluded(self, directory: str) -> bool:
        """True when ``directory`` (no trailing slash) or a parent of it is excluded."""
        return self.exclude.dir_excluded(directory)

    def keep(self, path: str) -> bool:
        if self._excluded(path):
            return False
        return self._included is None or self._included(path)


# -- entry point ---------------------------------------------------------------------------
def discover(
    root: Path, rules: Rules, *, paths: list[str] | None = None, use_git: bool = True
) -> Listing:
    """The files under ``root`` to consider (all of them, or only under ``paths``)."""
    found = _git_prefix(root) if use_git else None
    if found is not None:
        prefix, git_dir = found
        stamp = git_stamp(git_dir)
        listing = _git_listing(root, prefix, paths)
        listing.git_dir, listing.git_stamp = git_dir, stamp
    else:
        listing = _walk_listing(root, paths, rules)
    files = listing.files
    if not all(valid_name(item.path) for item in files):
        unnamed = [item.path for item in files if not valid_name(item.path)]
        listing.unnamed = [p for p in unnamed if rules.keep(printable(p))]  # ignored: mute
        listing.ignored += len(unnamed) - len(listing.unnamed)
        files = [item for item in files if valid_name(item.path)]
    kept = [item for item in files if rules.keep(item.path)]
    listing.ignored += len(files) - len(kept)
    listing.files = kept
    return listing


# -- git -----------------------------------------------------------------------------------
def _git(root: Path, *args: str) -> bytes:
    done = subprocess.run(
        ["git", "--no-optional-locks", "-c", "core.quotepath=off", *args],
        cwd=root,
        capture_output=True,
        timeout=_GIT_TIMEOUT,
        check=False,
        env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"},
    )
    if done.returncode != 0:
        raise _GitFailed(done.stderr.decode("utf-8", "replace").strip())
    return done.stdout


class _GitFailed(Exception):
    pass


def _git_prefix(root: Path) -> tuple[str, str] | None:
    """``root``'s path inside its git work tree ("" at the top) and the git dir, or None if
    not in git."""
    try:
        out = _git(
            root, "rev-parse", "--is-inside-work-tree", "--show-prefix", "--absolute-git-dir"
        )
    except (_GitFailed, OSError, subprocess.SubprocessError):
        return None
    lines = out.decode("utf-8", "surrogateescape").splitlines()
    if len(lines) != 3 or lines[0] != "true":
        return None
    return lines[1], lines[2]


def git_stamp(git_dir: str) -> GitStamp:
    """What a checkout, reset, pull or rebase changes before or while it rewrites the work
    tree: ``HEAD``, the ref it names, and git's index lock (held while files are written).
    A scan whose stamp changed between its listing and its writes read a tree in motion."""
    head = _read_small(os.path.join(git_dir, "HEAD"))
    ref = b""
    if head.startswith(b"ref: "):
        ref = _read_small(os.path.join(git_dir, os.fsdecode(head[5:].strip())))
    return head, ref, os.path.exists(os.path.join(git_dir, "index.lock"))


def _read_small(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(4096)
    except OSError:
        return b""


def _pathspecs(paths: list[str] | None) -> list[str]:
    if paths is None or len(paths) > _PATHSPEC_LIMIT:
        return ["--", "."]
    return ["--", *(f":(literal){p}" for p in paths)] if paths else ["--", ":(literal)."]


def _git_listing(root: Path, prefix: str, paths: list[str] | None) -> Listing:
    specs = _pathspecs(paths)
    tracked: dict[str, str | None] = {}
    for mode, blob, stage, path in _ls_files(_git(root, "ls-files", "-s", "-z", *specs)):
        if mode.startswith("120") or mode.startswith("160"):
            continue  # symbolic link or submodule: never followed
        tracked[path] = None if stage != "0" or path in tracked else blob
    status = _git(
        root,
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=all",
        "--no-renames",
        "--ignore-submodules=all",
        *specs,
    )
    for code, path in _status(status, prefix):
        if code == "??":
            if not path.endswith("/") and not os.path.islink(root / path):
                tracked[path] = None
        elif "D" in code and not os.path.lexists(root / path):
            tracked.pop(path, None)
        elif path in tracked:
            tracked[path] = None
    files = [
        Listed(p, h) for p, h in tracked.items() if _within(p, paths) and not p.startswith(_OWN)
    ]
    files.sort(key=lambda item: item.path)
    return Listing(files, git=True)


def _ls_files(out: bytes) -> Iterator[tuple[str, str, str, str]]:
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, raw = record.partition(b"\t")
        mode, blob, stage = meta.decode("ascii").split(" ")
        yield mode, blob, stage, raw.decode("utf-8", "surrogateescape")


def _status(out: bytes, prefix: str) -> Iterator[tuple[str, str]]:
    for record in out.split(b"\0"):
        if len(record) < 4:
            continue
        code = record[:2].decode("ascii", "replace")
        path = record[3:].decode("utf-8", "surrogateescape")
        if prefix:
            if not path.startswith(prefix):
                continue
            path = path[len(prefix) :]
        yield code, path


def _within(path: str, paths: list[str] | None) -> bool:
    if paths is None:
        return True
    return any(path == p or path.startswith(p.rstrip("/") + "/") for p in paths)


# -- plain folders -------------------------------------------------------------------------
_Specs = list[tuple[str, Patterns]]


def _walk_listing(root: Path, paths: list[str] | None, rules: Rules) -> Listing:
    listing = Listing([])
    if paths is None:
        _walk(root, "", _read_ignore(root, "", []), listing, rules)
    else:
        for path in sorted(set(paths)):
            _walk_one(root, path.strip("/"), listing, rules)
    listing.files.sort(key=lambda item: item.path)
    return listing


def _walk_one(root: Path, path: str, listing: Listing, rules: Rules) -> None:
    specs: _Specs = []
    parts = path.split("/")
    for depth in range(len(parts)):
        folder = "/".join(parts[:depth])
        if folder and _ignored(folder + "/", specs):
            listing.ignored += 1
            return
        specs = _read_ignore(root, folder + "/" if folder else "", specs)
    full = root / path
    if full.is_symlink():
        return
    if full.is_dir():
        if _ignored(path + "/", specs):
            listing.ignored += 1
            return
        _walk(root, path + "/", _read_ignore(root, path + "/", specs), listing, rules)
    elif full.is_file():
        if _ignored(path, specs):
            listing.ignored += 1
        else:
            listing.files.append(Listed(path))


def _walk(root: Path, folder: str, specs: _Specs, listing: Listing, rules: Rules) -> None:
    """Walk ``folder`` (relative, "" or ending in "/") iteratively; ignored folders pruned."""
    stack = [(folder, specs)]
    while stack:
        current, current_specs = stack.pop()
        try:
            entries = sorted(os.scandir(root / current if current else root), key=_name)
        except OSError:
            continue
        for entry in entries:
            rel = current + entry.name
            if entry.is_symlink() or (not current and entry.name in (".planning", ".git")):
                continue
            if entry.is_dir(follow_symlinks=False):
                if _ignored(rel + "/", current_specs) or rules.dir_excluded(rel):
                    listing.ignored += 1
                    continue
                stack.append((rel + "/", _read_ignore(root, rel + "/", current_specs)))
            elif entry.is_file(follow_symlinks=False):
                if _ignored(rel, current_specs):
                    listing.ignored += 1
                else:
                    listing.files.append(Listed(rel))


def _name(entry: os.DirEntry[str]) -> str:
    return entry.name


def _read_ignore(root: Path, folder: str, specs: _Specs) -> _Specs:
    try:  # never a blocking read: a FIFO named .gitignore is refused
        data = read_regular(root / folder / ".gitignore", _IGNORE_FILE_LIMIT)
    except PlanningMemoryError:
        return specs
    if data is None:
        return specs
    lines = data.decode("utf-8", "replace").splitlines()
    try:
        return [*specs, (folder, Patterns(lines))]
    except ConfigError:
        return specs


def _ignored(path: str, specs: _Specs) -> bool:
    """Git's rule: the last matching pattern, deepest ``.gitignore`` last, decides."""
    return ignored_by_layers(path, specs)

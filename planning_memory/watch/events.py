"""Watching a repository for the daemon: which changes count, and when a batch is ready.

The only module that imports watchdog, through its public API only. It owns the observer
(with an explicit event filter: file created / modified / deleted / moved / closed-after-write,
folder created / moved / deleted and events lost; never the default mask, whose directory opens
can overflow the kernel queue on a large tree), the response to the kernel's limits (a queue
overflow asks for a full reconcile; a new folder left unwatched, which the kernel's
``/proc/self/fdinfo`` list of watches shows, switches to polling), the quick
rejection of paths that never need work (editor temp files, ``.git`` internals except ``HEAD``,
derived files, the daemon's own writes) and the per-path dirty set with its quiet window and
maximum batch window. What to do with a batch is ``daemon``'s business.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import logging
import os
import threading
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    EventsLostEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver

log = logging.getLogger("planning_memory.watch.events")

QUIET_S = 0.10  # a batch is ready this long after its last event ...
MAX_BATCH_S = 2.0  # ... or this long after its first, whichever comes first
POLL_INTERVAL_S = 2.0  # the polling fallback's period

EVENT_FILTER: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    FileClosedEvent,
    DirCreatedEvent,  # checked to be watched (``Watcher.check``)
    DirMovedEvent,
    DirDeletedEvent,
    EventsLostEvent,  # the kernel's queue overflowed (IN_Q_OVERFLOW)
]

# vim (`4913`, swap files, `file~`), emacs (`.#file`), JetBrains safe-write, GNOME, Kate, ours
TEMP_PATTERNS = (
    "*~",
    "4913",
    "*.swp",
    "*.swx",
    ".#*",
    "*___jb_*___",
    ".goutputstream-*",
    "*.kate-swp",
    "*.pm-tmp",
)
GIT_HEAD = ".git/HEAD"
# derived or runtime files under the memory tree that never need a reaction
PLANNING_SKIP = (".planning/memory/contextual/", ".planning/.lock")


def is_temp_name(name: str) -> bool:
    """True for an editor's or our own temporary file name."""
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in TEMP_PATTERNS)


def quick_reject(rel: str) -> bool:
    """True for a repository-relative path that never needs work, decided without I/O."""
    if rel == GIT_HEAD:
        return False
    if rel == ".git" or rel.startswith(".git/") or rel.startswith(PLANNING_SKIP):
        return True
    return is_temp_name(rel.rpartition("/")[2])


# -- the daemon's own writes -------------------------------------------------------------------
Stamp = tuple[int, int, int] | None  # (inode, mtime_ns, size), None for "deleted by us"


def _stamp(path: str) -> Stamp:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


class OwnWrites:
    """What the daemon last wrote to each file, so the events its writes cause are ignored.

    A path is ours while its (inode, mtime, size) is what we saw right after writing it (an
    atomic write makes a new inode each time); any later write by someone else changes it.
    """

    def __init__(self) -> None:
        self._stamps: dict[str, Stamp] = {}
        self._lock = threading.Lock()

    def record(self, path: str | Path) -> None:
        key = os.fspath(path)
        stamp = _stamp(key)
        with self._lock:
            self._stamps[key] = stamp

    def is_own(self, path: str) -> bool:
        """True while ``path`` is as we left it (a dict look-up for any other path)."""
        with self._lock:
            if path not in self._stamps:
                return False
            known = self._stamps[path]
        return _stamp(path) == known

    def __len__(self) -> int:
        return len(self._stamps)


class WriteLog:
    """The files this process's memory wrote or deleted: each one noted in an ``OwnWrites``
    (so its event is recognised) and listed until ``take_written``. Pass ``note`` to
    ``Memory(on_write=...)``."""

    def __init__(self, own: OwnWrites) -> None:
        self.own = own
        self.written: list[Path] = []  # since the last ``take_written``
        self._lock = threading.Lock()

    def note(self, path: Path) -> None:
        self.own.record(path)
        with self._lock:
            self.written.append(Path(path))

    def adopt(self, paths: Iterable[str]) -> None:
        """Count files another process wrote on our behalf (a reconcile child) as ours."""
        for path in paths:
            self.note(Path(path))

    def take_written(self) -> list[Path]:
        with self._lock:
            taken, self.written = self.written, []
        return taken


# -- the dirty set -----------------------------------------------------------------------------
@dataclass
class Batch:
    """What changed since the last batch: relative paths, deleted folders, full-reconcile
    reasons (overflow, startup, ...)."""

    paths: set[str] = field(default_factory=set)
    deleted_dirs: set[str] = field(default_factory=set)
    full: list[str] = field(default_factory=list)
    first_at: float = 0.0  # clock time of its first and last change
    last_at: float = 0.0

    def __bool__(self) -> bool:
        return bool(self.paths or self.deleted_dirs or self.full)


class Batcher:
    """A per-path dirty set, ready ``quiet`` seconds after its last change or ``max_wait``
    seconds after its first, whichever comes first. Thread-safe."""

    def __init__(
        self,
        quiet: float = QUIET_S,
        max_wait: float = MAX_BATCH_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.quiet = quiet
        self.max_wait = max_wait
        self.clock = clock
        self._batch = Batch()
        self._first = self._last = 0.0
        self._lock = threading.Lock()
        self.wake = threading.Event()

    def add(self, rel: str) -> None:
        with self._lock:
            self._touch()
            self._batch.paths.add(rel)

    def add_deleted_dir(self, rel: str) -> None:
        with self._lock:
            self._touch()
            self._batch.deleted_dirs.add(rel)

    def request_full(self, reason: str) -> None:
        with self._lock:
            self._touch()
            if reason not in self._batch.full:
                self._batch.full.append(reason)

    def _touch(self) -> None:
        now = self.clock()
        if not self._batch:
            self._first = now
        self._last = now
        self.wake.set()

    def __len__(self) -> int:
        with self._lock:
            return len(self._batch.paths) + len(self._batch.deleted_dirs)

    def age(self) -> float:
        """Seconds since the first change of the pending batch (0 when empty)."""
        with self._lock:
            return self.clock() - self._first if self._batch else 0.0

    def idle_for(self) -> float:
        """Seconds since the last change."""
        with self._lock:
            return self.clock() - self._last

    def due_in(self) -> float | None:
        """Seconds until the pending batch is ready (0: now); None when nothing is pending."""
        with self._lock:
            if not self._batch:
                return None
            now = self.clock()
            return max(0.0, min(self._last + self.quiet, self._first + self.max_wait) - now)

    def take(self) -> Batch:
        with self._lock:
            batch, self._batch = self._batch, Batch()
            batch.first_at, batch.last_at = self._first, self._last
            self.wake.clear()
            return batch


# -- the observer ------------------------------------------------------------------------------
class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: Watcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        self.watcher.note(event)


def watched_folders() -> set[int] | None:
    """The inode numbers of every folder this process's inotify instances watch, read from
    ``/proc/self/fdinfo`` (proc(5)); None where the kernel does not say (not Linux). Inodes
    only: the device there is the superblock's, which differs from ``st_dev`` on btrfs
    subvolumes and overlays."""
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return None
    found: set[int] = set()
    for name in names:
        try:
            if os.readlink(f"/proc/self/fd/{name}") != "anon_inode:inotify":
                continue
            with open(f"/proc/self/fdinfo/{name}", encoding="ascii", errors="replace") as fh:
                lines = fh.read().splitlines()
        except OSError:
            continue  # closed meanwhile
        for line in lines:
            if line.startswith("inotify wd:"):
                fields = dict(part.partition(":")[::2] for part in line.split()[1:])
                found.add(int(fields["ino"], 16))
    return found


class Watcher:
    """Runs a watchdog observer over ``root`` and feeds accepted paths to a ``Batcher``.

    ``git_head`` is the absolute path of the ``HEAD`` file when the git dir is not
    ``root/.git`` (a linked worktree); it is watched too and reported as ``.git/HEAD``.
    """

    def __init__(
        self,
        root: str,
        batcher: Batcher,
        own: OwnWrites,
        *,
        git_head: str | None = None,
        polling: bool = False,
    ) -> None:
        self.root = os.path.abspath(root)
        self.prefix = self.root + os.sep
        self.batcher = batcher
        self.own = own
        self.git_head = git_head
        self.polling = polling
        self.kind = ""
        self.warnings: list[str] = []
        self.limit_hit = False
        self._observer: BaseObserver | None = None
        self._new_folders: set[str] = set()  # created or moved in since the last ``check``
        self._lock = threading.Lock()

    # -- events --------------------------------------------------------------------------------
    def note(self, event: FileSystemEvent) -> None:
        if isinstance(event, EventsLostEvent):
            self.batcher.request_full("queue overflow")
            return
        if isinstance(event, DirCreatedEvent | DirMovedEvent):
            folder = os.fsdecode(event.dest_path or event.src_path)
            if not self.polling and self.relative(folder) is not None:
                with self._lock:
                    self._new_folders.add(folder)
            return
        if isinstance(event, DirDeletedEvent):
            rel = self.relative(os.fsdecode(event.src_path))
            if rel is not None and not quick_reject(rel):
                self.batcher.add_deleted_dir(rel)
            return
        self._note_path(os.fsdecode(event.src_path))
        if isinstance(event, FileMovedEvent) and event.dest_path:
            self._note_path(os.fsdecode(event.dest_path))

    def _note_path(self, path: str) -> None:
        rel = self.relative(path)
        if rel is None or quick_reject(rel):
            return
        if self.own.is_own(path):
            return
        self.batcher.add(rel)

    def relative(self, path: str) -> str | None:
        if path.startswith(self.prefix):
            return path[len(self.prefix) :].replace(os.sep, "/")
        if self.git_head is not None and path == self.git_head:
            return GIT_HEAD
        return None

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> str:
        """Start watching; fall back to polling if the kernel's inotify limits are hit."""
        # a benign race in watchdog (a new folder's watch added twice) warns with a repr of
        # every watch: thousands of lines in the log
        warnings.filterwarnings("ignore", "Callback with id .* already exists", RuntimeWarning)
        if not self.polling:
            try:
                self._start(native=True)
            except OSError as exc:
                if exc.errno not in (errno.ENOSPC, errno.EMFILE):
                    raise
                self._stop_observer()
                self.limit_hit = True
        if self.limit_hit:
            self.fall_back()
        elif self.polling:
            self._start(native=False)
        return self.kind

    def fall_back(self) -> None:
        """Replace the native observer by polling, with a clear warning (watch limit hit)."""
        self._stop_observer()
        self.warnings.append(
            "inotify watch limit reached: falling back to polling every "
            f"{POLL_INTERVAL_S:g} s (raise fs.inotify.max_user_watches to avoid this)"
        )
        log.warning(self.warnings[-1])
        self.polling = True
        self.limit_hit = False
        self._start(native=False)
        self.batcher.request_full("switched to polling")

    def _start(self, *, native: bool) -> None:
        observer: BaseObserver = Observer() if native else PollingObserver(timeout=POLL_INTERVAL_S)
        self._observer = observer
        handler = _Handler(self)
        observer.schedule(handler, self.root, recursive=True, event_filter=EVENT_FILTER)
        if self.git_head is not None:
            folder = os.path.dirname(self.git_head)
            observer.schedule(handler, folder, recursive=False, event_filter=EVENT_FILTER)
        observer.start()
        self.kind = "polling" if not native else type(observer).__name__.replace("Observer", "")
        self.kind = self.kind.lower() or "native"

    def check(self) -> None:
        """Called from the daemon's loop: switch to polling when a folder created since the
        last check has no inotify watch (watchdog logs a failed watch on a sub-folder and goes
        on; past ``fs.inotify.max_user_watches`` that folder would never be seen)."""
        with self._lock:
            folders, self._new_folders = self._new_folders, set()
        if not self.limit_hit and folders and not self.polling:
            self.limit_hit = bool(unwatched(folders))
        if self.limit_hit and not self.polling:
            self.fall_back()

    def stop(self) -> None:
        self._stop_observer()

    def _stop_observer(self) -> None:
        observer, self._observer = self._observer, None
        if observer is None:
            return
        with contextlib.suppress(Exception):
            observer.stop()
        if observer.is_alive():
            observer.join(timeout=5)

    def alive(self) -> bool:
        return self._observer is not None and self._observer.is_alive()


def unwatched(folders: Iterable[str]) -> list[str]:
    """The folders among ``folders`` that still exist, can be read, and that no inotify
    instance of this process watches (none where the kernel does not list its watches)."""
    watched = watched_folders()
    if watched is None:
        return []
    missing = []
    for folder in folders:
        try:
            st = os.lstat(folder)
        except OSError:
            continue  # gone again
        if st.st_ino in watched or not os.path.isdir(folder):
            continue
        if os.path.islink(folder) or not os.access(folder, os.R_OK | os.X_OK):
            continue  # never watched: a link is not followed, an unreadable folder not read
        missing.append(folder)
    return missing


def git_head_path(root: str) -> str | None:
    """The ``HEAD`` file of a linked worktree (``.git`` is a file naming the git dir), else
    None (``root/.git/HEAD`` is inside the watched tree already)."""
    dot_git = os.path.join(root, ".git")
    if not os.path.isfile(dot_git):
        return None
    with open(dot_git, encoding="utf-8", errors="replace") as fh:
        lines = fh.read().splitlines()
    for line in lines:
        if line.startswith("gitdir:"):
            gitdir = line.partition(":")[2].strip()
            gitdir = os.path.normpath(os.path.join(root, gitdir))
            return os.path.join(gitdir, "HEAD")
    return None


def under_any(folder: str, paths: Iterable[str]) -> bool:
    """True when one of ``paths`` is inside ``folder``."""
    prefix = folder + "/"
    return any(p.startswith(prefix) for p in paths)

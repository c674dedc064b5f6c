"""The only writer of files under a memory tree: atomic, locked, never rewriting equal bytes.

Writes go to a temp file in the same folder, are fsynced, and replace the target with
``os.replace``; the folder is fsynced after (``atomic``). Inside ``Store.batch()`` (bulk paths:
an import, ``Memory.bulk()``) the per-file fsyncs are skipped and one ``os.sync()`` at the end
of the batch makes every write durable at once: each file is still whole or absent (temp file
and rename), only durability against a power loss waits for the end of the batch. One lock
file per memory root serialises writers (``flock``: the kernel drops it when the holder dies).
The lock file names its holder (pid, start time, host): a lock kept by a dead holder's
leftover children is taken over, and a wait is bounded by ``lock_timeout`` (``lockfile``). An
update may carry the digest of what the caller read; if the file changed since (an editor,
``git pull``), ``ConflictError``.

Only regular files are read (a FIFO, a device or a socket is refused with one line, and never
opened in a way that blocks), and never more than a size limit. A reader that skips a broken
file warns once per file (``BrokenFileWarning``).

Nothing follows a symbolic link out of the tree (a cloned repository may carry one that points
at ``~/.bashrc``): every path is checked by ``inside_tree`` (``paths``) before it is opened,
read, written or handed to SQLite, and files opened in place (locks, logs) are opened with
``O_NOFOLLOW``. The first time a store touches its tree it looks over the tree's own folders
(``audit``), so a command refuses a tree holding such a link before it changes anything, not
half way.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import stat
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planning_memory import core, lockfile
from planning_memory.atomic import TEMP_SUFFIX as TEMP_SUFFIX
from planning_memory.atomic import atomic_write, current_umask, fsync_dir
from planning_memory.atomic import remove_outside as remove_outside
from planning_memory.atomic import use_umask as use_umask
from planning_memory.atomic import write_outside as write_outside
from planning_memory.core import Layout, codec
from planning_memory.errors import (
    AlreadyInitializedError,
    BrokenFileWarning,
    ConflictError,
    InputError,
    NotFoundError,
    PlanningMemoryError,
    StorageError,
    UnsafePathError,
)
from planning_memory.paths import DATABASE_FILES as DATABASE_FILES
from planning_memory.paths import check_database as check_database
from planning_memory.paths import check_root, link_inside, link_out, regular_size
from planning_memory.paths import inside_tree as inside_tree
from planning_memory.paths import open_inside as open_inside
from planning_memory.paths import read_regular as read_regular
from planning_memory.paths import valid_name as valid_name
from planning_memory.paths import writable as writable

ABSENT = "absent"
REPO_FILES = frozenset({"CLAUDE.md", "AGENTS.md"})  # ``expect`` value: the file must not exist yet


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Loaded:
    """A decoded JSON file with the digest of the bytes it came from."""

    path: Path
    value: Any
    digest: str


class Store:
    """File access for one memory tree (``layout.planning``)."""

    def __init__(
        self,
        layout: Layout,
        *,
        private: bool = False,
        lock_timeout: float = 30.0,
        on_write: Callable[[Path], None] | None = None,
    ):
        self.layout = layout
        self.private = private
        self.lock_timeout = lock_timeout
        self.on_write = on_write  # told of every file this store changed (the watch daemon)
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None
        self._took_over = False  # the lock was taken from a dead holder while waiting
        self._audited = False
        self._safe_folders: set[str] = set()
        self._batch = 0  # depth of ``batch()``: writes inside skip their fsyncs
        self._batch_end: list[Callable[[], None]] = []  # run when the outermost batch ends
        self.broken: dict[str, str] = {}  # file -> what is wrong with it, for files skipped

    # -- paths -------------------------------------------------------------------------------
    def rel(self, path: Path) -> str:
        return self.layout.relative(path)

    def check_inside(self, path: Path) -> Path:
        """``path`` if nothing on the way to it leads out of the memory tree (``inside_tree``:
        no ``..`` out, no symlink out); the first call also looks the tree over (``audit``)."""
        if not self._audited:
            self.audit()
            self._audited = True
        return inside_tree(self.layout.tree_of(path), path)

    def audit(self) -> None:
        """Refuse the tree when one of its own folders (the tree's top, ``memory/`` and its
        levels, the derived folders: where the lock, the views, the config, the caches and
        the databases live) holds a symbolic link that leads out of it, or the tree itself is
        a link out of its repository: ``UnsafePathError`` naming the link."""
        check_root(os.fspath(self.layout.planning))
        for folder in self.layout.own_folders():
            try:
                with os.scandir(folder) as entries:
                    links = [entry.path for entry in entries if entry.is_symlink()]
            except OSError:  # absent, not a folder: nothing in it to follow
                continue
            for link in links:
                link_inside(os.fspath(self.layout.tree_of(link)), link)

    def open_file(self, path: Path, flags: int, mode: int | None = None) -> int:
        """A descriptor of the regular file ``path`` in the tree, for a file used in place
        rather than replaced whole (a lock, a log): opened with ``flags`` plus ``O_NOFOLLOW``
        and without blocking, its folder made first when ``flags`` has ``O_CREAT``. A
        symlink, a FIFO or a folder there is refused (``InputError`` naming it), and
        ``O_CREAT`` in a folder this process may not write (``check_writable``);
        ``FileNotFoundError`` when it is absent and not created."""
        path = self.check_inside(Path(path))
        if flags & os.O_CREAT:
            self.check_writable(path.parent)
            self._mkdirs(path.parent)
        if mode is None:
            mode = 0o600 if self.private else 0o666 & ~current_umask()
        return open_inside(path, flags, mode, name=self.rel(path))

    @property
    def read_only(self) -> bool:
        """True when this process may not write the tree (the folder of its lock): another
        user's checkout, a read-only mount. Reading commands still work; writes are refused."""
        return not writable(self.layout.lock_file.parent)

    def check_writable(self, folder: Path) -> None:
        """Refuse a tree this process may only read (another user's checkout, a read-only
        mount) before anything is written: ``StorageError.read_only`` naming ``folder``. Every
        write takes the lock first, so each asks this."""
        if not writable(folder):
            raise StorageError.read_only(self.rel(folder))

    def check_database(self, path: Path) -> Path:
        """``path`` for ``sqlite3.connect``, checked like every other path, with its journal
        files (``check_database``)."""
        return check_database(self.check_inside(Path(path)), name=self.rel(path))

    def write_unlocked(self, path: Path, data: bytes) -> None:
        """Replace ``path`` with ``data`` atomically without taking the memory lock and
        without fsync: for a derived file that one process alone writes and that must never
        wait for the lock (the watch daemon's pid and status files)."""
        path = self.check_inside(Path(path))
        self._mkdirs(path.parent)
        mode = 0o600 if self.private else 0o666 & ~current_umask()
        atomic_write(path, data, new_mode=mode, durable=False)

    # -- lock --------------------------------------------------------------------------------
    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the memory root's lock (re-entrant within this Store)."""
        with self._thread_lock:
            if self._depth == 0:
                self._acquire()
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._release()

    def _acquire(self) -> None:
        lock_file = self.layout.lock_file
        self.check_inside(lock_file)
        self.check_writable(lock_file.parent)
        self._mkdirs(self.layout.lock_file.parent)
        while True:
            fd = lockfile.wait_for(
                lock_file, self._open_lock, self.lock_timeout, self.rel(lock_file), self._taken
            )
            # every write holds the lock and a release clears the holder's name: a name still
            # there (or a takeover) means a holder died, maybe leaving a temp file behind
            died_holding = lockfile.holder_of(fd) is not None or self._took_over
            lockfile.claim(fd)
            if lockfile.is_current(fd, lock_file):
                break
            os.close(fd)  # taken over between our flock and our claim: take the new file
        self._fd = fd
        self._took_over = False
        if died_holding:
            self.sweep_temps()

    def _taken(self) -> None:
        self._took_over = True  # kept until the lock is held: then its temp files are swept

    def _open_lock(self) -> int:
        return self.open_file(self.layout.lock_file, os.O_RDWR | os.O_CREAT, 0o600)

    def _release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)  # no holder named: nobody may take it over
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Many writes as one (re-entrant; the lock is held throughout): each write is a temp
        file renamed over its target as always, so a process killed mid-batch leaves every
        file whole (old or new), but none is fsynced; when the outermost batch ends (even by
        an exception) one ``os.sync()`` flushes them all. A power loss during the batch may
        lose writes made since it began (on some file systems leave a renamed file empty);
        after it returns every write is on disk. What ``at_batch_end`` asked for runs then,
        before the sync, the lock still held."""
        with self.lock():
            self._batch += 1
            try:
                yield
            finally:
                self._batch -= 1
                if self._batch == 0:
                    callbacks, self._batch_end = self._batch_end, []
                    try:
                        for callback in callbacks:
                            callback()
                    finally:
                        os.sync()

    def at_batch_end(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` once when the outermost ``batch()`` ends (the catalog commits the
        transaction it kept open through the batch); at once outside a batch."""
        if not self._batch:
            callback()
        elif callback not in self._batch_end:
            self._batch_end.append(callback)

    @property
    def batching(self) -> bool:
        """True inside ``batch()``."""
        return self._batch > 0

    def sweep_temps(self) -> int:
        """Remove temp files left by a writer that died (safe: we hold the lock)."""
        removed = 0
        for folder, _dirs, files in os.walk(self.layout.planning):
            for name in files:
                if name.endswith(TEMP_SUFFIX):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(os.path.join(folder, name))
                        removed += 1
        return removed

    # -- reading -----------------------------------------------------------------------------
    def read_bytes(self, path: Path, *, max_bytes: int = codec.MAX_BYTES) -> bytes:
        """The bytes of ``path``, which must be a regular file inside the tree (a symlink that
        leads out is refused, so nothing outside is read) and at most ``max_bytes`` long."""
        self._check_folder(os.path.dirname(path))
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                link_inside(os.fspath(self.layout.tree_of(path)), os.fspath(path))
        except FileNotFoundError:
            raise NotFoundError("no such file", path=self.rel(path)) from None
        try:
            data = read_regular(path, max_bytes)
        except PlanningMemoryError as exc:
            exc.path = self.rel(path)
            raise
        if data is None:
            raise NotFoundError("no such file", path=self.rel(path))
        return data

    def skip_broken(
        self, exc: PlanningMemoryError, category: type[BrokenFileWarning] = BrokenFileWarning
    ) -> None:
        """Note a broken file a reader skips (``exc`` names it): kept in ``broken`` and told
        once per file as a ``BrokenFileWarning`` (the CLI prints it as one line)."""
        where = exc.path or "?"
        if where not in self.broken:
            self.broken[where] = exc.one_line()
            warnings.warn(self.broken[where], category, stacklevel=2)

    def usable_name(self, folder: Path | str, name: str) -> bool:
        """False, after one warning (``skip_broken``), for a file name in the tree that is
        not valid UTF-8 (``valid_name``): no memory file has one, and it could be stored
        neither in JSON nor in SQLite. Listings of the tree's folders skip such a file."""
        if valid_name(name):
            return True
        self.skip_broken(
            InputError(
                "file name is not valid UTF-8; no memory file has one",
                path=self.rel(Path(folder, name)),
                hint="rename or remove it",
            )
        )
        return False

    def _check_folder(self, folder: str) -> None:
        """``check_inside`` once per folder (a realpath per file read costs too much)."""
        if folder not in self._safe_folders:
            self.check_inside(Path(folder))
            self._safe_folders.add(folder)

    def load(self, path: Path) -> Loaded:
        data = self.read_bytes(path)
        sha = digest(data)
        try:
            value = codec.loads_known(data, sha)
        except PlanningMemoryError as exc:  # name the file only when needed: rel() costs
            exc.path = self.rel(path)
            raise
        return Loaded(path if isinstance(path, Path) else Path(path), value, sha)

    def read_json(self, path: Path) -> Any:
        return self.load(path).value

    def current_digest(self, path: Path) -> str:
        data = self._old_bytes(path)
        return ABSENT if data is None else digest(data)

    def _old_bytes(self, path: Path) -> bytes | None:
        """What ``path`` holds before a write (None: nothing); a non-regular file is refused."""
        try:
            return read_regular(path, codec.MAX_BYTES)
        except PlanningMemoryError as exc:
            exc.path = self.rel(path)
            raise

    def list_json(self, folder: Path) -> list[Path]:
        """The ``*.json`` files directly in ``folder``, sorted; none if it does not exist."""
        try:
            names = os.listdir(self.check_inside(folder))
        except (FileNotFoundError, NotADirectoryError):
            return []
        return [
            folder / n
            for n in sorted(names)
            if n.endswith(".json") and n[0] != "." and self.usable_name(folder, n)
        ]

    # -- writing -----------------------------------------------------------------------------
    def make_dirs(self, *folders: Path) -> None:
        """Create ``folders`` (and their parents) inside the tree; existing ones are fine."""
        for folder in folders:
            self.check_inside(Path(folder)).mkdir(parents=True, exist_ok=True)

    def create_tree(self, config: Any) -> None:
        """Lay out an empty memory tree: ``config`` as its ``memory-config.json``, its folders
        and its ``.gitignore``; refuse (nothing written) where a tree is already."""
        lay = self.layout
        if lay.config.exists() or lay.memory.exists():
            raise AlreadyInitializedError(
                "a memory tree already exists",
                path=self.rel(lay.planning),
                hint="nothing was changed; `pmem show` tells what is in it",
            )
        with self.lock():
            self.write_json(lay.config, config)
            self.make_dirs(*lay.record_dirs(), lay.short_term, lay.entity, lay.contextual)
            self.write_text(lay.planning / ".gitignore", core.TREE_GITIGNORE)

    def write_json(self, path: Path, value: Any, *, expect: str | None = None) -> bool:
        """Write ``value`` canonically, secrets and ``<private>`` text redacted; False if the
        bytes on disk are already equal."""
        return self.write_bytes(
            path, codec.dump_bytes(core.privacy.redact_value(value)), expect=expect
        )

    def write_text(self, path: Path, text: str, *, expect: str | None = None) -> bool:
        """Write ``text`` (redacted like ``write_json``)."""
        return self.write_bytes(path, core.privacy.redact(text).encode("utf-8"), expect=expect)

    def write_bytes(
        self, path: Path, data: bytes, *, expect: str | None = None, durable: bool = True
    ) -> bool:
        """Replace ``path`` with ``data`` atomically (nothing when it already holds them).
        ``durable=False``, for derived files that are rebuilt when missing or unreadable (a
        cache): still whole or absent, but not fsynced."""
        path = self.check_inside(Path(path))
        with self.lock():
            if expect is None and regular_size(path) not in (None, len(data)):
                old = None  # another size: not read (views are megabytes)
            else:
                old = self._old_bytes(path)
                self._check_expect(path, old, expect)
            if old == data:
                return False
            self._atomic_write(path, data, durable=durable)
            self._changed(path)
            return True

    def append_line(self, path: Path, line: str, *, rotate_at: int) -> None:
        """Append ``line`` (redacted like ``write_text``) to a derived log, without the lock
        and without fsync, so a caller on a fast path never waits: one ``O_APPEND`` write, so
        concurrent appenders never interleave. Past ``rotate_at`` bytes the log is renamed to
        ``<name>.1`` (replacing the one before): the two hold at most about twice that."""
        data = (core.privacy.redact(line).replace("\n", " ") + "\n").encode("utf-8")
        fd = self.open_file(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            size = os.fstat(fd).st_size
            os.write(fd, data)
            if (
                size + len(data) > rotate_at
                and lockfile.try_flock(fd)
                and lockfile.is_current(fd, path)
            ):
                os.replace(path, path.with_name(path.name + ".1"))  # one appender rotates
        finally:
            os.close(fd)
        self._changed(path)

    def _check_repo_file(self, path: Path) -> None:
        root = os.path.realpath(self.layout.repo_root)
        real = os.path.realpath(path)
        if os.path.dirname(real) != root and os.path.islink(path):
            raise link_out(
                os.fspath(path),
                real,
                os.fspath(self.layout.repo_root),
                "the repository's top folder",
            )
        if os.path.dirname(real) != root or Path(path).name not in REPO_FILES:
            raise UnsafePathError(
                "only CLAUDE.md / AGENTS.md at the repository root are touched outside .planning/",
                path=str(path),
            )

    def read_repo_file(self, path: Path, *, max_bytes: int = codec.MAX_BYTES) -> bytes:
        """Read the repository's own CLAUDE.md / AGENTS.md (the only files read outside)."""
        self._check_repo_file(path)
        data = read_regular(path, max_bytes)
        if data is None:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(path))
        return data

    def write_repo_file(self, path: Path, text: str) -> bool:
        """Write one of the repository's own instruction files (``CLAUDE.md``, ``AGENTS.md``
        at the repository root, where only the managed block changes); nothing else outside
        the memory tree is ever written."""
        self._check_repo_file(path)
        data = core.privacy.redact(text).encode("utf-8")
        with self.lock():
            old = read_regular(path, codec.MAX_BYTES)
            if old == data:
                return False
            self._atomic_write(Path(path), data)
            self._changed(Path(path))
            return True

    def delete(self, path: Path, *, expect: str | None = None) -> bool:
        path = self.check_inside(Path(path))
        with self.lock():
            old = self._old_bytes(path)
            if old is None:
                return False
            self._check_expect(path, old, expect)
            os.unlink(path)
            if not self._batch:
                self._fsync_dir(path.parent)
            self._changed(path)
            return True

    def written_elsewhere(self, paths: Iterable[Path]) -> None:
        """Files a copy of this store changed in another process (a forked writer)."""
        for path in paths:
            self._changed(path)

    def _changed(self, path: Path) -> None:
        if self.on_write is not None:
            self.on_write(path)

    def _check_expect(self, path: Path, old: bytes | None, expect: str | None) -> None:
        if expect is None:
            return
        now = ABSENT if old is None else digest(old)
        if now != expect:
            raise ConflictError(
                "file changed on disk since it was read (an editor or git?)",
                path=self.rel(path),
                hint="re-run the command to work from the new content",
            )

    def _mkdirs(self, folder: Path) -> None:
        if not self.private:
            folder.mkdir(parents=True, exist_ok=True)
            return
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        root = self.layout.planning  # mkdir gives missing parents the default mode: fix them
        for here in (folder, *folder.parents):
            if here != root and root not in here.parents:
                break
            if stat.S_IMODE(os.stat(here).st_mode) != 0o700:
                os.chmod(here, 0o700)

    def _atomic_write(self, path: Path, data: bytes, *, durable: bool = True) -> None:
        """A full disk (or quota, or read-only file system) is a ``StorageError`` naming
        ``path``, raised before ``path`` changed."""
        try:
            self._mkdirs(path.parent)
            mode = 0o600 if self.private else 0o666 & ~current_umask()
            atomic_write(path, data, new_mode=mode, durable=durable and not self._batch)
        except OSError as exc:
            refused = StorageError.of(exc, self.rel(path))
            if refused is None:
                raise
            raise refused from None

    @staticmethod
    def _fsync_dir(folder: Path) -> None:
        fsync_dir(folder)

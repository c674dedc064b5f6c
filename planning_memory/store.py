"""The only writer of files under a memory tree: atomic, locked, never rewriting equal bytes.

Writes go to a temp file in the same folder, are fsynced, and replace the target with
``os.replace``; the folder is fsynced after. Inside ``Store.batch()`` (bulk paths: an import,
``Memory.bulk()``) the per-file fsyncs are skipped and one ``os.sync()`` at the end of the
batch makes every write durable at once: each file is still whole or absent (temp file and
rename), only durability against a power loss waits for the end of the batch. One lock file
per memory root serialises writers (``flock``: the kernel drops it when the holder dies). The
lock file names its holder (pid, start time, host): a lock kept by a dead holder's leftover
children is taken over, and a wait is bounded by ``lock_timeout``. An update may carry the
digest of what the caller read; if the file changed since (an editor, ``git pull``),
``ConflictError``.

Only regular files are read (a FIFO, a device or a socket is refused with one line, and never
opened in a way that blocks), and never more than a size limit. A reader that skips a broken
file warns once per file (``BrokenFileWarning``).

Nothing follows a symbolic link out of the tree (a cloned repository may carry one that points
at ``~/.bashrc``): every path is checked by ``inside_tree`` before it is opened, read, written
or handed to SQLite, and files opened in place (locks, logs) are opened with ``O_NOFOLLOW``.
The first time a store touches its tree it looks over the tree's own folders (``audit``), so a
command refuses a tree holding such a link before it changes anything, not half way.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import stat
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planning_memory import core
from planning_memory.core import PLANNING_DIR, Layout, codec
from planning_memory.errors import (
    BrokenFileWarning,
    ConflictError,
    InputError,
    LimitError,
    LockError,
    NotFoundError,
    PlanningMemoryError,
    StorageError,
    UnsafePathError,
    printable,
)

TEMP_SUFFIX = ".pm-tmp"
ABSENT = "absent"
REPO_FILES = frozenset({"CLAUDE.md", "AGENTS.md"})  # ``expect`` value: the file must not exist yet
STALE_CHECK_S = 0.2  # how often a waiter looks whether the lock's holder is still alive


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
        return inside_tree(self.layout.planning, path)

    def audit(self) -> None:
        """Refuse the tree when one of its own folders (the tree's top, ``memory/`` and its
        levels, the derived folders: where the lock, the views, the config, the caches and
        the databases live) holds a symbolic link that leads out of it, or the tree itself is
        a link out of its repository: ``UnsafePathError`` naming the link."""
        root = os.fspath(self.layout.planning)
        _check_root(root)
        for folder in self.layout.own_folders():
            try:
                with os.scandir(folder) as entries:
                    links = [entry.path for entry in entries if entry.is_symlink()]
            except OSError:  # absent, not a folder: nothing in it to follow
                continue
            for link in links:
                _link_inside(root, link)

    def open_file(self, path: Path, flags: int, mode: int | None = None) -> int:
        """A descriptor of the regular file ``path`` in the tree, for a file used in place
        rather than replaced whole (a lock, a log): opened with ``flags`` plus ``O_NOFOLLOW``
        and without blocking, its folder made first when ``flags`` has ``O_CREAT``. A
        symlink, a FIFO or a folder there is refused (``InputError`` naming it);
        ``FileNotFoundError`` when it is absent and not created."""
        path = self.check_inside(Path(path))
        if flags & os.O_CREAT:
            self._mkdirs(path.parent)
        if mode is None:
            mode = 0o600 if self.private else 0o666 & ~_umask()
        return open_inside(path, flags, mode, name=self.rel(path))

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
        mode = 0o600 if self.private else 0o666 & ~_umask()
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
        self.check_inside(self.layout.lock_file)
        self._mkdirs(self.layout.planning)
        while True:
            fd = self._wait_for(self.layout.lock_file)
            # every write holds the lock and a release clears the holder's name: a name still
            # there (or a takeover) means a holder died, maybe leaving a temp file behind
            died_holding = _holder_of(fd) is not None or self._took_over
            _claim(fd)
            if _is_current(fd, self.layout.lock_file):
                break
            os.close(fd)  # taken over between our flock and our claim: take the new file
        self._fd = fd
        self._took_over = False
        if died_holding:
            self.sweep_temps()

    def _wait_for(self, lock_file: Path) -> int:
        """A descriptor of ``lock_file`` holding its flock (a lock file replaced by a takeover
        while we waited is opened again); LockError after ``lock_timeout``."""
        deadline = time.monotonic() + self.lock_timeout
        look_at = time.monotonic() + STALE_CHECK_S
        delay = 0.0005
        fd = self._open_lock()
        try:
            while True:
                if _try_flock(fd):
                    if _is_current(fd, lock_file):
                        return fd
                    os.close(fd)  # the lock file was replaced while we waited: take the new one
                    fd = self._open_lock()
                    continue
                now = time.monotonic()
                if now >= look_at:
                    look_at = now + STALE_CHECK_S
                    if not _is_current(fd, lock_file) or _take_over(fd, lock_file):
                        self._took_over = True
                        os.close(fd)
                        fd = self._open_lock()
                        continue
                if now > deadline:
                    holder = _holder_of(fd)
                    who = f"process {holder[0]}" if holder else "another process"
                    raise LockError(
                        f"memory is locked by {who} for over {self.lock_timeout:g} s",
                        path=self.rel(lock_file),
                        hint="another pmem command or the daemon is busy; try again",
                    )
                time.sleep(delay)
                delay = min(delay * 2, 0.005)  # short polls: flock is not FIFO
        except BaseException:
            with contextlib.suppress(OSError):
                os.close(fd)
            raise

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
                _link_inside(os.fspath(self.layout.planning), os.fspath(path))
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
        try:
            value = codec.loads(data)
        except PlanningMemoryError as exc:  # name the file only when needed: rel() costs
            exc.path = self.rel(path)
            raise
        return Loaded(path if isinstance(path, Path) else Path(path), value, digest(data))

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
            if size + len(data) > rotate_at and _try_flock(fd) and _is_current(fd, path):
                os.replace(path, path.with_name(path.name + ".1"))  # one appender rotates
        finally:
            os.close(fd)
        self._changed(path)

    def _check_repo_file(self, path: Path) -> None:
        root = os.path.realpath(self.layout.repo_root)
        real = os.path.realpath(path)
        if os.path.dirname(real) != root and os.path.islink(path):
            raise _link_out(
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
            mode = 0o600 if self.private else 0o666 & ~_umask()
            atomic_write(path, data, new_mode=mode, durable=durable and not self._batch)
        except OSError as exc:
            refused = StorageError.of(exc, self.rel(path))
            if refused is None:
                raise
            raise refused from None

    @staticmethod
    def _fsync_dir(folder: Path) -> None:
        fsync_dir(folder)


def read_regular(path: Path | str, max_bytes: int = codec.MAX_BYTES) -> bytes | None:
    """The bytes of the regular file ``path`` (None if it does not exist), read without ever
    blocking or reading more than ``max_bytes``: the file is opened non-blocking and checked
    with ``fstat`` before a byte is read, so a FIFO, a device or a socket is refused with an
    ``InputError`` and ``/dev/zero`` cannot fill memory."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except FileNotFoundError:
        return None
    except OSError as exc:  # a socket (ENXIO), no permission, a loop of symlinks...
        raise InputError(f"cannot open: {exc.strerror}", path=str(path)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(
                f"is {_file_kind(st.st_mode)}, expected a regular file", path=str(path)
            )
        if st.st_size > max_bytes:
            raise LimitError(
                f"file is {st.st_size:,} bytes, over the {max_bytes:,}-byte limit", path=str(path)
            )
        chunks = [os.read(fd, st.st_size + 1)]  # not max_bytes: that would allocate max_bytes
        size = len(chunks[0])
        while size > st.st_size and size <= max_bytes:  # it grew since the fstat
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > max_bytes:
        raise LimitError(f"file is over the {max_bytes:,}-byte limit", path=str(path))
    return b"".join(chunks)


# -- staying inside the tree: the one check for every path opened under it ---------------------
def inside_tree(tree: Path | str, path: Path | str) -> Path:
    """``path`` if it lies in the memory tree ``tree`` and nothing on the way leads out.

    Each part of ``path`` below ``tree`` that exists is looked at with ``lstat``: a symbolic
    link must resolve inside the tree (a link out is refused with ``UnsafePathError`` naming
    it, so a cloned repository's ``.planning/.lock -> ~/.bashrc`` is never opened), and a
    repository's ``.planning`` may not be a link out of the repository. The walk ends at the
    first part that does not exist: what is made there (a folder, a temp file renamed into
    place, a file opened with ``O_CREAT | O_NOFOLLOW``) is real. A path with ``..`` or not
    under ``tree`` is resolved whole with ``realpath``."""
    root = os.fspath(tree)
    text = os.fspath(path)
    _check_root(root)
    if text == root:
        return Path(path)
    parts = text[len(root) + 1 :].split(os.sep) if text.startswith(root + os.sep) else [".."]
    if ".." in parts:
        real_root = os.path.realpath(root)
        if not _is_within(os.path.realpath(text), real_root):
            raise UnsafePathError(
                "path resolves outside the memory tree",
                path=text,
                hint="ids and paths may not contain '..', absolute parts or symlinks out",
            )
        return Path(path)
    here = root
    for part in parts:
        here += os.sep + part
        try:
            mode = os.lstat(here).st_mode
        except OSError:  # absent (or under a file): nothing further to follow
            break
        if stat.S_ISLNK(mode):
            _link_inside(root, here)
    return Path(path)


def _check_root(root: str) -> None:
    """A repository's ``.planning`` that is a symlink must stay inside the repository."""
    if os.path.basename(root) != PLANNING_DIR:
        return  # the personal store, or a copy of a tree named on the command line
    try:
        if not stat.S_ISLNK(os.lstat(root).st_mode):
            return
    except OSError:
        return
    real = os.path.realpath(root)
    if not _is_within(real, os.path.realpath(os.path.dirname(root))):
        raise _link_out(root, real, os.path.dirname(root), "the repository")


def _link_inside(root: str, link: str) -> None:
    """Refuse the symlink ``link`` unless it resolves inside the tree ``root``."""
    real = os.path.realpath(link)
    if not _is_within(real, os.path.realpath(root)):
        raise _link_out(link, real, os.path.dirname(root), "the memory tree")


def _is_within(real: str, folder: str) -> bool:
    return real == folder or real.startswith(folder.rstrip(os.sep) + os.sep)


def _link_out(link: str, real: str, repo: str, what: str) -> UnsafePathError:
    name = Layout(Path(repo) / PLANNING_DIR).relative(Path(link))
    return UnsafePathError(
        f"is a symbolic link that leads outside {what} (to {printable(real)}); pmem never "
        "reads or writes through one",
        path=name,
        hint=f"a cloned repository may carry one: remove it with `rm {printable(name)}`, "
        "then run the command again",
    )


def open_inside(path: Path, flags: int, mode: int, *, name: str) -> int:
    """``os.open`` of a path ``inside_tree`` vouched for, never through a symlink and never
    blocking (a FIFO), for a regular file only; errors name the file as ``name``."""
    flags |= os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY
    try:
        fd = os.open(path, flags, mode)
    except FileNotFoundError:
        raise
    except OSError as exc:  # a symlink (ELOOP), a folder, no permission...
        if exc.errno == errno.ELOOP:
            raise UnsafePathError(
                "is a symbolic link; pmem never opens this file through one",
                path=name,
                hint=f"remove it with `rm {printable(name)}`, then run the command again",
            ) from None
        if exc.errno == errno.EISDIR:
            raise InputError(
                "is a directory, expected a regular file",
                path=name,
                hint="pmem keeps a file there: move the folder away, then run the command again",
            ) from None
        raise InputError(f"cannot open: {exc.strerror}", path=name) from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise InputError(
            f"is {_file_kind(st.st_mode)}, expected a regular file",
            path=name,
            hint=f"remove it with `rm {printable(name)}`, then run the command again",
        )
    return fd


DATABASE_FILES = ("", "-wal", "-shm", "-journal")  # SQLite's file and the journals beside it


def check_database(path: Path, *, name: str) -> Path:
    """``path`` (checked by ``inside_tree``) for ``sqlite3.connect``: SQLite opens the file
    and its journals by name and follows symlinks, so each of them must be a regular file or
    absent (``UnsafePathError`` / ``InputError`` naming it); a FIFO would block it."""
    for suffix in DATABASE_FILES:
        try:
            mode = os.lstat(f"{path}{suffix}").st_mode
        except FileNotFoundError:
            continue
        if stat.S_ISREG(mode):
            continue
        what = "a symbolic link" if stat.S_ISLNK(mode) else _file_kind(mode)
        raise (UnsafePathError if stat.S_ISLNK(mode) else InputError)(
            f"is {what}; pmem keeps a database there and opens it only as a regular file",
            path=name + suffix,
            hint=f"remove it with `rm {printable(name + suffix)}`: it is derived and rebuilt",
        )
    return path


def valid_name(name: str) -> bool:
    """Whether ``name`` (a file name or path as ``os.listdir`` or git gives it) is valid
    UTF-8: the bytes of one that is not come as lone surrogates, which JSON, SQLite and a
    terminal refuse (``errors.printable`` shows them as ``\\xe9``)."""
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _file_kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


# -- the lock file: who holds it, and taking over one whose holder is dead ----------------------
def _try_flock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno not in (errno.EAGAIN, errno.EACCES):
            raise
        return False
    return True


def _is_current(fd: int, lock_file: Path) -> bool:
    """True while ``fd`` is still the file at ``lock_file`` (not replaced by a takeover)."""
    try:
        st = os.stat(lock_file)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (st.st_ino, st.st_dev) == (mine.st_ino, mine.st_dev)


def _identity(pid: int) -> str:
    """``pid start-time host``: a pid alone could be reused by an unrelated process."""
    return f"{pid} {_start_time(pid)} {_hostname()}"


def _start_time(pid: int) -> str:
    return _proc_stat(pid)[1]


def _proc_stat(pid: int) -> tuple[str, str]:
    """(state, start time in clock ticks) of ``pid`` from /proc (``("?", "0")`` unknown)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return fields[0].decode(), fields[19].decode()  # stat(5) fields 3 and 22
    except (OSError, IndexError):
        return "?", "0"


def _claim(fd: int) -> None:
    """Name this process as the holder of the lock it just took."""
    with contextlib.suppress(OSError):
        data = (_identity(os.getpid()) + "\n").encode()
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)


def _holder_of(fd: int) -> tuple[int, str, str] | None:
    """The holder the lock file names (pid, start time, host), or None if it names none."""
    try:
        pid, start, host = os.pread(fd, 200, 0).decode("ascii").split()
        return int(pid), start, host
    except (OSError, ValueError):
        return None


def _holder_dead(holder: tuple[int, str, str]) -> bool:
    pid, start, host = holder
    if host != _hostname() or pid <= 0:
        return False  # another machine or container: its processes cannot be seen from here
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass
    state, started = _proc_stat(pid)
    return state in ("Z", "X") or (start != "0" and started not in (start, "0"))


def _take_over(fd: int, lock_file: Path) -> bool:
    """Replace the lock file when the holder it names is dead (its flock lives on only in
    leftover children that inherited it); True if it was replaced. Takeovers are serialised
    by a flock on the memory folder itself, and a lock file is replaced only while it is still
    the one seen dead."""
    holder = _holder_of(fd)
    if holder is None or not _holder_dead(holder):
        return False
    guard = os.open(lock_file.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        if not _try_flock(guard):
            return False
        if not _is_current(fd, lock_file) or _holder_of(fd) != holder:
            return False
        fd, fresh = create_temp(lock_file.parent, f".{lock_file.name}.", TEMP_SUFFIX)
        os.close(fd)
        try:
            os.replace(fresh, lock_file)
        except FileNotFoundError:  # swept by a holder of a newer lock file: nothing to do
            return False
        return True
    finally:
        os.close(guard)


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, *, new_mode: int = 0o644, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically: a temp file in the same folder, fsync,
    ``os.replace``, fsync of the folder (without ``durable``, no fsync: the caller syncs
    later, ``Store.batch``). An existing file keeps its mode; a new one gets ``new_mode``.
    The caller serialises writers (the Store holds the memory lock)."""
    folder = path.parent
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = new_mode
    fd, tmp = create_temp(folder, f".{path.name}.", TEMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fchmod(fh.fileno(), mode)
            if durable:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    if durable:
        fsync_dir(folder)


def create_temp(folder: Path, prefix: str, suffix: str) -> tuple[int, str]:
    """A new file ``<prefix><random><suffix>`` in ``folder``, mode 0600, open for writing, as
    ``tempfile.mkstemp`` makes one (without importing ``tempfile``, which costs a command
    line's start-up several milliseconds): its descriptor and path."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW
    for _ in range(100):
        name = os.path.join(folder, f"{prefix}{os.urandom(6).hex()}{suffix}")
        try:
            return os.open(name, flags, 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no unused temporary file name", str(folder))


def _hostname() -> str:
    """The host's name, as ``socket.gethostname()`` gives it (without importing ``socket``)."""
    return os.uname().nodename


_UMASK: int | None = None


def _umask() -> int:
    """This process's umask, read once (reading it means setting it)."""
    global _UMASK
    if _UMASK is None:
        current = os.umask(0)
        os.umask(current)
        _UMASK = current
    return _UMASK


def _forget_umask() -> None:
    global _UMASK
    _UMASK = None


def use_umask(mask: int) -> None:
    """Take ``mask`` as this process's umask (the hook server answering for a client)."""
    global _UMASK
    os.umask(mask)
    _UMASK = mask


os.register_at_fork(after_in_child=_forget_umask)  # a forked worker may take another umask


def remove_outside(path: Path, up_to: Path | None = None) -> bool:
    """Remove a file outside any memory tree (an agent's config file that held only what an
    installer wrote), then the folders it leaves empty below ``up_to``; False when there is
    no such file."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    folder = path.parent
    while up_to is not None and folder != up_to and folder.is_relative_to(up_to):
        try:
            os.rmdir(folder)  # only an empty folder goes
        except OSError:
            break
        folder = folder.parent
    return True


def write_outside(path: Path, data: bytes) -> bool:
    """Write ``data`` to a file outside any memory tree (an agent's config file) the way the
    store writes its own: atomically, the folder made if needed, the mode kept; False when the
    bytes on disk are already equal."""
    with contextlib.suppress(FileNotFoundError, IsADirectoryError):
        if path.read_bytes() == data:
            return False
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, data)
    return True

"""The only writer of files under a memory tree: atomic, locked, never rewriting equal bytes.

Writes go to a temp file in the same folder, are fsynced, and replace the target with
``os.replace``; the folder is fsynced after. One lock file per memory root serialises writers
(``flock``: the kernel drops it when the holder dies). An update may carry the digest of what
the caller read; if the file changed since (an editor, ``git pull``), ``ConflictError``.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planning_memory import core
from planning_memory.core import Layout, codec
from planning_memory.errors import (
    ConflictError,
    InputError,
    LimitError,
    LockError,
    NotFoundError,
    PlanningMemoryError,
    UnsafePathError,
)

TEMP_SUFFIX = ".pm-tmp"
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
        self._swept = False
        self._root_real: str | None = None
        self._safe_folders: set[str] = set()

    # -- paths -------------------------------------------------------------------------------
    def rel(self, path: Path) -> str:
        return self.layout.relative(path)

    def check_inside(self, path: Path) -> Path:
        """``path`` if it resolves inside the memory root (no ``..``, no symlink out)."""
        if self._root_real is None:
            self._root_real = os.path.realpath(self.layout.planning)
        real = os.path.realpath(path)
        if real != self._root_real and not real.startswith(self._root_real + os.sep):
            raise UnsafePathError(
                "path resolves outside the memory tree",
                path=str(path),
                hint="ids and paths may not contain '..', absolute parts or symlinks out",
            )
        return Path(path)

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
        self._mkdirs(self.layout.planning)
        fd = os.open(self.layout.lock_file, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        deadline = time.monotonic() + self.lock_timeout
        delay = 0.0005
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    os.close(fd)
                    raise
                if time.monotonic() > deadline:
                    os.close(fd)
                    raise LockError(
                        f"memory is locked by another process for over {self.lock_timeout:g} s",
                        path=self.rel(self.layout.lock_file),
                        hint="another pmem command or the daemon is busy; try again",
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.005)  # short polls: flock is not FIFO
        self._fd = fd
        if not self._swept:
            self._swept = True
            self.sweep_temps()

    def _release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

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
        """The bytes of ``path``, which must be a file inside the tree (a symlink that leads
        out is refused, so nothing outside is read) and at most ``max_bytes`` long."""
        self._check_folder(os.path.dirname(path))
        try:
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                self.check_inside(path)
                st = os.stat(path)
        except FileNotFoundError:
            raise NotFoundError("no such file", path=self.rel(path)) from None
        if stat.S_ISDIR(st.st_mode):
            raise InputError("is a directory, expected a file", path=self.rel(path))
        if st.st_size > max_bytes:
            raise LimitError(
                f"file is {st.st_size:,} bytes, over the {max_bytes:,}-byte limit",
                path=self.rel(path),
            )
        with open(path, "rb") as fh:
            data = fh.read(st.st_size + 1)  # not read(max_bytes): that allocates max_bytes
            if len(data) > st.st_size:  # it grew since the stat
                data += fh.read(max_bytes + 1 - len(data))
        if len(data) > max_bytes:
            raise LimitError(f"file is over the {max_bytes:,}-byte limit", path=self.rel(path))
        return data

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
        try:
            with open(path, "rb") as fh:
                return digest(fh.read())
        except FileNotFoundError:
            return ABSENT

    def list_json(self, folder: Path) -> list[Path]:
        """The ``*.json`` files directly in ``folder``, sorted; none if it does not exist."""
        try:
            names = os.listdir(folder)
        except (FileNotFoundError, NotADirectoryError):
            return []
        return [folder / n for n in sorted(names) if n.endswith(".json") and n[0] != "."]

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

    def write_bytes(self, path: Path, data: bytes, *, expect: str | None = None) -> bool:
        path = self.check_inside(Path(path))
        with self.lock():
            try:
                with open(path, "rb") as fh:
                    old: bytes | None = fh.read()
            except FileNotFoundError:
                old = None
            except IsADirectoryError:
                raise InputError("is a directory, expected a file", path=self.rel(path)) from None
            self._check_expect(path, old, expect)
            if old == data:
                return False
            self._atomic_write(path, data)
            self._changed(path)
            return True

    def _check_repo_file(self, path: Path) -> None:
        root = os.path.realpath(self.layout.repo_root)
        if os.path.dirname(os.path.realpath(path)) != root or Path(path).name not in REPO_FILES:
            raise UnsafePathError(
                "only CLAUDE.md / AGENTS.md at the repository root are touched outside .planning/",
                path=str(path),
            )

    def read_repo_file(self, path: Path, *, max_bytes: int = codec.MAX_BYTES) -> bytes:
        """Read the repository's own CLAUDE.md / AGENTS.md (the only files read outside)."""
        self._check_repo_file(path)
        if os.path.getsize(path) > max_bytes:
            raise LimitError(f"file is over the {max_bytes:,}-byte limit", path=str(path))
        return Path(path).read_bytes()

    def write_repo_file(self, path: Path, text: str) -> bool:
        """Write one of the repository's own instruction files (``CLAUDE.md``, ``AGENTS.md``
        at the repository root, where only the managed block changes); nothing else outside
        the memory tree is ever written."""
        self._check_repo_file(path)
        data = core.privacy.redact(text).encode("utf-8")
        with self.lock():
            try:
                old: bytes | None = Path(path).read_bytes()
            except FileNotFoundError:
                old = None
            if old == data:
                return False
            self._atomic_write(Path(path), data)
            self._changed(Path(path))
            return True

    def delete(self, path: Path, *, expect: str | None = None) -> bool:
        path = self.check_inside(Path(path))
        with self.lock():
            try:
                with open(path, "rb") as fh:
                    old = fh.read()
            except FileNotFoundError:
                return False
            self._check_expect(path, old, expect)
            os.unlink(path)
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

    def _atomic_write(self, path: Path, data: bytes) -> None:
        self._mkdirs(path.parent)
        atomic_write(path, data, new_mode=0o600 if self.private else 0o666 & ~_umask())

    @staticmethod
    def _fsync_dir(folder: Path) -> None:
        fsync_dir(folder)


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, *, new_mode: int = 0o644) -> None:
    """Replace ``path`` with ``data`` atomically: a temp file in the same folder, fsync,
    ``os.replace``, fsync of the folder. An existing file keeps its mode; a new one gets
    ``new_mode``. The caller serialises writers (the Store holds the memory lock)."""
    folder = path.parent
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = new_mode
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMP_SUFFIX, dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fchmod(fh.fileno(), mode)
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    fsync_dir(folder)


_UMASK: int | None = None


def _umask() -> int:
    global _UMASK
    if _UMASK is None:
        current = os.umask(0)
        os.umask(current)
        _UMASK = current
    return _UMASK


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

"""Replacing a file whole: a temp file beside it, fsync, rename; and the process's umask.

``atomic_write`` leaves the file old or new, never half written, even when the process is
killed; ``create_temp`` makes the temp file as ``tempfile.mkstemp`` would (without importing
it). The store writes every file under a tree this way (holding the memory lock);
``write_outside`` and ``remove_outside`` are the same for an agent's configuration file,
outside any tree. A new file's mode follows the umask (``current_umask``), which the hook
server sets per client (``use_umask``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

TEMP_SUFFIX = ".pm-tmp"


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


_UMASK: int | None = None


def current_umask() -> int:
    """This process's umask, read once (reading it means setting it)."""
    global _UMASK
    if _UMASK is None:
        current = os.umask(0)
        os.umask(current)
        _UMASK = current
    return _UMASK


def forget_umask() -> None:
    global _UMASK
    _UMASK = None


def use_umask(mask: int) -> None:
    """Take ``mask`` as this process's umask (the hook server answering for a client)."""
    global _UMASK
    os.umask(mask)
    _UMASK = mask


os.register_at_fork(after_in_child=forget_umask)  # a forked worker may take another umask


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

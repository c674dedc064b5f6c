"""The memory lock's file: a ``flock`` that names its holder, and taking over a dead one's.

One lock file per memory root serialises writers; the kernel drops a ``flock`` when its holder
dies, but a holder's leftover children inherit it. So the holder writes its name into the file
(pid, start time, host: ``claim``), a release clears it, and a waiter that finds the named
holder dead replaces the lock file (``take_over``: serialised by a ``flock`` on the folder, and
only while the file is still the one seen dead). ``wait_for`` is the wait, bounded by a
timeout. ``Store.lock`` holds the lock around every write.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from collections.abc import Callable
from pathlib import Path

from planning_memory.atomic import TEMP_SUFFIX, create_temp
from planning_memory.errors import LockError

STALE_CHECK_S = 0.2  # how often a waiter looks whether the lock's holder is still alive


def wait_for(
    lock_file: Path,
    open_lock: Callable[[], int],
    timeout: float,
    name: str,
    took_over: Callable[[], None],
) -> int:
    """A descriptor of ``lock_file`` (opened by ``open_lock``) holding its flock; a lock file
    replaced by a takeover while we waited is opened again, and ``took_over`` is told of
    each (even when the wait then fails). ``LockError`` (naming the file as ``name``) after
    ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    look_at = time.monotonic() + STALE_CHECK_S
    delay = 0.0005
    fd = open_lock()
    try:
        while True:
            if try_flock(fd):
                if is_current(fd, lock_file):
                    return fd
                os.close(fd)  # the lock file was replaced while we waited: take the new one
                fd = open_lock()
                continue
            now = time.monotonic()
            if now >= look_at:
                look_at = now + STALE_CHECK_S
                if not is_current(fd, lock_file) or take_over(fd, lock_file):
                    took_over()
                    os.close(fd)
                    fd = open_lock()
                    continue
            if now > deadline:
                holder = holder_of(fd)
                who = f"process {holder[0]}" if holder else "another process"
                raise LockError(
                    f"memory is locked by {who} for over {timeout:g} s",
                    path=name,
                    hint="another pmem command or the daemon is busy; try again",
                )
            time.sleep(delay)
            delay = min(delay * 2, 0.005)  # short polls: flock is not FIFO
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)
        raise


def try_flock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno not in (errno.EAGAIN, errno.EACCES):
            raise
        return False
    return True


def is_current(fd: int, lock_file: Path) -> bool:
    """True while ``fd`` is still the file at ``lock_file`` (not replaced by a takeover)."""
    try:
        st = os.stat(lock_file)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (st.st_ino, st.st_dev) == (mine.st_ino, mine.st_dev)


def identity(pid: int) -> str:
    """``pid start-time host``: a pid alone could be reused by an unrelated process."""
    return f"{pid} {start_time(pid)} {hostname()}"


def start_time(pid: int) -> str:
    return proc_stat(pid)[1]


def proc_stat(pid: int) -> tuple[str, str]:
    """(state, start time in clock ticks) of ``pid`` from /proc (``("?", "0")`` unknown)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return fields[0].decode(), fields[19].decode()  # stat(5) fields 3 and 22
    except (OSError, IndexError):
        return "?", "0"


def claim(fd: int) -> None:
    """Name this process as the holder of the lock it just took."""
    with contextlib.suppress(OSError):
        data = (identity(os.getpid()) + "\n").encode()
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)


def holder_of(fd: int) -> tuple[int, str, str] | None:
    """The holder the lock file names (pid, start time, host), or None if it names none."""
    try:
        pid, start, host = os.pread(fd, 200, 0).decode("ascii").split()
        return int(pid), start, host
    except (OSError, ValueError):
        return None


def holder_dead(holder: tuple[int, str, str]) -> bool:
    pid, start, host = holder
    if host != hostname() or pid <= 0:
        return False  # another machine or container: its processes cannot be seen from here
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass
    state, started = proc_stat(pid)
    return state in ("Z", "X") or (start != "0" and started not in (start, "0"))


def take_over(fd: int, lock_file: Path) -> bool:
    """Replace the lock file when the holder it names is dead (its flock lives on only in
    leftover children that inherited it); True if it was replaced. Takeovers are serialised
    by a flock on the memory folder itself, and a lock file is replaced only while it is still
    the one seen dead."""
    holder = holder_of(fd)
    if holder is None or not holder_dead(holder):
        return False
    guard = os.open(lock_file.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        if not try_flock(guard):
            return False
        if not is_current(fd, lock_file) or holder_of(fd) != holder:
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


def hostname() -> str:
    """The host's name, as ``socket.gethostname()`` gives it (without importing ``socket``)."""
    return os.uname().nodename

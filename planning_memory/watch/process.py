"""The daemon's process: its runtime files, pid and lock, and start / stop / status.

One daemon per repository, held by ``flock`` on ``contextual/watch.lock`` for its whole life
(not the memory root's lock, which writers take briefly). Its pid, log and status files live
next to it in ``memory/contextual/`` (derived and gitignored). They are opened through the
memory's store (never through a symlink, never out of the tree) but without its lock: they must
never wait for the memory lock, which a long reconcile holds. Imports nothing heavy: ``pmem
watch status`` stays quick.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planning_memory.errors import LockError, PlanningMemoryError

if TYPE_CHECKING:
    from planning_memory.memory import Memory

LOG_MAX_BYTES = 1 << 20
START_WAIT_S = 15.0
STOP_WAIT_S = 20.0
ENTRY = "planning_memory.watch.daemon"  # ``python -m ENTRY ROOT``: the daemon's process


@dataclass(frozen=True)
class Runtime:
    """The daemon's files under ``memory/contextual/``."""

    memory: Memory

    @property
    def folder(self) -> Path:
        return self.memory.layout.contextual

    @property
    def lock(self) -> Path:
        return self.folder / "watch.lock"

    @property
    def pid(self) -> Path:
        return self.folder / "watch.pid"

    @property
    def log(self) -> Path:
        return self.folder / "watch.log"

    @property
    def status(self) -> Path:
        return self.folder / "watch-status.json"

    def relative(self, path: Path) -> str:
        return self.memory.layout.relative(path)


def write_status(rt: Runtime, text: str) -> None:
    rt.memory.store.write_unlocked(rt.status, text.encode("utf-8"))


def _read(rt: Runtime, path: Path) -> str:
    """The text of one of the daemon's files ("" when absent or unreadable)."""
    try:
        return rt.memory.store.read_bytes(path, max_bytes=LOG_MAX_BYTES).decode("utf-8")
    except (PlanningMemoryError, UnicodeDecodeError):
        return ""


def _read_json(rt: Runtime, path: Path) -> dict[str, Any]:
    try:
        value = json.loads(_read(rt, path))
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _read_pid(rt: Runtime) -> int | None:
    for path in (rt.pid, rt.lock):
        with contextlib.suppress(ValueError):
            text = _read(rt, path).strip()
            if text:
                return int(text)
    return None


def is_running(rt: Runtime) -> bool:
    """True while some process holds the daemon lock of this repository."""
    try:
        fd = rt.memory.store.open_file(rt.lock, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES):
            return True
        raise
    finally:
        os.close(fd)  # closing drops our probe lock
    return False


def _running_error(rt: Runtime) -> LockError:
    return LockError(
        f"a watch daemon already runs for this repository (pid {_read_pid(rt)})",
        path=rt.relative(rt.lock),
        hint="`pmem watch status` tells what it does; `pmem watch stop` stops it",
    )


def acquire(rt: Runtime, wait: float = 1.0) -> int:
    """Take the daemon lock (a status probe may hold it for a moment) and write our pid in it;
    returns the descriptor that holds it."""
    fd = rt.memory.store.open_file(rt.lock, os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES) or time.monotonic() > deadline:
                os.close(fd)
                raise _running_error(rt) from None
            time.sleep(0.02)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    rt.memory.store.write_unlocked(rt.pid, f"{os.getpid()}\n".encode())
    return fd


def release(rt: Runtime, fd: int) -> None:
    """Remove the pid file and drop the lock."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(rt.pid)
    os.close(fd)


def _rotate(rt: Runtime) -> None:
    with contextlib.suppress(FileNotFoundError):
        if os.lstat(rt.memory.store.check_inside(rt.log)).st_size > LOG_MAX_BYTES:
            os.replace(rt.log, rt.log.with_suffix(".log.1"))


def start(memory: Memory, *, wait: float = START_WAIT_S, polling: bool = False) -> dict[str, Any]:
    """Start a background daemon and return its status once it watches (its first reconcile
    may still run). Refuses when one already runs for this repository."""
    rt = Runtime(memory)
    if is_running(rt):
        raise _running_error(rt)
    _rotate(rt)
    root = memory.layout.repo_root
    argv = [sys.executable, "-m", ENTRY, str(root), *(["--polling"] if polling else [])]
    log = memory.store.open_file(rt.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    with os.fdopen(log, "ab") as out:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, cwd=root,
            start_new_session=True,
        )  # fmt: skip
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        code = proc.poll()
        if code is not None:
            raise _start_failed(rt, code)
        info = _read_json(rt, rt.status)
        if info.get("pid") == proc.pid and info.get("state") not in (None, "starting"):
            return status(memory)
        time.sleep(0.05)
    return {**status(memory), "note": f"still starting after {wait:g} s"}


def _start_failed(rt: Runtime, code: int) -> PlanningMemoryError:
    lines = [ln for ln in _tail(rt).splitlines() if ln.strip()]
    last = lines[-1] if lines else f"exit code {code}"
    if is_running(rt):
        return _running_error(rt)
    return PlanningMemoryError(
        f"the watch daemon exited at start: {last}", path=rt.relative(rt.log)
    )


def _tail(rt: Runtime, size: int = 4096) -> str:
    try:
        with os.fdopen(rt.memory.store.open_file(rt.log, os.O_RDONLY), "rb") as fh:
            fh.seek(max(0, fh.seek(0, os.SEEK_END) - size))
            return fh.read().decode("utf-8", "replace")
    except (OSError, PlanningMemoryError):
        return ""


def stop(memory: Memory, *, timeout: float = STOP_WAIT_S) -> dict[str, Any]:
    """Ask the daemon to stop (SIGTERM: it finishes its batch) and wait for it; SIGKILL after
    ``timeout`` seconds."""
    rt = Runtime(memory)
    pid = _read_pid(rt)
    if not is_running(rt) or pid is None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(rt.pid)
        return {"running": False, "stopped": False, "pid": None}
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while is_running(rt):
        if time.monotonic() > deadline:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            time.sleep(0.2)
            return {"running": is_running(rt), "stopped": True, "pid": pid, "killed": True}
        time.sleep(0.05)
    return {"running": False, "stopped": True, "pid": pid}


def status(memory: Memory) -> dict[str, Any]:
    """What the daemon of this repository is doing (or last did): its status file, plus
    ``running`` (from the lock), ``pid``, ``uptime_s``, ``log`` and, while a batch runs,
    ``busy_s``: how long it has run (a batch stuck on a file shows as a growing number)."""
    rt = Runtime(memory)
    running = is_running(rt)
    info = _read_json(rt, rt.status)
    result: dict[str, Any] = {
        "running": running,
        "pid": _read_pid(rt) if running else None,
        "log": rt.relative(rt.log),
        **{k: v for k, v in info.items() if k not in ("pid", "started_epoch")},
    }
    if running and "started_epoch" in info:
        result["uptime_s"] = round(time.time() - float(info["started_epoch"]), 1)
    busy = info.get("busy_since_epoch")
    result.pop("busy_since_epoch", None)
    if running and isinstance(busy, (int, float)):  # a batch that never ends shows here
        result["busy_s"] = round(time.time() - busy, 1)
    elif not running:
        result["state"] = "stopped"
        result["queue"] = 0
    return result

"""The hook server: keeps the package imported so an agent's hooks answer in milliseconds.

``python -m planning_memory.agents.hook_server`` is started in the background by the first
hook that finds none (``hook_client``). It listens on the client's socket and answers one
request at a time, each exactly as the hook would have in its own process: in the client's
working directory, with the client's environment (time zone included), through the same
``claude_code.answer``; the memory tree is opened afresh for every request, so nothing read
earlier is trusted.

It exits after ``IDLE_EXIT`` seconds without a request, when asked (``hook_client.stop``),
and when a file of the package changed after it started (an upgrade or an edit): it answers
``stale`` so the client runs the hook itself. One server per socket: a second one finds the
first answering and leaves.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import socket
import sys
import time
from pathlib import Path

from planning_memory.agents.claude_code import answer
from planning_memory.agents.hook_client import (
    PACKAGE,
    STOP,
    parse_request,
    runtime_dir,
    socket_path,
)

IDLE_EXIT = 600.0  # seconds without a request (``PMEM_HOOK_SERVER_IDLE`` changes it)
READ_WAIT = 5.0  # for a client's whole request
REQUEST_LIMIT = 120  # seconds: past it the server is gone and the next hook starts another
MAX_REQUEST = 65 * 1024 * 1024


def _newest_source(root: str = PACKAGE) -> float:
    """The newest modification time among the package's Python files and schemas."""
    newest = 0.0
    for folder, _dirs, files in os.walk(root):
        for name in files:
            if name.endswith((".py", ".json")):
                with contextlib.suppress(OSError):
                    newest = max(newest, os.stat(os.path.join(folder, name)).st_mtime)
    return newest


def _read_request(conn: socket.socket) -> tuple[str, str, dict[str, str], bytes] | None:
    conn.settimeout(READ_WAIT)
    chunks, size = [], 0
    while chunk := conn.recv(65536):
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_REQUEST:
            return None
    return parse_request(b"".join(chunks))


def _in_client_world(cwd: str, env: dict[str, str]) -> None:
    """Take the client's working directory and environment (and its time zone)."""
    os.environ.clear()
    os.environ.update(env)
    time.tzset()
    os.chdir(cwd if os.path.isdir(cwd) else "/")


def _serve_one(conn: socket.socket, started: float) -> bool:
    """Answer one client; False when the server should exit (its code changed)."""
    got = _read_request(conn)  # read whole before answering (a close with unread data resets)
    if _newest_source() > started:
        conn.sendall(b"stale\n")
        return False
    if got is None:
        conn.sendall(b"0\n")
        return True
    event, cwd, env, data = got
    if event == STOP:
        conn.sendall(b"0\n")
        return False
    _in_client_world(cwd, env)
    signal.alarm(REQUEST_LIMIT)  # a request stuck this long ends the server (SIGALRM's default)
    done = answer(event, data)
    signal.alarm(0)
    out = done.stdout.encode("utf-8")
    conn.sendall(f"{len(out)}\n".encode() + out + done.stderr.encode("utf-8"))
    return True


def _answering(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(str(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True


def _listen(path: Path) -> socket.socket | None:
    """Bind the socket, unless another server already answers on it."""
    folder = path.parent
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = folder.lstat()
    if info.st_uid != os.getuid() or (info.st_mode & 0o077 and str(folder) != runtime_dir()):
        return None  # not ours, or others may enter it: never listen there
    with open(folder / f"{path.name}.lock", "a") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        if _answering(path):
            return None
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # a dead server's socket
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(path))
        server.listen(64)
    return server


def serve(path: Path | None = None, idle: float = IDLE_EXIT) -> int:
    """Answer hooks on ``path`` until idle for ``idle`` seconds or the code changes."""
    where = path or Path(socket_path())
    with contextlib.suppress(ValueError):
        idle = float(os.environ.get("PMEM_HOOK_SERVER_IDLE", idle))
    started = time.time()
    server = _listen(where)
    if server is None:
        return 0
    mine = where.stat().st_ino
    server.settimeout(idle)
    try:
        while True:
            try:
                conn, _ = server.accept()
            except TimeoutError:
                break
            with conn:
                try:
                    going_on = _serve_one(conn, started)
                except OSError:
                    going_on = True  # the client went away; the next one is served
            if not going_on:
                break
    finally:
        server.close()
        with contextlib.suppress(OSError):
            if where.stat().st_ino == mine:
                where.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(serve())

"""The hook server: keeps the package imported so an agent's hooks answer in milliseconds.

``python -m planning_memory.agents.hook_server`` is started in the background by the first
hook that finds none (``hook_client``). It listens on the client's socket, in a folder only
its user may enter, reads each request whole, and answers only its own user's processes
(``SO_PEERCRED``). A hook is answered here, one at a time (a client that finds it busy for
``hook_client.BUSY_WAIT`` answers its hook itself), in the client's working directory,
with the client's umask and the environment a hook reads (time zone included), through the
same ``claude_code.answer``; the memory tree is opened afresh for every hook, and what stays
between hooks is pure caches (rendered items, similarity, stemming), which keep the next hook
quick. Commands never run here: each ``pmem`` command runs in its own process.

It is started through ``background``, with the default signal dispositions (a server
started from ``nohup ... &`` would otherwise ignore SIGINT and SIGHUP, and pass that on to
what it starts). Once listening, it
answers each hook once on a throwaway memory tree (``_warm_up``), so that what a process
builds on first use (compiled schema checks, regular expressions, the secret table) is built
before the first real hook. It exits after ``IDLE_EXIT`` seconds without a request, when
asked (``hook_client.stop``), and when a file of the package changed after it started (an
upgrade or an edit): it answers ``stale`` so the client answers the hook itself. One server
per socket: a second one finds the first answering and leaves.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import socket
import sys
import time
from pathlib import Path

from planning_memory.agents.claude_code import answer
from planning_memory.agents.hook_client import (
    PACKAGE,
    PING,
    READY,
    STOP,
    Request,
    parse_request,
    peer_uid,
    private,
    socket_path,
)
from planning_memory.memory import Memory, next_request

IDLE_EXIT = 600.0  # seconds without a request (``PMEM_SERVER_IDLE`` changes it)
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


def _read_request(conn: socket.socket) -> Request | None:
    """The request on ``conn``; None when it is not one or comes from another user (root
    may connect anywhere: nothing runs for it)."""
    conn.settimeout(READ_WAIT)
    chunks, size = [], 0
    while chunk := conn.recv(65536):
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_REQUEST:
            return None
    got = parse_request(b"".join(chunks))
    return got if got is not None and peer_uid(conn) == os.getuid() else None


def _in_client_world(request: Request) -> None:
    """Take the client's working directory, umask and environment (and its time zone); the
    ``PYTHON*`` variables stay the server's, which are the client's (its socket is named
    after them), so what a hook starts in the background runs the same package."""
    python = {key: value for key, value in os.environ.items() if key.startswith("PYTHON")}
    os.environ.clear()
    os.environ.update(request.env)
    os.environ.update(python)
    time.tzset()
    next_request(request.umask)
    os.chdir(request.cwd if os.path.isdir(request.cwd) else "/")


def _serve_one(conn: socket.socket, started: float) -> bool:
    """Take one client; False when the server should exit (asked to, or its code changed)."""
    conn.sendall(READY)  # the client sends its request only now (``hook_client.BUSY_WAIT``)
    got = _read_request(conn)  # read whole before answering (a close with unread data resets)
    if _newest_source() > started:
        conn.sendall(b"stale\n")
        return False
    if got is None or got.event in (PING, STOP):
        conn.sendall(b"0\n")
        return not (got and got.event == STOP)
    _answer_hook(conn, got)
    return True


def _answer_hook(conn: socket.socket, request: Request) -> None:
    """A hook, answered here: its caches (rendered items, similarity, stemming) stay warm for
    the next one, which a forked worker would lose (6-16 ms a hook at 10k records)."""
    _in_client_world(request)
    signal.alarm(REQUEST_LIMIT)  # a hook stuck this long ends the server (SIGALRM's default)
    done = answer(request.event, request.data)
    signal.alarm(0)
    out = done.stdout.encode("utf-8")
    conn.sendall(f"{len(out)}\n".encode() + out + done.stderr.encode("utf-8"))


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
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700)
    if not private(str(folder)):
        return None  # a link, another user's, or others may enter it: never listen there
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
    with os.fdopen(os.open(folder / f"{path.name}.lock", flags, 0o600), "a") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        if _answering(path):
            return None
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # a dead server's socket
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(path))
        server.listen(64)
    return server


_WARM_SESSION = "00000000-0000-4000-8000-000000000000"
_WARM_HOOKS = (
    ("SessionStart", {"hook_event_name": "SessionStart", "source": "startup"}),
    ("UserPromptSubmit", {"prompt": "Always run the linter before committing"}),
    ("UserPromptSubmit", {"prompt": "fix the retry in the payment webhook handler"}),
    ("PostToolUse", {"tool_name": "Edit", "tool_input": {"file_path": "src/app.py"}}),
    ("Stop", {"stop_hook_active": False}),
)


def _warm_up() -> None:
    """Save, search, gather context and answer each hook once in a throwaway memory tree,
    with background work off. Only an optimisation: a failure here changes no answer."""
    import tempfile

    before = os.environ.get("PMEM_BACKGROUND")
    os.environ["PMEM_BACKGROUND"] = "0"
    try:
        with contextlib.suppress(Exception), tempfile.TemporaryDirectory(prefix="pmem-") as tmp:
            mem = Memory.init(tmp)
            mem.save("Use pnpm, never npm", "pattern", description="the lockfile is pnpm's")
            mem.save("Ran migrations late", "mistake", description="run them before tests")
            mem.save("Tokens expire after an hour", "learning", learned="refresh at 50 minutes")
            mem.search("pnpm lockfile")
            mem.context("add a dependency")
            for event, extra in _WARM_HOOKS:
                payload = {"session_id": _WARM_SESSION, "cwd": tmp, **extra}
                answer(event, json.dumps(payload).encode())
    finally:
        if before is None:
            os.environ.pop("PMEM_BACKGROUND", None)
        else:
            os.environ["PMEM_BACKGROUND"] = before


def serve(path: Path | None = None, idle: float = IDLE_EXIT) -> int:
    """Answer hooks on ``path`` until idle for ``idle`` seconds or the code changes."""
    where = path or Path(socket_path())
    with contextlib.suppress(ValueError):
        idle = float(os.environ.get("PMEM_SERVER_IDLE", idle))
    started = time.time()
    server = _listen(where)
    if server is None:
        return 0
    _warm_up()
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
                    going = _serve_one(conn, started)
                except OSError:
                    going = True  # the client went away; the next one is served
            if not going:
                break
    finally:
        server.close()
        with contextlib.suppress(OSError):
            if where.stat().st_ino == mine:
                where.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(serve())

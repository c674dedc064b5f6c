"""The pmem server: keeps the package imported so an agent's hooks and the frequent ``pmem``
commands answer in milliseconds.

``python -m planning_memory.agents.hook_server`` is started in the background by the first
hook or served command that finds none (``hook_client``). It listens on the client's socket,
and reads each request whole:

- A hook is answered here, one at a time, in the client's working directory and environment
  (time zone included), through the same ``claude_code.answer``; the memory tree is opened
  afresh for every hook, and what stays between hooks is pure caches (rendered items,
  similarity, stemming), which keep the next hook quick.
- A command runs in a worker forked for it, so a slow one (a save waiting for the memory's
  lock) holds up nothing and nothing it changes stays. The worker takes the client's
  standard streams (passed over the socket), working directory, environment, umask and
  locale, sends its process id (the client relays Ctrl-C and other signals to it), runs
  ``pmem ARGS`` exactly as ``planning_memory.cli.base.main`` would in its own process, and
  sends the exit code.

Once listening, it imports what the served commands use (``WARM``) and runs them once on a
throwaway memory tree (``_warm_up``), so that what a process builds on first use (compiled
schema checks, regular expressions, the secret table) is built once; every worker starts from
that state. It exits after ``IDLE_EXIT`` seconds without a request, when asked
(``hook_client.stop``), and when a file of the package changed after it started (an upgrade
or an edit): it answers ``stale`` so the client runs the request itself. One server per
socket: a second one finds the first answering and leaves.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib
import json
import os
import signal
import socket
import struct
import sys
import time
import traceback
from pathlib import Path
from typing import NamedTuple, NoReturn

from planning_memory.agents.claude_code import answer
from planning_memory.agents.hook_client import (
    COMMAND,
    PACKAGE,
    PING,
    STOP,
    parse_request,
    runtime_dir,
    socket_path,
)

IDLE_EXIT = 600.0  # seconds without a request (``PMEM_SERVER_IDLE`` changes it)
READ_WAIT = 5.0  # for a client's whole request
REQUEST_LIMIT = 120  # seconds: past it the server is gone and the next hook starts another
MAX_REQUEST = 65 * 1024 * 1024
INTERNAL_ERROR = 70

# imported before serving: the modules the served commands load (``cli.SERVED``)
WARM = (
    "planning_memory.cli.base",
    "planning_memory.cli.contextual",
    "planning_memory.cli.core",
    "planning_memory.cli.learning",
    "planning_memory.cli.longterm",
    "planning_memory.cli.memories",
    "planning_memory.cli.session",
    "planning_memory.cli.views",
    "planning_memory.memory",
    "planning_memory.manager",
    "planning_memory.longterm.lessons",
    "planning_memory.longterm.level",
    "planning_memory.views.workflow",
    "planning_memory.views.claude",
    "planning_memory.search.ranking",
    "planning_memory.search.upkeep",
    "planning_memory.search.repo_documents",
    "planning_memory.sessions.api",
    "planning_memory.sessions.briefing",
    "planning_memory.validate",
)


def _newest_source(root: str = PACKAGE) -> float:
    """The newest modification time among the package's Python files and schemas."""
    newest = 0.0
    for folder, _dirs, files in os.walk(root):
        for name in files:
            if name.endswith((".py", ".json")):
                with contextlib.suppress(OSError):
                    newest = max(newest, os.stat(os.path.join(folder, name)).st_mtime)
    return newest


class Request(NamedTuple):
    """One client's request, as ``hook_client.request`` sent it."""

    event: str
    cwd: str
    env: dict[str, str]
    data: bytes
    fds: list[int]  # a command's standard streams; empty for anything else


def _read_request(conn: socket.socket) -> Request | None:
    """The request on ``conn``; None when it is not one or comes from another user (root
    may connect anywhere: nothing runs for it). The descriptors come with the first bytes
    and are kept for a command only (its standard streams)."""
    conn.settimeout(READ_WAIT)
    first, fds, _flags, _addr = socket.recv_fds(conn, 65536, 3)
    chunks, size = [first], len(first)
    while first and (chunk := conn.recv(65536)):
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_REQUEST:
            break
    got = parse_request(b"".join(chunks)) if size <= MAX_REQUEST else None
    if got is not None and _peer_uid(conn) != os.getuid():
        got = None
    if got is None or got[0] != COMMAND:
        _close(fds)
        fds = []
    return None if got is None else Request(*got, fds)


def _peer_uid(conn: socket.socket) -> int:
    _pid, uid, _gid = struct.unpack(
        "3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
    )
    return int(uid)


def _close(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


def _in_client_world(cwd: str, env: dict[str, str]) -> None:
    """Take the client's working directory and environment (and its time zone)."""
    os.environ.clear()
    os.environ.update(env)
    time.tzset()
    os.chdir(cwd if os.path.isdir(cwd) else "/")


def _serve_one(conn: socket.socket, listener: socket.socket, started: float) -> int | None:
    """Take one client: the process id of its worker (0 when none was needed), or None when
    the server should exit (asked to, or its code changed)."""
    got = _read_request(conn)  # read whole before answering (a close with unread data resets)
    if _newest_source() > started:
        conn.sendall(b"stale\n")
        _close(got.fds if got else [])
        return None
    if got is None or got.event in (PING, STOP):
        conn.sendall(b"0\n")
        return None if got and got.event == STOP else 0
    if got.event != COMMAND:
        _answer_hook(conn, got)
        return 0
    pid = os.fork()
    if pid == 0:
        _work(conn, listener, got)
    _close(got.fds)
    return pid


def _answer_hook(conn: socket.socket, request: Request) -> None:
    """A hook, answered here: its caches (rendered items, similarity, stemming) stay warm for
    the next one, which a forked worker would lose (6-16 ms a hook at 10k records)."""
    event, cwd, env, data, _fds = request
    _in_client_world(cwd, env)
    signal.alarm(REQUEST_LIMIT)  # a hook stuck this long ends the server (SIGALRM's default)
    done = answer(event, data)
    signal.alarm(0)
    out = done.stdout.encode("utf-8")
    conn.sendall(f"{len(out)}\n".encode() + out + done.stderr.encode("utf-8"))


def _work(conn: socket.socket, listener: socket.socket, request: Request) -> NoReturn:
    """A command's worker (a forked child): run it, then exit without ever returning to the
    server's loop."""
    code = INTERNAL_ERROR
    try:
        listener.close()
        _event, cwd, env, data, fds = request
        _in_client_world(cwd, env)
        code = _run_command(conn, data, fds)
    except BaseException:  # a worker must never fall back into the server's loop
        with contextlib.suppress(Exception):
            traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _run_command(conn: socket.socket, data: bytes, fds: list[int]) -> int:
    """``pmem ARGS`` with the client's streams, umask and locale; its exit code, which the
    client also receives."""
    umask, _argv0, *args = (os.fsdecode(part) for part in data.split(b"\0"))
    if len(fds) != 3:
        _close(fds)
        return INTERNAL_ERROR
    for target, fd in enumerate(fds):  # received ones are >= 3: the server's 0-2 are open
        os.dup2(fd, target)
        os.close(fd)
    os.umask(int(umask, 8))
    sys.argv = [_argv0, *args]
    _client_text_streams()
    try:
        conn.sendall(b"%d\n" % os.getpid())
    except OSError:
        return 0  # the client gave up before this worker started: it runs the command itself
    code = _exit_code(args)
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    with contextlib.suppress(OSError):
        conn.sendall(b"exit %d\n" % code)
    return code


def _exit_code(args: list[str]) -> int:
    from planning_memory.cli import run_in_process  # not ``main``: that would ask a server

    try:
        run_in_process(args)
    except SystemExit as done:
        if done.code is None or isinstance(done.code, int):
            return done.code or 0
        print(done.code, file=sys.stderr)
        return 1
    return 0


def _client_text_streams() -> None:
    """``sys.stdin`` / ``stdout`` / ``stderr`` over the client's streams, encoded as Python
    would encode them in the client's locale (a C locale means UTF-8, as Python coerces it)."""
    import codecs
    import locale

    encoding = sys.stdout.encoding  # the server's: PYTHONIOENCODING / PYTHONUTF8 (same key)
    if not os.environ.get("PYTHONIOENCODING") and os.environ.get("PYTHONUTF8") != "1":
        with contextlib.suppress(locale.Error):
            locale.setlocale(locale.LC_CTYPE, "")
        encoding = locale.getpreferredencoding(False)
        if codecs.lookup(encoding).name == "ascii":
            encoding = "utf-8"
    errors = sys.stdout.errors
    sys.stdin = open(0, encoding=encoding, errors=errors, closefd=False)  # noqa: SIM115
    lines = 1 if os.isatty(1) else -1  # line-buffered on a terminal, as Python does
    sys.stdout = open(1, "w", lines, encoding, errors, closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", 1, encoding, "backslashreplace", closefd=False)  # noqa: SIM115


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
    with background work off. Only an optimisation: a failure here changes nothing a worker
    does."""
    import tempfile

    from planning_memory.memory import Memory

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


def _reap(workers: set[int]) -> None:
    """Collect the exit status of the workers that are done (no zombies)."""
    for pid in list(workers):
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(pid, os.WNOHANG)[0] == 0:
                continue
        workers.discard(pid)


def serve(path: Path | None = None, idle: float = IDLE_EXIT) -> int:
    """Answer hooks and commands on ``path`` until idle for ``idle`` seconds or the code
    changes."""
    where = path or Path(socket_path())
    with contextlib.suppress(ValueError):
        idle = float(os.environ.get("PMEM_SERVER_IDLE", idle))
    started = time.time()
    server = _listen(where)
    if server is None:
        return 0
    for name in WARM:
        importlib.import_module(name)
    _warm_up()
    mine = where.stat().st_ino
    server.settimeout(idle)
    workers: set[int] = set()
    try:
        while True:
            try:
                conn, _ = server.accept()
            except TimeoutError:
                break
            with conn:
                try:
                    worker = _serve_one(conn, server, started)
                except OSError:
                    worker = 0  # the client went away; the next one is served
            _reap(workers)
            if worker is None:
                break
            if worker:
                workers.add(worker)
    finally:
        server.close()
        with contextlib.suppress(OSError):
            if where.stat().st_ino == mine:
                where.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(serve())

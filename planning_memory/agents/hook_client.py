"""The front door of hooks: ``pmem hook claude-code EVENT`` hands its work to the hook server
when one is running, else answers in this process and starts one for the next.

An agent runs a hook as a new process many times a minute; most of its time would go to
importing the package. The hook server (``hook_server``) keeps it imported: a client that only
needs the standard library sends its request over a Unix socket and prints the answer, the one
this process would have given (the same code runs in the client's directory, with the client's
umask and the part of its environment a hook reads).

- The request is the event, the working directory, the umask, the environment a hook reads
  (``HOOK_ENV``: never the rest, which may hold secrets) and the hook's input, as bytes
  (``request``); the answer is the output's length, the output, then the errors.
- The socket lives in ``$XDG_RUNTIME_DIR`` when that is a folder of this user's that only
  this user can enter (else ``/tmp/pmem-<uid>``, under the same rule), named after this
  interpreter and package, so two installs never share one. The folder and the socket are
  checked with ``lstat`` (a link is refused), and the process at the other end with
  ``SO_PEERCRED``: a server of another user never receives a byte.
- The socket's name also holds the ``PYTHON*`` variables (``PYTHONPATH``, ...), which
  shape an interpreter at start-up: a client whose differ has its own server.
- The server answers one hook at a time. It sends ``READY`` when it takes a client, and the
  client sends its request only then: a client that waited ``BUSY_WAIT`` for it answers the
  hook itself (so hooks fired together never queue behind one that waits for the memory's
  lock), and the server, finding no request, runs nothing.
- No server, or one that refuses: the hook runs here, then starts a server in the
  background (detached, its output to nowhere, so the agent never waits for it).
- A server that accepted the input but fails to answer within ``ANSWER_WAIT`` is not asked
  twice (the input may be half recorded): the hook prints nothing and exits 0.
- ``PMEM_SERVER=0`` turns the server off: every hook runs in its own process.

This module imports nothing from the package outside the hook's own entry points, and only
the few standard modules a client needs.
"""

from __future__ import annotations

import _socket  # the C module: ``socket`` would also import enum
import os
import sys
import zlib

ENV_SWITCH = "PMEM_SERVER"
ANSWER_WAIT = 12.0  # seconds: under the shortest installed hook timeout (15 s)
CONNECT_WAIT = 0.5
BUSY_WAIT = 1.0  # seconds a hook waits for a server busy with another before answering itself
READY = b"+"  # the server's first byte: it is reading this client's request now
busy = False  # the last request found a server, busy with another client
MAX_INPUT = 64 * 1024 * 1024
# what a hook reads of its environment: the home, state and config folders, the time zone and
# locale, git's and the agents' variables, ``PATH`` (git) and pmem's own switches
HOOK_ENV = frozenset({"HOME", "PATH", "TZ", "LANG", "LANGUAGE", "TMPDIR", "USER", "LOGNAME"})
HOOK_ENV_PREFIXES = ("PMEM_", "XDG_", "LC_", "GIT_", "CLAUDE_", "CODEX_", "GEMINI_")
_S_IFMT, _S_IFDIR, _S_IFSOCK = 0o170000, 0o040000, 0o140000
PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "1").strip().lower() not in ("0", "off", "false", "no")


def runtime_dir() -> str:
    """The folder for the socket: ``$XDG_RUNTIME_DIR`` when it is private (``private``),
    else ``/tmp/pmem-<uid>`` (which must be private too before it is used)."""
    given = os.environ.get("XDG_RUNTIME_DIR", "")
    if given and private(given):
        return given
    return f"/tmp/pmem-{os.getuid()}"


def private(folder: str) -> bool:
    """A folder (not a link to one) of this user's that no one else may enter."""
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    return (
        info.st_mode & _S_IFMT == _S_IFDIR
        and info.st_uid == os.getuid()
        and not info.st_mode & 0o077
    )


def socket_path() -> str:
    """The server's socket for this interpreter, this copy of the package and these
    ``PYTHON*`` variables (pathlib and hashlib are left out: each would cost a hook a few
    milliseconds)."""
    shaping = sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith("PYTHON"))
    key = "\0".join([sys.executable, PACKAGE, *shaping]).encode()
    return os.path.join(runtime_dir(), f"pmem-hooks-{zlib.crc32(key):08x}.sock")


STOP = "!stop"  # not a hook event: asks the server to exit
PING = "!ping"  # not a hook event: is a server answering here?


def hook_env(env: dict[str, str] | os._Environ[str]) -> dict[str, str]:
    """The part of ``env`` a hook reads (``HOOK_ENV``): never tokens or keys."""
    return {k: v for k, v in env.items() if k in HOOK_ENV or k.startswith(HOOK_ENV_PREFIXES)}


def request(event: str, data: bytes) -> bytes:
    """The request: the length of a header, the header (the event, the working directory, the
    umask in octal and the hook's environment, NUL-separated: none of them can hold a NUL),
    then the hook's input as it arrived. No JSON here: its module would cost every hook the
    regular-expression engine."""
    umask = os.umask(0o077)
    os.umask(umask)
    env = (f"{key}={value}" for key, value in hook_env(os.environ).items())
    fields = [event, os.getcwd(), f"{umask:o}", *env]
    header = b"\0".join(os.fsencode(field) for field in fields)
    return b"%d\n" % len(header) + header + data


class Request:
    """A parsed ``request``: ``event``, ``cwd``, ``umask``, ``env`` and the input ``data``."""

    __slots__ = ("cwd", "data", "env", "event", "umask")

    def __init__(self, event: str, cwd: str, umask: int, env: dict[str, str], data: bytes):
        self.event, self.cwd, self.umask, self.env, self.data = event, cwd, umask, env, data


def parse_request(raw: bytes) -> Request | None:
    """The ``Request`` in ``raw``; None when it is not one."""
    size, sep, rest = raw.partition(b"\n")
    if not sep or not size.isdigit() or int(size) > len(rest):
        return None
    fields = [os.fsdecode(f) for f in rest[: int(size)].split(b"\0")]
    if len(fields) < 3 or not fields[2] or any(c not in "01234567" for c in fields[2]):
        return None
    event, cwd, umask, *env = fields
    pairs = hook_env(dict(item.partition("=")[::2] for item in env))
    return Request(event, cwd, int(umask, 8) & 0o777, pairs, rest[int(size) :])


def peer_uid(conn: _socket.socket) -> int:
    """The user of the process at the other end of a Unix socket (``SO_PEERCRED``)."""
    creds = conn.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
    return int.from_bytes(creds[4:8], sys.byteorder)


def ours(path: str) -> bool:
    """A socket (not a link) of this user's, in a private folder: ``sudo`` may keep another
    user's runtime folder, and another user may make ``/tmp/pmem-<uid>`` first."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if info.st_mode & _S_IFMT != _S_IFSOCK or info.st_uid != os.getuid():
        return False
    return private(os.path.dirname(path))


def stop() -> bool:
    """Ask the running server to exit; False when none answered."""
    return _ask(STOP, b"") is not None


def ping() -> bool:
    """Whether a server answers on this client's socket (without running anything)."""
    return _ask(PING, b"") is not None


def forward(event: str, data: bytes) -> tuple[bytes, bytes] | None:
    """The server's answer ``(stdout, stderr)``; ``(b"", b"")`` when it took the input but
    did not answer in time; None when no server took it (answer the hook here)."""
    return _ask(event, data, BUSY_WAIT)


def _ask(event: str, data: bytes, busy_wait: float = ANSWER_WAIT) -> tuple[bytes, bytes] | None:
    conn = _send(event, data, busy_wait)
    if conn is None:
        return None
    chunks = []
    try:
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    except OSError:
        return b"", b""
    finally:
        conn.close()
    reply = b"".join(chunks)
    head, _, rest = reply.partition(b"\n")
    if head == b"stale":
        return None  # the server's code changed under it; it is exiting
    try:
        out_size = int(head)
    except ValueError:
        return b"", b""
    return rest[:out_size], rest[out_size:]


def _send(event: str, data: bytes, busy_wait: float) -> _socket.socket | None:
    """A connection to this user's server that took the request; None when no server took it
    (none is listening, the socket or its folder is not this user's alone, the process
    listening is another user's, it stayed busy for ``busy_wait`` seconds, or this
    process's working directory is gone)."""
    path = socket_path()
    if not ours(path):
        return None
    global busy
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.settimeout(CONNECT_WAIT)
        conn.connect(path)
        if peer_uid(conn) != os.getuid():
            raise PermissionError("the server is another user's")  # not a byte sent
        conn.settimeout(busy_wait)
        try:
            taken = conn.recv(1) == READY
        except TimeoutError:
            busy = True
            raise
        if not taken:
            raise ConnectionError("the server did not take this client")
        conn.settimeout(ANSWER_WAIT)
        conn.sendall(request(event, data))
        conn.shutdown(_socket.SHUT_WR)
    except OSError:
        conn.close()
        return None
    return conn


def detach(module: str, *args: str, cwd: str = "/") -> None:
    """Run ``python -m module args`` in the background, detached from this hook and its pipes
    (the agent waits for the hook's output to close, never for this)."""
    from planning_memory.memory import in_background  # only when starting one

    in_background(module, *args, cwd=cwd)


def spawn() -> None:
    """Start a pmem server in the background."""
    detach("planning_memory.agents.hook_server")


def main(event: str) -> int:
    """``pmem hook claude-code EVENT``: always exit code 0 (a hook never blocks the agent)."""
    data = sys.stdin.buffer.read(MAX_INPUT + 1)
    served = forward(event, data) if enabled() else None
    if served is None:
        from planning_memory.agents.claude_code import answer

        done = answer(event, data)
        out, err = done.stdout.encode("utf-8"), done.stderr.encode("utf-8")
    else:
        out, err = served
    sys.stdout.buffer.write(out)
    sys.stderr.buffer.write(err)
    sys.stdout.flush()
    sys.stderr.flush()
    if served is None and enabled() and not busy:
        spawn()
    return 0

"""The front door of hooks and served commands: ``pmem hook claude-code EVENT`` and the
frequent ``pmem`` commands (``cli.SERVED``) hand their work to the pmem server when one is
running, else run in this process and start one for the next.

An agent runs a hook, or ``pmem save``, as a new process many times a minute; most of its time
would go to importing the package. The pmem server (``hook_server``) keeps it imported: a
client that only needs the standard library sends its request over a Unix socket, and the
server answers it (a command in a worker forked for it). The answer is the one this process
would have given (the same code runs in the client's directory and environment).

- A hook (``forward``) sends the event and the hook's input and prints the answer.
- A command (``run_command``) sends its arguments and umask with its standard streams
  themselves, so the command reads and writes the client's terminal, pipes or files directly;
  the client relays Ctrl-C (and SIGTERM, SIGHUP, SIGQUIT) to the worker and exits with its
  exit code.

- The request is the event, the working directory, the environment and the input, as bytes
  (``request``); the answer is the output's length, the output, then the errors.
- The socket lives in ``$XDG_RUNTIME_DIR`` (else ``/tmp/pmem-<uid>``, a folder only its user
  can enter), named after this interpreter and package, so two installs never share one.
- The socket's name also holds the ``PYTHON*`` variables (``PYTHONPATH``, ...), which
  shape an interpreter at start-up: a client whose differ has its own server.
- No server, or one that refuses: the hook or command runs here, then starts a server in the
  background (detached, its output to nowhere, so the agent never waits for it).
- A server that accepted the input but fails to answer within ``ANSWER_WAIT`` is not asked
  twice (the input may be half recorded): the hook prints nothing and exits 0.
- ``PMEM_SERVER=0`` turns the server off: every hook and command runs in its own process.

This module imports nothing from the package outside the hook's own entry points, and only
the few standard modules a client needs.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # the C modules: ``socket`` and ``signal``
import _socket  # would also import enum
import os
import sys
import zlib

ENV_SWITCH = "PMEM_SERVER"
ANSWER_WAIT = 12.0  # seconds: under the shortest installed hook timeout (15 s)
CONNECT_WAIT = 0.5
START_WAIT = 10.0  # seconds for a command's worker to start (a server still importing)
MAX_INPUT = 64 * 1024 * 1024
PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "1").strip().lower() not in ("0", "off", "false", "no")


def runtime_dir() -> str:
    """A folder only this user can enter, for the socket."""
    given = os.environ.get("XDG_RUNTIME_DIR", "")
    if given and os.path.isdir(given) and os.access(given, os.W_OK):
        return given
    return f"/tmp/pmem-{os.getuid()}"


def socket_path() -> str:
    """The server's socket for this interpreter, this copy of the package and these
    ``PYTHON*`` variables (pathlib and hashlib are left out: each would cost a hook a few
    milliseconds)."""
    shaping = sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith("PYTHON"))
    key = "\0".join([sys.executable, PACKAGE, *shaping]).encode()
    return os.path.join(runtime_dir(), f"pmem-hooks-{zlib.crc32(key):08x}.sock")


STOP = "!stop"  # not a hook event: asks the server to exit
PING = "!ping"  # not a hook event: is a server answering here?
COMMAND = "!pmem"  # not a hook event: runs a pmem command with the client's streams
STREAMS = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2))  # as C ints
RELAYED = (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP, _signal.SIGQUIT)


def request(event: str, data: bytes) -> bytes:
    """The request: the length of a header, the header (the event, the working directory and
    the environment, NUL-separated: none of them can hold a NUL), then the hook's input as it
    arrived. No JSON here: its module would cost every hook the regular-expression engine."""
    fields = [event, os.getcwd(), *(f"{key}={value}" for key, value in os.environ.items())]
    header = b"\0".join(os.fsencode(field) for field in fields)
    return b"%d\n" % len(header) + header + data


def parse_request(raw: bytes) -> tuple[str, str, dict[str, str], bytes] | None:
    """``(event, cwd, environment, input)`` of a ``request``; None when it is not one."""
    size, sep, rest = raw.partition(b"\n")
    if not sep or not size.isdigit() or int(size) > len(rest):
        return None
    fields = [os.fsdecode(f) for f in rest[: int(size)].split(b"\0")]
    if len(fields) < 2:
        return None
    event, cwd, *env = fields
    pairs = dict(item.partition("=")[::2] for item in env)
    return event, cwd, pairs, rest[int(size) :]


def ours(path: str) -> bool:
    """A socket this user's server made (``sudo`` may keep another user's runtime folder:
    a command must never run as someone else)."""
    try:
        return os.stat(path).st_uid == os.getuid()
    except OSError:
        return False


def stop() -> bool:
    """Ask the running server to exit; False when none answered."""
    return forward(STOP, b"") is not None


def ping() -> bool:
    """Whether a server answers on this client's socket (without running anything)."""
    return forward(PING, b"") is not None


def forward(event: str, data: bytes) -> tuple[bytes, bytes] | None:
    """The server's answer ``(stdout, stderr)``; ``(b"", b"")`` when it accepted the input
    but did not answer in time; None when no server took it (run the hook here)."""
    conn = _send(event, data, ANSWER_WAIT)
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


def run_command(args: list[str]) -> int | None:
    """Run ``pmem ARGS`` in a worker of the server, with this process's standard streams:
    its exit code, or None when no server took it (run it here)."""
    umask = os.umask(0o077)
    os.umask(umask)
    given = [f"{umask:o}", sys.argv[0], *args]
    if any("\0" in arg for arg in given):
        return None  # cannot be sent (and no shell passes one)
    conn = _send(COMMAND, b"\0".join(os.fsencode(arg) for arg in given), START_WAIT, True)
    if conn is None:
        return None
    try:
        try:
            head, rest = _first_line(conn)
        except OSError:
            return None  # no worker in time: it will not run (its first write would fail)
        if not head.isdigit():
            return None  # ``stale``: the server's code changed under it; it is exiting
        _relay_signals(int(head))
        conn.settimeout(None)
        try:
            while chunk := conn.recv(256):
                rest += chunk
        except OSError:
            pass
    finally:
        conn.close()
    status = rest.strip()
    if status.startswith(b"exit ") and status[5:].isdigit():
        return int(status[5:])
    sys.stderr.write(
        "pmem: error: the pmem server's worker stopped without an exit status "
        "(PMEM_SERVER=0 runs each command in its own process)\n"
    )
    return 70


def _send(event: str, data: bytes, wait: float, streams: bool = False) -> _socket.socket | None:
    """A connection to this user's server that took the request (and, with ``streams``, this
    process's standard streams), its timeout ``wait``; None when no server took it (none is
    listening, or this process's working directory is gone)."""
    path = socket_path()
    if not ours(path):
        return None
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.settimeout(CONNECT_WAIT)
        conn.connect(path)
        conn.settimeout(wait)
        raw = request(event, data)
        rights = [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, STREAMS)] if streams else []
        sent = conn.sendmsg([raw], rights)
        conn.sendall(raw[sent:])
        conn.shutdown(_socket.SHUT_WR)
    except OSError:
        conn.close()
        return None
    return conn


def _first_line(conn: _socket.socket) -> tuple[bytes, bytes]:
    """The first line the server sends, and what came after it."""
    got = b""
    while b"\n" not in got:
        chunk = conn.recv(256)
        if not chunk:
            break
        got += chunk
    head, _, rest = got.partition(b"\n")
    return head, rest


def _relay_signals(pid: int) -> None:
    """Ctrl-C and the usual stop signals go to the worker running the command."""

    def relay(signum: int, _frame: object) -> None:
        try:  # noqa: SIM105 - contextlib would cost every client its import
            os.kill(pid, signum)
        except OSError:
            pass  # the worker is done

    for signum in RELAYED:
        _signal.signal(signum, relay)


def detach(module: str, *args: str, cwd: str = "/") -> None:
    """Run ``python -m module args`` in the background, detached from this hook and its pipes
    (the agent waits for the hook's output to close, never for this)."""
    from planning_memory.memory import Memory  # only when starting one

    Memory.in_background(module, *args, cwd=cwd)


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
    if served is None and enabled():
        spawn()
    return 0

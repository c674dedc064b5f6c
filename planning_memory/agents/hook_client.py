"""The hook's front door: ``pmem hook claude-code EVENT`` hands its input to the hook server
when one is running, else answers in this process and starts one for the next hook.

An agent runs a hook as a new process many times a minute; most of its time would go to
importing the package. The hook server (``hook_server``) keeps it imported: a client that
only needs the standard library sends the event, its working directory, its environment and
the hook's input over a Unix socket, and prints what comes back. The answer is the one this
process would have given (the server runs the same ``claude_code.answer`` in the client's
directory and environment).

- The request is the event, the working directory, the environment and the input, as bytes
  (``request``); the answer is the output's length, the output, then the errors.
- The socket lives in ``$XDG_RUNTIME_DIR`` (else ``/tmp/pmem-<uid>``, a folder only its user
  can enter), named after this interpreter and package, so two installs never share one.
- No server, or one that refuses: the hook runs here, then starts a server in the
  background (detached, its output to nowhere, so the agent never waits for it).
- A server that accepted the input but fails to answer within ``ANSWER_WAIT`` is not asked
  twice (the input may be half recorded): the hook prints nothing and exits 0.
- ``PMEM_HOOK_SERVER=0`` turns the server off: every hook runs in its own process.

This module imports nothing from the package outside the hook's own entry points, and only
the few standard modules a client needs.
"""

from __future__ import annotations

import _socket  # the C module: ``socket`` would also import enum and selectors at each hook
import os
import sys
import zlib

ENV_SWITCH = "PMEM_HOOK_SERVER"
ANSWER_WAIT = 12.0  # seconds: under the shortest installed hook timeout (15 s)
CONNECT_WAIT = 0.5
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
    """The server's socket for this interpreter and this copy of the package (pathlib and
    hashlib are left out: each would cost a hook a few milliseconds)."""
    key = f"{sys.executable}\0{PACKAGE}".encode()
    return os.path.join(runtime_dir(), f"pmem-hooks-{zlib.crc32(key):08x}.sock")


STOP = "!stop"  # not a hook event: asks the server to exit


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


def stop() -> bool:
    """Ask the running hook server to exit; False when none answered."""
    return forward(STOP, b"") is not None


def forward(event: str, data: bytes) -> tuple[bytes, bytes] | None:
    """The server's answer ``(stdout, stderr)``; ``(b"", b"")`` when it accepted the input
    but did not answer in time; None when no server took it (run the hook here)."""
    path = socket_path()
    if not os.path.exists(path):
        return None
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.settimeout(CONNECT_WAIT)
        try:
            conn.connect(path)
            conn.settimeout(ANSWER_WAIT)
            conn.sendall(request(event, data))
            conn.shutdown(_socket.SHUT_WR)
        except OSError:
            return None  # not listening, or gone before it read the input
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


def detach(module: str, *args: str, cwd: str = "/") -> None:
    """Run ``python -m module args`` in the background, detached from this hook and its pipes
    (the agent waits for the hook's output to close, never for this)."""
    from planning_memory.memory import Memory  # only when starting one

    Memory.in_background(module, *args, cwd=cwd)


def spawn() -> None:
    """Start a hook server in the background."""
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

"""The hook's front door: ``pmem hook claude-code EVENT`` hands its input to the hook server
when one is running, else answers in this process and starts one for the next hook.

An agent runs a hook as a new process many times a minute; most of its time would go to
importing the package. The hook server (``hook_server``) keeps it imported: a client that
only needs the standard library sends the event, its working directory, its environment and
the hook's input over a Unix socket, and prints what comes back. The answer is the one this
process would have given (the server runs the same ``claude_code.answer`` in the client's
directory and environment).

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

import hashlib
import json
import os
import socket
import sys
from pathlib import Path

ENV_SWITCH = "PMEM_HOOK_SERVER"
ANSWER_WAIT = 12.0  # seconds: under the shortest installed hook timeout (15 s)
CONNECT_WAIT = 0.5
MAX_INPUT = 64 * 1024 * 1024
PACKAGE = Path(__file__).resolve().parent.parent


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "1").strip().lower() not in ("0", "off", "false", "no")


def runtime_dir() -> Path:
    """A folder only this user can enter, for the socket."""
    given = os.environ.get("XDG_RUNTIME_DIR", "")
    if given and os.path.isdir(given) and os.access(given, os.W_OK):
        return Path(given)
    return Path("/tmp") / f"pmem-{os.getuid()}"


def socket_path() -> Path:
    """The server's socket for this interpreter and this copy of the package."""
    key = f"{sys.executable}\0{PACKAGE}".encode()
    return runtime_dir() / f"pmem-hooks-{hashlib.sha256(key).hexdigest()[:16]}.sock"


def request(event: str, data: bytes, **more: object) -> bytes:
    """The request: a JSON header line (event, working directory, environment), then the
    hook's input as it arrived."""
    head = {"event": event, "cwd": os.getcwd(), "env": dict(os.environ), **more}
    return json.dumps(head).encode("utf-8", "surrogateescape") + b"\n" + data


def stop() -> bool:
    """Ask the running hook server to exit; False when none answered."""
    return forward("", b"", stop=True) is not None


def forward(event: str, data: bytes, **more: object) -> tuple[bytes, bytes] | None:
    """The server's answer ``(stdout, stderr)``; ``(b"", b"")`` when it accepted the input
    but did not answer in time; None when no server took it (run the hook here)."""
    path = socket_path()
    if not path.exists():
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(CONNECT_WAIT)
        try:
            conn.connect(str(path))
            conn.settimeout(ANSWER_WAIT)
            conn.sendall(request(event, data, **more))
            conn.shutdown(socket.SHUT_WR)
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

"""Work started in the background: ``python -m MODULE ARGS``, detached from the caller.

The caller (an agent's hook, a CLI command, an API call) never waits for it: the child runs in
its own session with its standard streams on ``/dev/null`` (an agent waits for a hook's output
pipes to close, never for this), and a failure to start is silent (the next caller tries
again). What runs this way: the pmem server, a session's queued summary (``Memory.log``) and
the rest of an index a hook started. ``PMEM_BACKGROUND=0`` turns it off (the work then waits
for the daemon or an explicit command).

The child starts through this module (``python -m planning_memory.background MODULE ARGS``),
which first restores the default signal dispositions: a caller started from ``nohup ... &``
ignores SIGINT and SIGHUP, and a child would inherit that.
"""

from __future__ import annotations

import contextlib
import os
import sys

ENV_SWITCH = "PMEM_BACKGROUND"


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "1").strip().lower() not in ("0", "off", "false", "no")


def detach(module: str, *args: str, cwd: str = "/") -> bool:
    """Start ``python -m module args`` detached; False when background work is off or it
    could not start."""
    if not enabled():
        return False
    import subprocess  # here: most commands start nothing, and the import costs start-up time

    with contextlib.suppress(OSError):
        subprocess.Popen(
            [sys.executable, "-m", __name__, module, *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
            cwd=cwd,
        )
        return True
    return False


def default_signals() -> None:
    """The dispositions a process started from a terminal has: Ctrl-C raises
    KeyboardInterrupt, the other stop signals end it (SIGPIPE stays as Python sets it)."""
    import signal  # here: it imports enum, which a hook's start-up does without

    signal.signal(signal.SIGINT, signal.default_int_handler)
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(signum, signal.SIG_DFL)


def next_request(umask: int) -> None:
    """In the pmem server, before each answer: write with the caller's ``umask``, keep no
    catalog open from the last answer, and of the search indexes kept open between answers
    (``search.hold_open``: a close would checkpoint and sync one each time) none whose file
    is gone (its repository may be)."""
    from planning_memory import longterm, search  # here: the server has them, a hook does not
    from planning_memory.store import use_umask

    use_umask(umask)
    longterm.close_catalogs()
    search.hold_open()
    search.release_gone()


def _run(module: str, *args: str) -> None:
    import runpy

    default_signals()
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    _run(*sys.argv[1:])

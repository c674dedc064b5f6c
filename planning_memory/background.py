"""Work started in the background: ``python -m MODULE ARGS``, detached from the caller.

The caller (an agent's hook, a CLI command, an API call) never waits for it: the child runs in
its own session with its standard streams on ``/dev/null`` (an agent waits for a hook's output
pipes to close, never for this), and a failure to start is silent (the next caller tries
again). What runs this way: the pmem server, a session's queued summary (``Memory.log``) and
the rest of an index a hook started. ``PMEM_BACKGROUND=0`` turns it off (the work then waits
for the daemon or an explicit command).
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
            [sys.executable, "-m", module, *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
            cwd=cwd,
        )
        return True
    return False

"""The pmem server for benchmarks: one of the bench's own, or none at all.

A ``pmem`` command that finds no server runs in its own process and starts one; a benchmark
that times commands says which of the two it measures instead of leaving it to chance.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from planning_memory.agents import hook_client

SWITCH = hook_client.ENV_SWITCH


def own_processes() -> None:
    """Every command this process starts runs in its own process (no server)."""
    os.environ[SWITCH] = "0"


@contextlib.contextmanager
def pmem_server() -> Iterator[None]:
    """A server of the bench's own (its own runtime folder), running and ready, for the
    commands started with ``env(served=True)``; stopped at the end."""
    runtime = Path(tempfile.mkdtemp(prefix="pmb-", dir="/tmp"))
    before = os.environ.get("XDG_RUNTIME_DIR")
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    server = subprocess.Popen(
        [sys.executable, "-m", "planning_memory.agents.hook_server"], start_new_session=True
    )
    try:
        deadline = time.monotonic() + 30
        while not hook_client.ping():
            assert time.monotonic() < deadline, "the pmem server never started"
            time.sleep(0.1)
        yield
    finally:
        hook_client.stop()
        server.wait(timeout=30)
        shutil.rmtree(runtime, ignore_errors=True)
        if before is None:
            os.environ.pop("XDG_RUNTIME_DIR", None)
        else:
            os.environ["XDG_RUNTIME_DIR"] = before


def env(served: bool) -> dict[str, str]:
    """This process's environment, with the server on or off."""
    return {**os.environ, SWITCH: "1" if served else "0"}

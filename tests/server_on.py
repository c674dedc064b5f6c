"""A pytest plugin: run tests with the hook server on, as users have it (``-p server_on``).

The suite's ``conftest`` turns the server off (``PMEM_SERVER=0``: every hook answers in its
own process). Loaded with ``PYTHONPATH=tests pytest -p server_on ...``, this plugin starts one
real hook server for the whole run, in a short private runtime folder (``PMEM_TEST_RUNTIME``
when given, else a new one under ``/tmp``: a socket's path is limited to 107 bytes), and turns
the server on for every test, so each ``pmem hook ...`` a test runs is answered by it. At the
end it stops the server and, when ``PMEM_TEST_REPORT`` names a file, writes there the
server's pid, whether it still answered, and the CPU seconds it spent answering hooks (after
its warm-up), which ``tests/agents/test_server_on.py`` reads. (A server whose package files
change under it exits, as it does for users: the hooks after that answer in their own
process.)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

SERVER = "planning_memory.agents.hook_server"
GIVEN = os.environ.get("PMEM_TEST_RUNTIME")
RUNTIME = GIVEN or tempfile.mkdtemp(prefix="pmr-", dir="/tmp")
ON = {"PMEM_SERVER": "1", "XDG_RUNTIME_DIR": RUNTIME, "PMEM_SERVER_IDLE": "900"}
XDG_HOMES = ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME")
_started: dict[str, float] = {}


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of ``pid`` (from /proc); 0 when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pytest_sessionstart(session: pytest.Session) -> None:
    from planning_memory.agents import hook_client

    os.environ.update(ON)
    home = Path(RUNTIME, "home")  # its warm-up writes nowhere real (each hook brings its own)
    isolated = {name: str(home / name.lower()) for name in XDG_HOMES}
    server = subprocess.Popen(
        [sys.executable, "-m", SERVER],
        env={**os.environ, "HOME": str(home), **isolated},
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while not hook_client.ping():  # listening, and done warming up
        if server.poll() is not None or time.monotonic() > deadline:
            raise pytest.UsageError("server_on: the hook server did not start")
        time.sleep(0.05)
    _started.update(pid=server.pid, cpu=cpu_seconds(server.pid))


@pytest.fixture(autouse=True)
def _server_on(_isolated_home: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """After the suite's own isolation (which turns the server off): on, in the run's folder."""
    for name, value in ON.items():
        monkeypatch.setenv(name, value)
    yield
    spent = cpu_seconds(int(_started["pid"]))  # read after each test: the server may exit
    _started["spent"] = max(_started.get("spent", 0.0), spent - _started["cpu"])


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    from planning_memory.agents import hook_client

    answering = hook_client.ping()
    hook_client.stop()
    if not GIVEN:
        shutil.rmtree(RUNTIME, ignore_errors=True)
    report = os.environ.get("PMEM_TEST_REPORT")
    if report:
        spent = round(_started.get("spent", 0.0), 3)
        facts = {"pid": int(_started.get("pid", 0)), "answering": answering, "cpu_seconds": spent}
        Path(report).write_text(json.dumps(facts), "utf-8")

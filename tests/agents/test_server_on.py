"""The CLI's and the hooks' tests with the hook server on, as users have it: one pytest run in
a process of its own, loading ``tests/server_on.py``, which starts a real hook server that
answers every ``pmem hook`` those tests run as real processes."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
SUITES = ("tests/cli/test_commands.py", "tests/agents/test_claude_code.py")


@pytest.mark.slow
def test_the_cli_and_hook_suites_pass_with_the_hook_server_on(tmp_path: Path) -> None:
    runtime = Path(tempfile.mkdtemp(prefix="pmr-", dir="/tmp"))  # a socket path is short
    report = tmp_path / "server.json"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])),
        "PMEM_TEST_RUNTIME": str(runtime),
        "PMEM_TEST_REPORT": str(report),
    }
    command = [sys.executable, "-m", "pytest", "-p", "server_on", "-p", "no:cacheprovider"]
    try:
        done = subprocess.run(
            [*command, "-n", "0", "-q", *SUITES],
            cwd=TESTS.parent,
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
        )
        assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
        facts = json.loads(report.read_text("utf-8"))
        # idle, the server blocks in accept (no CPU); the suites' hooks cost it 0.5-0.8 s
        assert facts["cpu_seconds"] > 0.1, f"the hook server answered no hooks: {facts}"
    finally:
        with contextlib.suppress(OSError, ValueError, FileNotFoundError):
            os.kill(json.loads(report.read_text("utf-8"))["pid"], signal.SIGKILL)
        shutil.rmtree(runtime, ignore_errors=True)

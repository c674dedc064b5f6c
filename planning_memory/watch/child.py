"""The scan child, both ends: the ``entity`` reaction run in a child process.

A full reconcile, or any scan of a large repository (``plan.scan_in_child``), holds
whole-repository structures; a child gives that memory back to the system when it ends, so the
daemon stays small. The child writes through a recording store and reports the files it wrote,
which the daemon adopts as its own writes.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from planning_memory.errors import PlanningMemoryError
from planning_memory.memory import Memory
from planning_memory.watch import events
from planning_memory.watch.process import ENTRY
from planning_memory.watch.reactions import REACTIONS

POLL_S = 0.25  # how fast a stop request ends a running child


class ScanChildError(PlanningMemoryError):
    """The scan's child process failed."""


def run(root: str, paths: list[str] | None, stop: threading.Event) -> dict[str, Any] | None:
    """Scan ``paths`` (None: everything) in a child; its ``job`` result, or None when ``stop``
    was set first (the child is terminated: the next start reconciles again)."""
    argv = [sys.executable, "-m", ENTRY, "--scan", root]
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=root,
        text=True,
    )  # fmt: skip
    request: str | None = json.dumps({"paths": paths})
    while True:
        try:
            out, err = proc.communicate(request, timeout=POLL_S)
            break
        except subprocess.TimeoutExpired:
            request = None  # sent with the first call
            if stop.is_set():
                proc.terminate()
                proc.communicate()
                return None
    if proc.returncode != 0:
        lines = err.strip().splitlines() or [f"exit code {proc.returncode}"]
        raise ScanChildError(f"scan failed: {lines[-1]}")
    result: dict[str, Any] = json.loads(out)
    return result


def job(start: Path | None, paths: list[str] | None) -> dict[str, Any]:
    """The child's side: the ``entity`` reaction on the memory of ``start``, the files it
    wrote, the files it listed and the child's peak memory."""
    writes = events.WriteLog(events.OwnWrites())
    memory = Memory.open(start, on_write=writes.note)
    report = REACTIONS["entity"](memory, paths)
    return {
        "written": [str(p) for p in writes.take_written()],
        "files_seen": getattr(report, "files_seen", 0),
        "errors": getattr(report, "errors", 0),
        "error_paths": list(getattr(report, "error_paths", ()))[:10],
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }

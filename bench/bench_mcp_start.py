"""``pmem mcp`` start-up as a client sees it: a new process, the ``initialize`` answer, then the
first ``tools/list`` answer (the MCP SDK loaded and serving); ``python -c pass`` in the same
turns as the machine's yardstick.

Each figure is wall time from starting the process, plus the process's CPU time for the whole
run (start to ``tools/list``). Gemini CLI gives a new server 5 s to answer ``initialize``.

Run: ``.venv/bin/python bench/bench_mcp_start.py [--runs 10]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PMEM = str(Path(sys.executable).parent / "pmem")
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_start(cwd: str) -> tuple[float, float, float]:
    """Seconds to the ``initialize`` answer, to the ``tools/list`` answer, and CPU."""
    cpu = children_cpu()
    began = time.perf_counter()
    proc = subprocess.Popen([PMEM, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=cwd)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1
    initialized = time.perf_counter() - began
    proc.stdin.write((json.dumps(INITIALIZED) + "\n" + json.dumps(TOOLS) + "\n").encode())
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 2
    listed = time.perf_counter() - began
    proc.stdin.close()
    proc.wait(timeout=60)
    return initialized, listed, children_cpu() - cpu


def python_pass() -> float:
    began = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pmem-bench-") as tmp:
        subprocess.run([PMEM, "init"], cwd=tmp, check=True, capture_output=True)
        one_start(tmp)  # warm the file cache
        runs, baseline = [], []
        for _ in range(args.runs):
            runs.append(one_start(tmp))
            baseline.append(python_pass())
    ms = lambda values: round(statistics.median(values) * 1000, 1)  # noqa: E731
    print(
        json.dumps(
            {
                "runs": args.runs,
                "initialize_ms_p50": ms([r[0] for r in runs]),
                "initialize_ms_max": round(max(r[0] for r in runs) * 1000, 1),
                "tools_list_ms_p50": ms([r[1] for r in runs]),
                "cpu_ms_p50": ms([r[2] for r in runs]),
                "python_pass_ms_p50": ms(baseline),
                "load": os.getloadavg()[0],
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()

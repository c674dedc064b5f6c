"""MCP round-trip benchmark: ``memory_search`` and ``memory_context`` through the SDK's real
client over stdio, against ``pmem mcp`` running in a repository of 10,000 records.

The records and queries are bench_search.py's (synthetic records with a real word
distribution; queries of 2-4 words from random records). Each figure is the wall time of one
``call_tool`` as the client sees it: JSON-RPC over the pipes, argument validation, opening the
project's memory (done at every call), syncing the index with the files, the work itself and
the reply. The same calls made in-process through ``Memory`` give the share of the protocol.

Run: ``.venv/bin/python bench/bench_mcp.py [--records 10000] [--calls 200]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import bench_search

from planning_memory.core.layout import Layout
from planning_memory.memory import Memory


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def figures(name: str, times: list[float]) -> dict[str, Any]:
    return {
        "what": name,
        "calls": len(times),
        "p50_ms": round(1000 * percentile(times, 0.5), 2),
        "p95_ms": round(1000 * percentile(times, 0.95), 2),
        "max_ms": round(1000 * max(times), 2),
        "mean_ms": round(1000 * statistics.fmean(times), 2),
    }


def setup(root: Path, n: int, rng: random.Random) -> list[str]:
    Memory.init(root)
    records = bench_search.make_records(n, rng)
    bench_search.write_records(Layout.for_repo(root), records)
    t0 = time.perf_counter()
    Memory(root).reindex(code=False)
    print(f"setup: {n} records indexed in {time.perf_counter() - t0:.1f} s", flush=True)
    return bench_search.queries(records, 400, rng)


async def timed(
    calls: list[dict[str, Any]], call: Callable[[dict[str, Any]], Awaitable[Any]]
) -> list[float]:
    times = []
    for arguments in calls:
        t0 = time.perf_counter()
        await call(arguments)
        times.append(time.perf_counter() - t0)
    return times


async def over_mcp(root: Path, qs: list[str], n_calls: int) -> list[dict[str, Any]]:
    pmem = Path(sys.executable).parent / "pmem"
    server = StdioServerParameters(
        command=str(pmem), args=["mcp"], cwd=str(root), env=dict(os.environ)
    )
    t0 = time.perf_counter()
    async with Client(server, read_timeout_seconds=60) as client:
        connect = time.perf_counter() - t0

        async def search(arguments: dict[str, Any]) -> None:
            result = await client.call_tool("memory_search", arguments)
            assert not result.is_error, result.content

        async def context(arguments: dict[str, Any]) -> None:
            result = await client.call_tool("memory_context", arguments)
            assert not result.is_error, result.content

        searches = [{"query": q, "match": "auto"} for q in qs[:n_calls]]
        contexts = [{"task": q} for q in qs[n_calls : 2 * n_calls]]
        await timed(searches[:20], search)  # warm the server and the page cache
        search_times = await timed(searches, search)
        all_times = await timed([{"query": q} for q in qs[:n_calls]], search)
        await timed(contexts[:5], context)
        context_times = await timed(contexts, context)
        floor = await timed([{}] * 50, lambda _a: client.list_tools(cache_mode="bypass"))
    rows = [
        figures("memory_search (match auto) over MCP", search_times),
        figures("memory_search (match all) over MCP", all_times),
        figures("memory_context (budget 1500) over MCP", context_times),
        figures("tools/list over MCP (protocol floor)", floor),
    ]
    rows.append({"what": "server start + initialize", "ms": round(1000 * connect, 1)})
    return rows


def in_process(root: Path, qs: list[str], n_calls: int) -> list[dict[str, Any]]:
    search_times, context_times = [], []
    for q in qs[:n_calls]:
        t0 = time.perf_counter()
        Memory.open(root).search(q, match="auto")
        search_times.append(time.perf_counter() - t0)
    for q in qs[n_calls : 2 * n_calls]:
        t0 = time.perf_counter()
        Memory.open(root).context(q)
        context_times.append(time.perf_counter() - t0)
    return [
        figures("Memory.open().search in-process", search_times),
        figures("Memory.open().context in-process", context_times),
    ]


HOOK_PAYLOADS = {
    "SessionStart": {"source": "startup"},
    "UserPromptSubmit": {"prompt": "fix the error handling in the parser"},
    "PostToolUse": {"tool_name": "Edit", "tool_input": {"file_path": "README.md"}},
}


def hooks(root: Path, runs: int) -> list[dict[str, Any]]:
    """``pmem hook claude-code EVENT`` end to end (a fresh process per call, as Claude Code
    runs it)."""
    pmem = str(Path(sys.executable).parent / "pmem")
    (root / "README.md").write_text("x\n")
    rows = []
    for event, extra in HOOK_PAYLOADS.items():
        data = json.dumps({"session_id": "bench", "cwd": str(root), **extra})
        times = []
        for _ in range(runs + 1):
            t0 = time.perf_counter()
            done = subprocess.run(
                [pmem, "hook", "claude-code", event], input=data, capture_output=True, text=True
            )
            times.append(time.perf_counter() - t0)
            assert done.returncode == 0 and not done.stderr, done.stderr
        rows.append(figures(f"hook {event} (process start included)", times[1:]))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--hook-runs", type=int, default=20)
    args = parser.parse_args()
    rng = random.Random(args.records)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        qs = setup(root, args.records, rng)
        load_before = os.getloadavg()[0]
        rows = anyio.run(over_mcp, root, qs, args.calls)
        rows += in_process(root, qs, args.calls)
        rows += hooks(root, args.hook_runs)
        load_after = os.getloadavg()[0]
    for row in rows:
        print(json.dumps(row))
    print(f"load average: {load_before:.2f} before, {load_after:.2f} after; cpus {os.cpu_count()}")


if __name__ == "__main__":
    main()

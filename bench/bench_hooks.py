"""Benchmark: a Claude Code hook as Claude Code runs it, a whole ``pmem hook claude-code EVENT``
process per call, with the hook server (the default) and without it (``PMEM_SERVER=0``).

A memory of ``--records`` long-term records (and its search index), a session with a
transcript; each event gets the payload Claude Code sends. The server's first hook (which
answers in its own process and starts the server) is left out of its figures, as is the
first call of each event without it (the file cache's warm-up). Last, ten UserPromptSubmit
hooks fired at once while the memory's lock is held (a long scan), with the server running:
the slowest of them against Claude Code's 15 s timeout.

Search is BM25 alone (``PMEM_EMBEDDINGS=0``) unless ``--vectors K``: then the hooks run with
the embedding model, as users have it where it installs (the server keeps it loaded and embeds
each prompt). The first K records are embedded by the model for real (``pmem reindex`` of a
tree of just those); every other record gets one of their vectors with noise
(``bench_search.fill_vectors``), which costs a search the same: embedding 10k records takes
the better part of an hour on two cores.

    .venv/bin/python bench/bench_hooks.py [--records 1000] [--runs 30] [--vectors K]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from planning_memory.agents import hook_client  # before bench_search puts the repo first
from planning_memory.core.layout import Layout
from planning_memory.memory import Memory
from planning_memory.search import semantic
from planning_memory.search.database import Index

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_search
from installed import as_installed

PMEM = str(Path(sys.executable).parent / "pmem")
CLAUDE_ID = "0b5e1f0a-3c9d-4e8a-9f21-6d7c8b9a0e11"
EVENTS: dict[str, dict[str, Any]] = {
    "SessionStart": {"hook_event_name": "SessionStart", "source": "startup"},
    "UserPromptSubmit": {
        "hook_event_name": "UserPromptSubmit",
        "prompt": "fix the error handling in the payment webhook retry",
    },
    "PostToolUse": {
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": "src/app.py", "old_string": "x", "new_string": "y"},
        "tool_response": {"filePath": "src/app.py", "success": True},
    },
    "Stop": {"hook_event_name": "Stop", "stop_hook_active": False},
}


def setup(root: Path, records: int, vectors: int) -> Path:
    mem = Memory.init(root)
    made = bench_search.make_records(records, random.Random(records))
    for record in made:
        mem.store.write_json(mem.layout.record_path(record["type"], record["id"]), record)
    mem.learn_utterance("Always use pnpm, never npm")
    mem.reindex()
    if vectors:
        give_vectors(root, made[:vectors])
    (root / "src").mkdir()
    (root / "src/app.py").write_text("x = 1\n", "utf-8")
    transcript = root / "transcript.jsonl"
    line = {"type": "assistant", "message": {"role": "assistant", "content": "Done."}}
    transcript.write_text(json.dumps(line) + "\n", "utf-8")
    return transcript


def give_vectors(root: Path, embedded: list[dict[str, Any]]) -> None:
    """Vectors for every record of ``root``'s index: ``embedded`` by the model in a tree of
    their own (a ``pmem reindex`` process), the rest filled from those."""
    with tempfile.TemporaryDirectory() as tmp:
        real = Memory.init(Path(tmp))
        for record in embedded:
            real.store.write_json(real.layout.record_path(record["type"], record["id"]), record)
        env = {**os.environ, semantic.ENV: "1", "PMEM_BACKGROUND": "0"}
        subprocess.run([PMEM, "-C", tmp, "reindex", "--no-code"], check=True, env=env)
        with Index.open(Layout.for_repo(root)) as index, Index.open(real.layout) as made:
            filled = bench_search.fill_vectors(index, made, random.Random(len(embedded)))
    print(json.dumps({"vectors": filled, "embedded by the model": len(embedded)}), flush=True)


def run(event: str, data: str, root: Path, env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(
        [PMEM, "hook", "claude-code", event],
        input=data,
        capture_output=True,
        text=True,
        cwd=root,
        env=env,
    )
    took = time.perf_counter() - t0
    assert done.returncode == 0 and not done.stderr, done.stderr
    return took


def measure(root: Path, transcript: Path, runs: int, server: bool) -> list[dict[str, Any]]:
    env = {**os.environ, hook_client.ENV_SWITCH: "1" if server else "0"}
    base = {"session_id": CLAUDE_ID, "cwd": str(root), "transcript_path": str(transcript)}
    if server:  # the first hook starts the server
        run("Stop", json.dumps(base | EVENTS["Stop"]), root, env)
        deadline = time.monotonic() + 30
        while not hook_client.ping():
            assert time.monotonic() < deadline, "the hook server never started"
            time.sleep(0.1)
    rows = []
    for event, extra in EVENTS.items():
        data = json.dumps(base | extra)
        times = [run(event, data, root, env) for _ in range(runs + 1)][1:]
        rows.append(
            {
                "event": event,
                "server": server,
                "p50_ms": round(1000 * statistics.median(times), 1),
                "p95_ms": round(1000 * sorted(times)[int(0.95 * (len(times) - 1))], 1),
                "max_ms": round(1000 * max(times), 1),
            }
        )
    return rows


def parallel_locked(root: Path, transcript: Path, hooks: int = 10) -> dict[str, Any]:
    """``hooks`` UserPromptSubmit hooks at once, the memory's lock held meanwhile."""
    from concurrent.futures import ThreadPoolExecutor

    base = {"session_id": CLAUDE_ID, "cwd": str(root), "transcript_path": str(transcript)}
    data = json.dumps(base | EVENTS["UserPromptSubmit"])
    env = {**os.environ, hook_client.ENV_SWITCH: "1"}

    def one(_: int) -> float:
        t0 = time.perf_counter()
        subprocess.run(
            [PMEM, "hook", "claude-code", "UserPromptSubmit"],
            input=data,
            capture_output=True,
            text=True,
            cwd=root,
            env=env,
            timeout=60,
        )
        return time.perf_counter() - t0

    t0 = time.perf_counter()
    with Memory(root).store.lock(), ThreadPoolExecutor(hooks) as pool:
        times = list(pool.map(one, range(hooks)))
    return {
        "parallel hooks, lock held": hooks,
        "slowest_ms": round(1000 * max(times), 1),
        "median_ms": round(1000 * statistics.median(times), 1),
        "all_done_ms": round(1000 * (time.perf_counter() - t0), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument(
        "--vectors", type=int, default=0, help="run with the model: K records embedded for real"
    )
    args = parser.parse_args()
    as_installed()
    os.environ[semantic.ENV] = "0"  # the set-up's reindex: BM25 (vectors are given after)
    runtime = Path(tempfile.mkdtemp(prefix="pmb-", dir="/tmp"))
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)  # a server of its own
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        transcript = setup(root, args.records, args.vectors)
        os.environ[semantic.ENV] = "1" if args.vectors else "0"
        floor = [0.0] * 11
        for n in range(11):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            floor[n] = time.perf_counter() - t0
        rows = measure(root, transcript, args.runs, server=False)
        rows += measure(root, transcript, args.runs, server=True)
        rows.append(parallel_locked(root, transcript))
        hook_client.stop()
    shutil.rmtree(runtime, ignore_errors=True)
    for row in rows:
        print(json.dumps(row))
    print(
        json.dumps(
            {
                "python -c pass p50_ms": round(1000 * statistics.median(floor[1:]), 1),
                "records": args.records,
                "search": "hybrid (the prompt embedded)" if args.vectors else "BM25 alone",
                "load": os.getloadavg()[0],
                "cpus": os.cpu_count(),
            }
        )
    )


if __name__ == "__main__":
    main()

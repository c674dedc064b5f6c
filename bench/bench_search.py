"""Search and context benchmarks: search latency at 10k and 100k records, index rebuild time,
and the context command end to end (a fresh Python process) at 10k records.

Records are synthetic but use a real word distribution: words drawn (Zipf-like, by their
frequency) from the source of click and markdown-it-py. Record files are written directly
(no fsync) to set up quickly; the rebuild reads them the way the product does.
Queries are 2-4 words picked from random records, so both AND and OR paths are exercised.

Run: ``.venv/bin/python bench/bench_search.py [--sizes 10000,100000] [--queries 300]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from planning_memory.core import codec
from planning_memory.core.layout import Layout
from planning_memory.core.model import new_long_term
from planning_memory.search import ranking as search
from planning_memory.search import upkeep as indexer
from planning_memory.search.database import Index
from planning_memory.store import Store

NOW = datetime(2026, 2, 1, tzinfo=UTC)
TYPES = ["pattern"] * 3 + ["mistake"] * 3 + ["learning", "decision", "discovery", "bugfix"]
CONTEXT_SNIPPET = """
import sys, time
from datetime import datetime, UTC
from pathlib import Path
from planning_memory.context.packer import build_context
from planning_memory.core.layout import Layout
from planning_memory.store import Store
layout = Layout.for_repo(Path(sys.argv[1]))
pack = build_context(layout, Store(layout), sys.argv[2], now=datetime.now(UTC))
sys.stdout.write(pack.text)
"""


def vocabulary() -> tuple[list[str], list[float]]:
    counts: Counter[str] = Counter()
    for name in ("click", "markdown_it"):
        spec = importlib.util.find_spec(name)
        assert spec and spec.submodule_search_locations
        for path in Path(next(iter(spec.submodule_search_locations))).rglob("*.py"):
            counts.update(w.lower() for w in re.findall(r"[A-Za-z]{3,}", path.read_text()))
    words = [w for w, _c in counts.most_common(6000)]
    weights = [counts[w] ** 0.8 for w in words]
    return words, weights


def make_records(n: int, rng: random.Random) -> list[dict[str, object]]:
    words, weights = vocabulary()
    records = []
    for i in range(n):
        rtype = TYPES[i % len(TYPES)]
        prefix = {"pattern": "pat", "mistake": "mis"}.get(rtype, "lrn")
        rid = f"{prefix}_{i:08d}"
        title = " ".join(rng.choices(words, weights, k=rng.randint(3, 7)))
        text = " ".join(rng.choices(words, weights, k=rng.randint(20, 60)))
        created = NOW - timedelta(minutes=rng.randint(0, 60 * 24 * 700))
        extra: dict[str, object] = {"description": text, "tags": rng.sample(words[:50], 2)}
        if rtype == "mistake":
            extra["severity"] = rng.choice(["low", "medium", "medium", "high", "critical"])
            extra["correction"] = " ".join(rng.choices(words, weights, k=10))
        elif rtype not in ("pattern",):
            extra = {"learned": text, "tags": extra["tags"]}
        extra["pinned"] = i % 997 == 0
        records.append(new_long_term(rtype, rid, created, title=title, **extra))
    return records


def write_records(layout: Layout, records: list[dict[str, object]]) -> None:
    for record in records:
        path = layout.record_path(str(record["type"]), str(record["id"]))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(codec.dumps(record))


def queries(records: list[dict[str, object]], n: int, rng: random.Random) -> list[str]:
    out = []
    for record in rng.sample(records, n):
        text = f"{record['title']} {record.get('description') or record.get('learned')}".split()
        out.append(" ".join(rng.sample(text, rng.randint(2, 4))))
    return out


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def bench_size(n: int, n_queries: int, root: Path) -> dict[str, float]:
    rng = random.Random(n)
    layout = Layout.for_repo(root)
    records = make_records(n, rng)
    write_records(layout, records)
    store = Store(layout)
    with Index.open(layout) as index:
        t0 = time.perf_counter()
        indexer.rebuild(index, layout, store, code=False)
        rebuild = time.perf_counter() - t0
        qs = queries(records, n_queries, rng)
        for q in qs[:20]:  # warm the page cache
            search.search(index, q, now=NOW)
        times, cpu = [], []
        for q in qs:
            t0, c0 = time.perf_counter(), time.thread_time()
            search.search(index, q, now=NOW, limit=10)
            times.append(time.perf_counter() - t0)
            cpu.append(time.thread_time() - c0)
        t0 = time.perf_counter()
        indexer.sync(index, layout, store)
        sync_first = time.perf_counter() - t0
        time.sleep(0.2)
        t0 = time.perf_counter()
        indexer.sync(index, layout, store)
        sync_idle = time.perf_counter() - t0
        one = dict(records[0], description="an edited description of the first record")
        path = layout.record_path(str(one["type"]), str(one["id"]))
        path.write_text(codec.dumps(one))
        t0 = time.perf_counter()
        indexer.index_record(index, layout, one)
        update = time.perf_counter() - t0
        size = index.stats()["bytes"]
    return {
        "records": n,
        "rebuild_s": rebuild,
        "search_p50_ms": 1000 * percentile(times, 0.5),
        "search_p95_ms": 1000 * percentile(times, 0.95),
        "search_max_ms": 1000 * max(times),
        "search_cpu_p50_ms": 1000 * percentile(cpu, 0.5),
        "search_cpu_p95_ms": 1000 * percentile(cpu, 0.95),
        "loadavg": os.getloadavg()[0],
        "sync_first_ms": 1000 * sync_first,
        "sync_idle_ms": 1000 * sync_idle,
        "index_record_ms": 1000 * update,
        "index_mb": size / 1e6,
    }


def bench_context_process(root: Path, runs: int = 10) -> dict[str, float]:
    """``build_context`` in a fresh interpreter (process start included), warm index."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    cmd = [sys.executable, "-c", CONTEXT_SNIPPET, str(root), "fix the error handling in the parser"]
    subprocess.run(cmd, env=env, check=True, capture_output=True)  # warm
    times, cpu = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run(cmd, env=env, check=True, capture_output=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append(time.perf_counter() - t0)
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    empty = [sys.executable, "-c", "pass"]
    t0 = time.perf_counter()
    for _ in range(runs):
        subprocess.run(empty, check=True)
    bare = (time.perf_counter() - t0) / runs
    return {
        "context_p50_ms": 1000 * statistics.median(times),
        "context_max_ms": 1000 * max(times),
        "context_cpu_p50_ms": 1000 * statistics.median(cpu),
        "python_bare_ms": 1000 * bare,
        "context_tokens": len(out.stdout.decode()) / 4,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    results = []
    for n in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            row = bench_size(n, args.queries, Path(tmp))
            if n == 10_000:
                row.update(bench_context_process(Path(tmp)))
            results.append(row)
            print(json.dumps(row), flush=True)
    print()
    print(
        f"{'records':>8} {'rebuild s':>10} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} "
        f"{'cpu p50':>8} {'cpu p95':>8} {'MB':>6} {'load':>5}"
    )
    for r in results:
        print(
            f"{int(r['records']):>8} {r['rebuild_s']:>10.2f} {r['search_p50_ms']:>8.2f} "
            f"{r['search_p95_ms']:>8.2f} {r['search_max_ms']:>8.2f} "
            f"{r['search_cpu_p50_ms']:>8.2f} {r['search_cpu_p95_ms']:>8.2f} "
            f"{r['index_mb']:>6.1f} {r['loadavg']:>5.1f}"
        )
    for r in results:
        if "context_p50_ms" in r:
            print(
                f"context end to end at {int(r['records'])} records: p50 "
                f"{r['context_p50_ms']:.0f} ms, max {r['context_max_ms']:.0f} ms, "
                f"cpu p50 {r['context_cpu_p50_ms']:.0f} ms "
                f"(bare python start {r['python_bare_ms']:.0f} ms)"
            )


if __name__ == "__main__":
    main()

"""Search and context benchmarks: search latency at 10k and 100k records, index rebuild time,
and the context command end to end (a fresh Python process) at 10k records.

Records are synthetic but use a real word distribution: words drawn (Zipf-like, by their
frequency) from the source of click and markdown-it-py. Record files are written directly
(no fsync) to set up quickly; the rebuild reads them the way the product does.
Queries are 2-4 words picked from random records, so both AND and OR paths are exercised.

With ``--vectors N`` it measures what the embedding model costs instead, at N records in one
run: the model's load in a fresh process, one query's embedding, search in-process with the
query's vector given (BM25 alone against hybrid), ``Memory.recall`` (what the resident hook
server runs for a prompt, the model loaded), ``Memory.save`` with its vector (the save,
then the index catching up and embedding it), ``pmem reindex`` as a process with the vectors
kept, and the vectors' bytes. The cold ``pmem reindex`` (every vector computed) runs on the
first ``--embedded`` records (default 500) and gives the cost per record: on a 2-core machine
shared with other work, embedding 10k records takes longer than the rest of the run; the
other records get vectors made from those (``fill_vectors``), which cost the same to search.

Run: ``.venv/bin/python bench/bench_search.py [--sizes 10000,100000] [--queries 300]``
or ``.venv/bin/python bench/bench_search.py --vectors 10000 [--queries 100]``.
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
from planning_memory.memory import Memory
from planning_memory.search import ranking as search
from planning_memory.search import semantic, vectors
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


LOAD_SNIPPET = """
import time
t0 = time.perf_counter()
from planning_memory.search import semantic
embedder, problem = semantic.load_embedder()
assert embedder is not None, problem
t1 = time.perf_counter()
embedder.query("warm the engine")
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


class Given:
    """An embedder whose query vectors were computed before the clock started."""

    def __init__(self, vectors_by_text: dict[str, object]) -> None:
        self.vectors = vectors_by_text

    def query(self, text: str) -> object:
        return self.vectors[text]


def timed(run: list[str], env: dict[str, str] | None = None) -> float:
    t0 = time.perf_counter()
    subprocess.run(run, check=True, capture_output=True, env=env)
    return time.perf_counter() - t0


def fill_vectors(index: Index, real: Index, rng: random.Random) -> int:
    """Give every record of ``index`` a vector without the model: the real vectors of
    ``real`` (the same records, embedded) where it has them, else one of them with noise.
    Search, recall and save cost the same whatever the vectors hold; only the cold
    reindex needs the model on every record (measured on ``real``'s records)."""
    np = semantic.numpy()  # one BLAS thread, as the product imports it
    known = dict(real.conn.execute("SELECT key, vec FROM vectors"))
    pool = [np.frombuffer(v, dtype=np.float16).astype(np.float32) for v in known.values()]
    rows = []
    for doc_id, key, title, body, tags in index.conn.execute(
        "SELECT id, key, title, substr(body, 1, ?), tags FROM docs WHERE source = 'record'",
        (vectors.EMBED_CHARS,),
    ):
        vec = known.get(key)
        if vec is None:
            noisy = rng.choice(pool) + np.asarray(
                [rng.gauss(0, 0.02) for _ in range(semantic.DIMENSIONS)], dtype=np.float32
            )
            vec = (noisy / np.linalg.norm(noisy)).astype(np.float16).tobytes()
        rows.append((key, doc_id, vectors.digest(vectors.text_of(title, body, tags)), vec))
    with index.write():
        index.conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", rows)
        epoch = index.get_meta("docs_epoch") or "0"
        index.conn.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('vectors_epoch', ?)", (epoch,)
        )
    return len(rows)


def bench_vectors(n: int, embedded: int, n_queries: int, root: Path) -> dict[str, float]:
    """What the model costs at ``n`` records (see the module docstring); the cold reindex
    embeds ``embedded`` of them (the same records) and gives the cost per record."""
    env = dict(os.environ, PYTHONPATH=str(REPO), PMEM_EMBEDDINGS="1", PMEM_BACKGROUND="0")
    os.environ.update(PMEM_EMBEDDINGS="1", PMEM_BACKGROUND="0")
    rng = random.Random(n)
    records = make_records(n, rng)
    small, big = root / "cold", root / "big"
    for folder, part in ((small, records[:embedded]), (big, records)):
        folder.mkdir()
        Memory.init(folder)
        write_records(Layout.for_repo(folder), part)
    run = [sys.executable, "-m", "planning_memory.cli.run", "-C"]
    reindex_cold = timed([*run, str(small), "reindex", "--no-code"], env)
    layout = Layout.for_repo(big)
    os.environ["PMEM_EMBEDDINGS"] = "0"
    with Index.open(layout) as index:
        indexer.rebuild(index, layout, Store(layout), code=False)
        with Index.open(Layout.for_repo(small)) as real:
            filled = fill_vectors(index, real, rng)
    os.environ["PMEM_EMBEDDINGS"] = "1"
    reindex_warm = timed([*run, str(big), "reindex", "--no-code"], env)
    loads = [
        subprocess.run(
            [sys.executable, "-c", LOAD_SNIPPET],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
        for _ in range(3)
    ]
    embedder, problem = semantic.load_embedder()
    assert embedder is not None, problem
    qs = queries(records, n_queries, rng)
    embeds, given = [], {}
    for q in qs:
        t0 = time.perf_counter()
        given[q] = embedder.query(q)
        embeds.append(time.perf_counter() - t0)
    with Index.open(layout) as index:
        stats = vectors.stats(index)
        for q in qs[:20]:  # the page cache and the vectors' matrix
            search.search(index, q, now=NOW, embedder=Given(given))
        plain, hybrid, plain_cpu, hybrid_cpu = [], [], [], []
        for q in qs:
            t0, c0 = time.perf_counter(), time.thread_time()
            search.search(index, q, now=NOW, limit=10, embedder=None)
            t1, c1 = time.perf_counter(), time.thread_time()
            search.search(index, q, now=NOW, limit=10, embedder=Given(given))
            hybrid.append(time.perf_counter() - t1)
            hybrid_cpu.append(time.thread_time() - c1)
            plain.append(t1 - t0)
            plain_cpu.append(c1 - c0)
    mem = Memory(big)
    recalls: dict[str, list[float]] = {"0": [], "1": [], "cpu0": [], "cpu1": []}
    for q in queries(records, 40, rng):  # as the resident hook server runs a prompt; new
        # texts, so each hybrid recall embeds its prompt
        for flag in ("0", "1"):
            os.environ["PMEM_EMBEDDINGS"] = flag
            t0, c0 = time.perf_counter(), time.process_time()  # the embedding thread too
            mem.recall(q)
            recalls[flag].append(time.perf_counter() - t0)
            recalls[f"cpu{flag}"].append(time.process_time() - c0)
    os.environ["PMEM_EMBEDDINGS"] = "1"
    saves, caught_up = [], []
    for i in range(20):
        t0 = time.perf_counter()
        mem.save(f"Benchmark note {i} about retries", "pattern", description=qs[i])
        t1 = time.perf_counter()
        with mem.index():  # syncs the new file and embeds it
            pass
        saves.append(t1 - t0)
        caught_up.append(time.perf_counter() - t0)
    return {
        "records": n,
        "loadavg": os.getloadavg()[0],
        "model_load_ms": 1000 * statistics.median(float(a) for a, _b in loads),
        "first_query_ms": 1000 * statistics.median(float(b) for _a, b in loads),
        "query_embed_p50_ms": 1000 * percentile(embeds, 0.5),
        "search_bm25_p50_ms": 1000 * percentile(plain, 0.5),
        "search_hybrid_p50_ms": 1000 * percentile(hybrid, 0.5),
        "search_hybrid_p95_ms": 1000 * percentile(hybrid, 0.95),
        "search_bm25_cpu_p50_ms": 1000 * percentile(plain_cpu, 0.5),
        "search_hybrid_cpu_p50_ms": 1000 * percentile(hybrid_cpu, 0.5),
        "recall_bm25_p50_ms": 1000 * percentile(recalls["0"], 0.5),
        "recall_hybrid_p50_ms": 1000 * percentile(recalls["1"], 0.5),
        "recall_bm25_cpu_p50_ms": 1000 * percentile(recalls["cpu0"], 0.5),
        "recall_hybrid_cpu_p50_ms": 1000 * percentile(recalls["cpu1"], 0.5),
        "save_p50_ms": 1000 * percentile(saves, 0.5),
        "save_with_vector_p50_ms": 1000 * percentile(caught_up, 0.5),
        "reindex_cold_records": embedded,
        "reindex_cold_s": reindex_cold,
        "reindex_cold_per_record_ms": 1000 * reindex_cold / embedded,
        "reindex_warm_s": reindex_warm,
        "vectors": stats["vectors"],
        "vectors_filled_without_model": filled - embedded,
        "vector_mb": stats["vector_bytes"] / 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--vectors", type=int, default=0, help="the model's costs at N records")
    parser.add_argument("--embedded", type=int, default=500, help="records the cold reindex embeds")
    args = parser.parse_args()
    if args.vectors:
        with tempfile.TemporaryDirectory() as tmp:
            costs = bench_vectors(args.vectors, args.embedded, args.queries, Path(tmp))
            print(json.dumps(costs, indent=1))
        return
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

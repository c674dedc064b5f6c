"""What keeping recent queries (``contextual.recentQueries``) costs a search.

``Memory.search`` end to end (open the index, sync it with the files, rank, and with the
log on: append one line to ``contextual/recent-queries.jsonl``) over a memory of synthetic
records (``bench_search``'s generator), with ``recentQueries`` 20 and 0 alternating query by
query in the same run, so machine load hits both alike. Wall and CPU time per search.

Run: ``.venv/bin/python bench/bench_recent.py [--records 10000] [--queries 300]``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_search import make_records, percentile, queries, write_records

from planning_memory.core.layout import Layout
from planning_memory.memory import Memory


def configure(root: Path, keep: int) -> Memory:
    path = root / ".planning" / "memory-config.json"
    config = json.loads(path.read_text())
    config["memory"].setdefault("contextual", {})["recentQueries"] = keep
    path.write_text(json.dumps(config))
    return Memory(root)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    rng = random.Random(args.records)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        Memory.init(root)
        records = make_records(args.records, rng)
        write_records(Layout.for_repo(root), records)
        Memory(root).reindex(code=False)
        qs = queries(records, args.queries, rng)
        on, off = configure(root, 20), configure(root, 20)
        off.config["memory"]["contextual"]["recentQueries"] = 0  # this facade keeps none
        for q in qs[:20]:  # warm the page cache, both paths
            on.search(q)
            off.search(q)
        times: dict[str, list[float]] = {"on": [], "off": []}
        cpu: dict[str, list[float]] = {"on": [], "off": []}
        for i, q in enumerate(qs):
            order = [("on", on), ("off", off)] if i % 2 else [("off", off), ("on", on)]
            for name, mem in order:
                t0, c0 = time.perf_counter(), time.process_time()
                mem.search(q)
                times[name].append(time.perf_counter() - t0)
                cpu[name].append(time.process_time() - c0)
        log = root / ".planning" / "memory" / "contextual" / "recent-queries.jsonl"
        size = sum(p.stat().st_size for p in log.parent.glob(log.name + "*"))
        kept = len(on.contextual.recent_queries())
    for name in ("off", "on"):
        print(
            f"recentQueries {'20' if name == 'on' else ' 0'}: search p50 "
            f"{1000 * percentile(times[name], 0.5):.2f} ms, p95 "
            f"{1000 * percentile(times[name], 0.95):.2f} ms, cpu p50 "
            f"{1000 * percentile(cpu[name], 0.5):.2f} ms"
        )
    print(f"{args.records} records, {len(qs)} queries each; log {size} bytes, {kept} kept")


if __name__ == "__main__":
    main()

"""Benchmark: `pmem context` end to end, process start included, at 10k records (the
target: <= 300 ms), plus `pmem search` and `pmem show` as processes on the same tree.

    .venv/bin/python bench/bench_context.py [--records N] [--runs N] [--no-write]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_validate import WORDS, build_tree, machine, run_timed
from server import own_processes

PMEM = str(Path(sys.executable).parent / "pmem")
DOC = Path(__file__).resolve().parent.parent / "docs" / "bench-context.md"
TARGET_MS = 300


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--no-write", action="store_true", help="do not update the docs")
    args = parser.parse_args()
    own_processes()  # its figures are of commands in their own process
    rng = random.Random(7)
    rows = []
    with tempfile.TemporaryDirectory(prefix="pm-bench-context-") as tmp:
        build_tree(Path(tmp), args.records)
        run_timed([PMEM, "-C", tmp, "reindex", "--no-code"])
        for name, argv in (
            ("pmem context TASK", ["context"]),
            ("pmem search QUERY --json", ["search", "--json"]),
        ):
            walls, cpus = [], []
            for _ in range(args.runs):
                words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 6)))
                cmd = [PMEM, "-C", tmp, *argv[:1], words, *argv[1:]]
                wall, cpu, out = run_timed(cmd)
                assert out.strip(), cmd
                walls.append(wall * 1000)
                cpus.append(cpu * 1000)
            rows.append((name, walls, cpus))
    lines = [f"records: {args.records:,}; {args.runs} runs each, a fresh process per run"]
    for name, walls, cpus in rows:
        p95 = sorted(walls)[int(0.95 * (len(walls) - 1))]
        lines.append(
            f"{name:<26} p50 {statistics.median(walls):6.0f} ms  p95 {p95:6.0f} ms  "
            f"best {min(walls):6.0f} ms  CPU p50 {statistics.median(cpus):6.0f} ms"
        )
    best = statistics.median(rows[0][1])
    verdict = "meets" if best <= TARGET_MS else "MISSES"
    lines.append(f"target pmem context <= {TARGET_MS} ms (p50): {verdict}")
    lines.append(f"machine: {machine()}")
    print("\n".join(lines))
    if not args.no_write:
        stamp = datetime.now(UTC).strftime("%Y-%m-%d")
        DOC.write_text(
            f"# `pmem context` end to end\n\nMeasured {stamp} by "
            "`bench/bench_context.py`.\n\n```\n" + "\n".join(lines) + "\n```\n",
            "utf-8",
        )


if __name__ == "__main__":
    main()
